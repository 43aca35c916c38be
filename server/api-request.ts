/**
 * One HTTP request as a transport hands it to the handler: plain data, no streams, no framework
 * objects, so that any transport (hyper-express, node:http, a test) can build it cheaply.
 */
export interface ApiRequest {
  /** Upper-case method: `GET`, `POST`, … */
  readonly method: string
  /** The path without the query string, exactly as received (not decoded). */
  readonly path: string
  /** The raw query string without the leading `?`; empty when there is none. */
  readonly query: string
  /** Header values by lower-case name. */
  readonly headers: Readonly<Record<string, string | undefined>>
  /** The raw body, already read within the size cap; `undefined` when none was sent. */
  readonly body: Uint8Array | undefined
  /**
   * Set by the transport when the body could not be read: `too_large` when it went over the cap
   * (the handler answers 413, D12; the transport stopped keeping bytes as soon as the cap was
   * passed), `timeout` when it did not arrive in time (408).
   */
  readonly bodyError?: 'too_large' | 'timeout' | undefined
  /**
   * The socket peer's address, as the transport reports it. The handler reads it only for the
   * operations limited per client address (login and refresh), and before its first `await`, so
   * a transport may work it out on demand (a getter) while still inside the callback that
   * handed the request over.
   */
  readonly remoteAddress: string
  /** `performance.now()` when the transport received the request, for the logged duration. */
  readonly receivedAt?: number | undefined
}
