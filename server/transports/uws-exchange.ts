import type { Request, Response } from 'hyper-express'
import type { ApiRequest } from '../api-request.js'

/** One request taken from uWS, until it is settled. */
export interface Exchange {
  readonly req: Request
  readonly res: Response
  readonly receivedAt: number
  /** Its place in the transport's `InFlight`. */
  slot: number
  /** Whether its connection is paused, not read, until its answer is written (a write). */
  held: boolean
  /** The body of a write, once read whole. */
  body: Uint8Array | undefined
}

/**
 * The handler's view of an exchange. The peer address is asked of uWS only when the handler
 * reads it (for the login limits): uWS answers with a new `ArrayBuffer`, whose allocation and
 * release cost 1.7–3.4 µs, up to a tenth of a get by id. The handler reads it before its first
 * `await`, while the response is alive; a response that is gone by then has no address to give.
 */
export class ExchangeRequest implements ApiRequest {
  readonly method: string
  readonly path: string
  readonly query: string
  readonly headers: Readonly<Record<string, string | undefined>>
  readonly body: Uint8Array | undefined
  readonly bodyError: ApiRequest['bodyError']
  readonly receivedAt: number
  readonly #res: Response
  #address: string | undefined

  constructor(exchange: Exchange, body: Uint8Array | undefined, error: ApiRequest['bodyError']) {
    const req = exchange.req
    this.method = req.method
    this.path = req.path
    this.query = req.path_query ?? ''
    this.headers = req.headers
    this.body = body
    this.bodyError = error
    this.receivedAt = exchange.receivedAt
    this.#res = exchange.res
  }

  /** The socket peer (never hyper-express's `req.ip`, which believes X-Forwarded-For). */
  get remoteAddress(): string {
    // uWS writes IPv6 and mapped IPv4 in full; the handler canonicalises it.
    this.#address ??= this.#res.completed
      ? ''
      : Buffer.from(this.#res.raw.getRemoteAddressAsText()).toString('latin1')
    return this.#address
  }
}
