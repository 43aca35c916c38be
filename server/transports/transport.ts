import type { ApiResponse } from '../api-response.js'
import type { ApiHandler } from '../handler.js'

/** The largest request body the server reads (D12); a larger one is answered with 413. */
export const MAX_BODY_BYTES = 1024 * 1024

/**
 * The most bytes of request target, header names and header values a request may have (the
 * bytes node:http counts against its `maxHeaderSize`); a larger head is answered with 431. The
 * uWebSockets.js build holds at most 4 KiB of a head that arrives in more than one read, and
 * closes the connection past that, without an answer; 3.5 KiB leaves room, within those 4 KiB,
 * for the request line's and the fields' separators.
 */
export const MAX_HEADER_BYTES = 3.5 * 1024

/**
 * The most header fields a request may have; more are answered with 431 over node:http. The
 * uWebSockets.js build reads at most 48 (and never hands over a request with more).
 */
export const MAX_HEADER_FIELDS = 48

/**
 * The longest `requestTimeoutMs` the uws transport takes: the uWebSockets.js build closes a
 * connection whose body arrives slower than 16 KiB/s for 10 s (8 to 12 s with its timer's
 * granularity), without an answer; the transport's 408 must come first.
 */
export const MAX_UWS_BODY_TIMEOUT_MS = 7_000

/**
 * How much of a refused body (413, or 431 with a body to follow) a transport still reads and
 * drops before it answers and closes, and for no longer than a body has to arrive
 * (`requestTimeoutMs`). A client that writes its whole body before it reads (most do) would
 * otherwise find the connection reset under it, its answer lost with the bytes the server left
 * unread (RFC 9112, 9.6). 16 MiB lets a body of 16 times the cap end on a fast link; past it, or
 * past the time, the connection is closed anyway, so that an endless body costs a bounded read.
 */
export const DRAIN_BYTES = 16 * 1024 * 1024

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
  /**
   * 0 picks a free port. A port another socket listens on fails as node:http does
   * (`EADDRINUSE`), on every transport: none shares a port.
   */
  readonly port: number
  /** Serve HTTPS with these files; plain HTTP without. */
  readonly tls?: TlsFiles | undefined
  /** Body cap in bytes. Default `MAX_BODY_BYTES`. */
  readonly maxBodyBytes?: number | undefined
  /**
   * A path whose POST bodies have a cap of their own: the files of import jobs (D39), larger
   * than any JSON body. Default: none.
   */
  readonly uploads?: { readonly path: string; readonly maxBytes: number } | undefined
  /**
   * Time for a request's body to arrive once its headers have, against slow clients: then 408
   * `request_timeout` and the connection closed, on both transports. Default 5 s; at most
   * `MAX_UWS_BODY_TIMEOUT_MS` over uws.
   */
  readonly requestTimeoutMs?: number | undefined
  /**
   * Time for the request headers to arrive (node transport: 408 `request_timeout`). Default
   * 10 s. The uWebSockets.js build has its own, 8 to 12 s, and closes without an answer.
   */
  readonly headersTimeoutMs?: number | undefined
}

/** A listening transport. */
export interface RunningTransport {
  /** The port actually bound (useful with port 0). */
  readonly port: number
  /**
   * Stops accepting connections, lets requests in flight finish (answered with
   * `Connection: close`), and resolves when they have, or after `graceMs`, when the stragglers
   * are cut off. Keep-alive connections left idle are closed too, so that nothing holds the
   * process once it resolves.
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
  requestTimeoutMs: 5_000,
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
