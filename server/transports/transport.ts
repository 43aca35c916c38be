import type { ApiResponse } from '../api-response.js'
import type { ApiHandler } from '../handler.js'

/** The largest request body the server reads (D12); a larger one is answered with 413. */
export const MAX_BODY_BYTES = 1024 * 1024

/** Names of the transports: `uws` (hyper-express on uWebSockets.js, the default) and `node` (node:http). */
export type TransportName = 'uws' | 'node'

/** Certificate and private key files for HTTPS (D26), PEM encoded. */
export interface TlsFiles {
  /** Path of the certificate (chain) file. */
  readonly cert: string
  /** Path of the private key file. */
  readonly key: string
}

/** What every transport needs to listen. */
export interface TransportOptions {
  /** The address to listen on: `127.0.0.1`, `::`, … */
  readonly host: string
  /** 0 picks a free port. */
  readonly port: number
  /** Serve HTTPS with these files; plain HTTP without. */
  readonly tls?: TlsFiles | undefined
  /** Body cap in bytes. Default `MAX_BODY_BYTES`. */
  readonly maxBodyBytes?: number | undefined
  /** Time for a whole request (headers and body) to arrive, against slow clients. Default 30 s. */
  readonly requestTimeoutMs?: number | undefined
  /** Time for the request headers to arrive. Default 10 s. */
  readonly headersTimeoutMs?: number | undefined
}

/** A listening transport. */
export interface RunningTransport {
  /** The port actually bound (useful with port 0). */
  readonly port: number
  /**
   * Stops accepting connections, lets requests in flight finish (answered with
   * `Connection: close`), and resolves when they have, or after `graceMs`, when the stragglers
   * are cut off.
   */
  close(graceMs?: number): Promise<void>
}

/** Starts a transport that feeds every request to `handler`. */
export type Transport = (
  handler: ApiHandler,
  options: TransportOptions,
) => Promise<RunningTransport>

/** Defaults shared by the transports. */
export const TRANSPORT_DEFAULTS = Object.freeze({
  requestTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  graceMs: 10_000,
})

/** What a transport answers when the handler itself fails, which it is written never to do. */
export const FAILED_ANSWER: ApiResponse = Object.freeze({
  status: 500,
  headers: Object.freeze({
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
  }),
  body: '{"error":"internal_error","message":"An unexpected error occurred.","code":500}',
})
