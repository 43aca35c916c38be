import type { PeerPackage } from '../../core/missing-peer-dependency-error.js'

/**
 * Kysely, the query builder of both SQL adapters, which the host installs with the adapter's
 * driver: its `peerDependencies` range in `package.json` (a test holds the two equal).
 */
export const KYSELY_PEER: PeerPackage = Object.freeze({ name: 'kysely', range: '~0.28.18' })
