import type { TransportName } from '../../server/transports/transport.js'
import { uwsUnavailable } from '../../server/transports/uws-listen.js'

/** Every transport the server has. */
export const TRANSPORTS: readonly TransportName[] = Object.freeze(['uws', 'node'])

/** The newest Node.js line the pinned uWebSockets.js build has a binary for. */
const LAST_UWS_LINE = 20

const unavailable = uwsUnavailable()
const line = Number(process.versions.node.split('.')[0])

// Where the build has a binary (Node 16 to 20), uws not running is a fault, never a skip: a
// broken install or override must fail the suite, with or without CI.
if (unavailable !== undefined && line <= LAST_UWS_LINE) {
  throw new Error(`the uws transport must run on Node.js ${line}: ${unavailable.reason}`)
}

/**
 * Why the uws transport cannot run on this Node.js line (its uWebSockets.js build has no binary
 * for it), the one line its tests skip with; `undefined` where it runs.
 */
export const UWS_UNAVAILABLE: string | undefined =
  unavailable === undefined
    ? undefined
    : `uws cannot run on Node.js ${process.versions.node}: ${unavailable.reason}`

/** The transports that run on this Node.js line. */
export const TRANSPORTS_HERE: readonly TransportName[] = Object.freeze(
  TRANSPORTS.filter((transport) => transport === 'node' || unavailable === undefined),
)

/** `false` when `transport` runs on this Node.js line, else why not: a test's `skip` option. */
export function skipOn(transport: TransportName): string | false {
  return transport === 'uws' ? (UWS_UNAVAILABLE ?? false) : false
}
