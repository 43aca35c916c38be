import type { PeerPackage } from '../../core/missing-peer-dependency-error.js'
import { KYSELY_PEER } from '../relational/relational-peers.js'

/**
 * What the SQLite adapter needs the host to install, with its `peerDependencies` ranges in
 * `package.json` (a test holds the two equal).
 */
export const SQLITE_PEERS: readonly PeerPackage[] = Object.freeze([
  Object.freeze({ name: 'better-sqlite3', range: '^12.9.0' }),
  KYSELY_PEER,
])
