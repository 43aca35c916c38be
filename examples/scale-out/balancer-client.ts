/**
 * Requests to the balancer from one client address: a loopback address of the client's own
 * (any 127.x.y.z is this machine), so that the balancer, and through it the instances, see a
 * client other than the balancer itself.
 */
import { request } from 'node:http'

/** One answer, and which instance gave it (the balancer's `X-Served-By`). */
export interface Answer {
  readonly status: number
  readonly servedBy: string
  readonly headers: Readonly<Record<string, string>>
  readonly json: Record<string, unknown> | undefined
}

/** What a request carries besides its method and path. */
export interface Outgoing {
  readonly token?: string
  readonly body?: unknown
  readonly headers?: Readonly<Record<string, string>>
}

/** A client of the balancer at `baseUrl`, connecting from `address`. */
export class BalancerClient {
  readonly address: string
  readonly #url: URL

  constructor(baseUrl: string, address: string) {
    this.#url = new URL(baseUrl)
    this.address = address
  }

  /** Sends one request on a connection of its own; rejects after 10 s without an answer. */
  send(method: string, path: string, outgoing: Outgoing = {}): Promise<Answer> {
    const body = outgoing.body === undefined ? undefined : JSON.stringify(outgoing.body)
    const headers: Record<string, string> = { ...outgoing.headers }
    if (outgoing.token !== undefined) headers['authorization'] = `Bearer ${outgoing.token}`
    if (body !== undefined) headers['content-type'] = 'application/json'
    return new Promise((resolve, reject) => {
      const outgoingRequest = request(
        {
          host: this.#url.hostname,
          port: this.#url.port,
          method,
          path,
          headers,
          localAddress: this.address,
          agent: false,
          timeout: 10_000,
        },
        (response) => {
          let text = ''
          response.setEncoding('utf8')
          response.on('data', (chunk: string) => (text += chunk))
          response.on('end', () => {
            const flat: Record<string, string> = {}
            for (const [name, value] of Object.entries(response.headers)) {
              if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value
            }
            resolve({
              status: response.statusCode ?? 0,
              servedBy: flat['x-served-by'] ?? '?',
              headers: flat,
              json: flat['content-type']?.startsWith('application/json')
                ? (JSON.parse(text) as Record<string, unknown>)
                : undefined,
            })
          })
        },
      )
      outgoingRequest.on('timeout', () =>
        outgoingRequest.destroy(new Error(`${method} ${path}: no answer`)),
      )
      outgoingRequest.on('error', reject)
      outgoingRequest.end(body)
    })
  }
}
