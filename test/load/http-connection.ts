import { Agent, request } from 'node:http'

/** One answered (or failed) request, timed from the moment it was issued. */
export interface Exchange {
  /** HTTP status; 0 when the request failed without an answer. */
  readonly status: number
  /** Milliseconds from issuing the request to the end of its response. */
  readonly ms: number
  /** Headers of the answer (empty when it failed). */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>
  /** The response body, read only when the caller asked for it. */
  readonly body: string | undefined
  /** The error of a request that got no answer (reset, refused, timed out). */
  readonly error: Error | undefined
}

/** What to send. */
export interface Outgoing {
  readonly method: string
  readonly path: string
  readonly headers?: Readonly<Record<string, string>>
  readonly json?: unknown
  /** Whether the body of the answer is needed; otherwise it is drained unread. */
  readonly readBody: boolean
}

/**
 * One keep-alive HTTP/1.1 connection to the server on 127.0.0.1, as one API client of the load
 * run holds it: requests issued while one is in flight wait in the agent's queue (one socket, no
 * pipelining), and that wait counts in their time, as it would for a real client.
 */
export class HttpConnection {
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 1, maxFreeSockets: 1 })
  readonly #port: number
  readonly #timeoutMs: number

  constructor(port: number, timeoutMs: number) {
    this.#port = port
    this.#timeoutMs = timeoutMs
  }

  /** Sends `out`; never rejects: a failure comes back as status 0 with its error. */
  send(out: Outgoing): Promise<Exchange> {
    const started = performance.now()
    const payload = out.json === undefined ? undefined : JSON.stringify(out.json)
    const headers: Record<string, string> = { ...out.headers }
    if (payload !== undefined) {
      headers['content-type'] = 'application/json'
      headers['content-length'] = String(Buffer.byteLength(payload))
    }
    return new Promise((resolve) => {
      let settled = false
      const settle = (exchange: Omit<Exchange, 'ms'>): void => {
        if (settled) return
        settled = true
        resolve({ ...exchange, ms: performance.now() - started })
      }
      const fail = (error: Error): void =>
        settle({ status: 0, headers: {}, body: undefined, error })
      const req = request(
        {
          host: '127.0.0.1',
          port: this.#port,
          method: out.method,
          path: out.path,
          headers,
          agent: this.#agent,
          timeout: this.#timeoutMs,
        },
        (res) => {
          const status = res.statusCode ?? 0
          if (!out.readBody && status < 400) {
            res.resume()
            res.on('end', () =>
              settle({ status, headers: res.headers, body: undefined, error: undefined }),
            )
          } else {
            res.setEncoding('utf8')
            let body = ''
            res.on('data', (chunk: string) => (body += chunk))
            res.on('end', () => settle({ status, headers: res.headers, body, error: undefined }))
          }
          res.on('error', fail)
        },
      )
      req.on('timeout', () => req.destroy(new Error(`no answer within ${this.#timeoutMs} ms`)))
      req.on('error', fail)
      req.end(payload)
    })
  }

  /** Closes the idle connection. */
  close(): void {
    this.#agent.destroy()
  }
}
