import type { TransportName } from './transport.js'

/**
 * A transport cannot run on this platform, typically because the native uWebSockets.js binary
 * behind hyper-express does not load (the pinned build covers Node 16–20 on common platforms:
 * not 22 or 24, where `beneficiaries serve` falls back to node:http unless told `--transport uws`).
 * The message says why and how to choose the node:http transport instead.
 */
export class TransportUnavailableError extends Error {
  readonly transport: TransportName
  /** The loader's own first line of explanation. */
  readonly reason: string

  constructor(transport: TransportName, reason: string, options?: { cause?: unknown }) {
    super(
      `The ${transport} transport (hyper-express on uWebSockets.js) cannot load on Node ` +
        `${process.versions.node} (${process.platform}-${process.arch}): ${reason}. ` +
        'Use node:http instead: --transport node (or TRANSPORT=node), or transport: ' +
        "'node' in startServer; or run the server on a Node.js line the build supports.",
      options,
    )
    this.name = 'TransportUnavailableError'
    this.transport = transport
    this.reason = reason
  }
}
