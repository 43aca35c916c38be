import { STATUS_CODES } from 'node:http'
import type { Request, Response, Server } from 'hyper-express'
import type { ApiRequest } from '../api-request.js'
import type { ApiResponse } from '../api-response.js'
import { refusalResponse, type ApiHandler, type TransportRefusal } from '../handler.js'
import {
  FAILED_ANSWER,
  MAX_BODY_BYTES,
  MAX_HEADER_BYTES,
  MAX_UWS_BODY_TIMEOUT_MS,
  TRANSPORT_DEFAULTS,
  type RunningTransport,
  type Transport,
  type TransportOptions,
} from './transport.js'
import { AnswerBatch } from './answer-batch.js'
import { Drain } from './drain.js'
import { InFlight } from './in-flight.js'
import { RefusedBody } from './refused-body.js'
import { ServingQueue } from './serving-queue.js'
import { readBody, TIMED_OUT, TOO_LARGE } from './uws-body.js'
import { hasSoundFraming, headBytes } from './uws-request-head.js'
import { Utf8Scratch } from './utf8-scratch.js'
import { ExchangeRequest, type Exchange } from './uws-exchange.js'
import {
  closeConnections,
  listenExclusively,
  loadHyperExpress,
  type HyperExpressModule,
  type UwsListenSocket,
} from './uws-listen.js'
import { writeStream } from './write-stream.js'

type RawResponse = Response['raw']

/**
 * The default transport: hyper-express on uWebSockets.js, the fast path. Only its routing shell
 * is used: one catch-all route feeds the handler, the raw body is read here within the cap (never
 * the framework's lenient `json()`), the peer address comes from the socket (never its
 * `trust_proxy`), and the handler's response is written to the uWS response in one corked call,
 * together with the other answers of its slice of the event loop: requests are served in the
 * order they came (see `ServingQueue` and `AnswerBatch`).
 *
 * A body larger than the cap (announced or read), or a head over `MAX_HEADER_BYTES` with a body
 * to follow, is read to its end and dropped, within `DRAIN_BYTES` and `requestTimeoutMs`, then
 * answered (413 or 431) and the connection closed: a client still sending reads its answer
 * rather than a reset. A body that does not arrive within `requestTimeoutMs` is answered at once (408) and the
 * connection closed; so is framing that could smuggle a request (400: more than one
 * Content-Length or Transfer-Encoding, a length that is not digits, a coding other than
 * `chunked`; RFC 9112, 6.3), whose body has no length to trust.
 *
 * Pipelining: this uWS build closes a connection, without an answer, when a request arrives on it
 * before the previous one is answered, and a route answered asynchronously always is. So no write
 * is carried out before its connection has shown it is not pipelining: a request other than GET and
 * HEAD waits for the rest of the read that brought it to be parsed (in the queue, served in the
 * check phase of the event loop at the earliest) and is dropped, undone, when uWS closed its
 * connection meanwhile; and its connection is not read again until it is answered, so that a
 * request pipelined behind it in a later read waits, and is answered in its turn.
 *
 * Methods: this uWS build routes nine (GET, POST, HEAD, PUT, DELETE, CONNECT, OPTIONS, TRACE,
 * PATCH; its `any` is these) and closes the connection, without an answer, on any other
 * (`PROPFIND`, `FOO`); the node transport answers those with 405 and `Allow`.
 *
 * It listens on its port alone (`listenExclusively`): a port in use fails with `EADDRINUSE`, as
 * over node:http. `close()` closes the connections left idle too, so that a process that closed
 * its server can exit at once rather than when their clients time out.
 *
 * @throws MissingPeerDependencyError when hyper-express is not installed.
 * @throws TransportUnavailableError when hyper-express or its native uWebSockets.js binary
 *   cannot load on this platform.
 * @throws Error as node:http's when it cannot listen (`EADDRINUSE`).
 */
export const listenHyperExpress: Transport = async (handler, options) => {
  const hyperExpress = await loadHyperExpress()
  return new HyperExpressTransport(handler, options, hyperExpress).listen(options)
}

class HyperExpressTransport {
  readonly #handler: ApiHandler
  readonly #hyperExpress: HyperExpressModule
  readonly #server: Server
  #socket: UwsListenSocket | undefined
  #closed: Promise<void> | undefined
  readonly #cap: number
  readonly #uploads: TransportOptions['uploads']
  readonly #timeoutMs: number
  readonly #inFlight = new InFlight<Exchange>()
  readonly #answers = new AnswerBatch()
  /**
   * Requests served in the order they came (`ServingQueue`): reads, and writes once the read that
   * brought them has been parsed (see the class).
   */
  readonly #queue = new ServingQueue<Exchange>(
    (exchange) => this.#serveQueued(exchange),
    this.#answers,
  )
  readonly #drain = new Drain()
  readonly #utf8 = new Utf8Scratch()
  #closing = false
  // The response being written by #flush: uWS runs a cork callback synchronously, so these
  // fields pass it its arguments without a closure per request.
  #raw: RawResponse | undefined
  #out: ApiResponse = FAILED_ANSWER
  #head = false
  #close = false
  #resume = false
  readonly #flush = (): void => this.#writeCorked()

  constructor(handler: ApiHandler, options: TransportOptions, hyperExpress: HyperExpressModule) {
    this.#handler = handler
    this.#hyperExpress = hyperExpress
    this.#cap = options.maxBodyBytes ?? MAX_BODY_BYTES
    this.#uploads = options.uploads
    this.#timeoutMs = options.requestTimeoutMs ?? TRANSPORT_DEFAULTS.requestTimeoutMs
    if (!(this.#timeoutMs > 0 && this.#timeoutMs <= MAX_UWS_BODY_TIMEOUT_MS)) {
      throw new TypeError(
        `requestTimeoutMs must be from 1 to ${MAX_UWS_BODY_TIMEOUT_MS} over uws: uWebSockets.js closes a stalled body after 8 s without an answer`,
      )
    }
    this.#server = new hyperExpress.Server({
      // The cap is enforced here, with the API's own 413; the framework's would answer first.
      max_body_length: Number.MAX_SAFE_INTEGER,
      auto_close: false,
      ...(options.tls !== undefined && {
        cert_file_name: options.tls.cert,
        key_file_name: options.tls.key,
      }),
    })
    this.#server.any('/*', (req: Request, res: Response) => this.#accept(req, res))
  }

  async listen(options: TransportOptions): Promise<RunningTransport> {
    const { host, port, tls } = options
    this.#socket = await listenExclusively(this.#hyperExpress, this.#server, host, port, tls)
    return {
      port: this.#hyperExpress.compressors.us_socket_local_port(this.#socket),
      close: (graceMs) => (this.#closed ??= this.#shutdown(graceMs ?? TRANSPORT_DEFAULTS.graceMs)),
    }
  }

  #accept(req: Request, res: Response): void {
    const exchange: Exchange = {
      req,
      res,
      receivedAt: performance.now(),
      slot: -1,
      held: false,
      body: undefined,
    }
    exchange.slot = this.#inFlight.add(exchange)
    const headers = req.headers
    const length = headers['content-length']
    const coding = headers['transfer-encoding']
    const method = req.method
    // GET and HEAD change nothing: they join the queue at once, the fast path.
    const write = method !== 'GET' && method !== 'HEAD'
    const framed = length !== undefined || coding !== undefined
    if (framed && !hasSoundFraming(req)) {
      this.#refuse(exchange, 'framing', false)
    } else if (headBytes(req, headers) > MAX_HEADER_BYTES) {
      this.#refuse(exchange, 'headers_too_large', framed && length !== '0')
    } else if (length === undefined ? coding === undefined : length === '0') {
      if (write) this.#hold(exchange, undefined)
      else this.#queue.add(exchange)
    } else if (Number(length) > this.#capOf(exchange)) {
      // The body is read and dropped (within a bound), then the answer closes the connection.
      const rest = new RefusedBody(
        () => void this.#dispatch(exchange, undefined, 'too_large', true),
        this.#timeoutMs,
      )
      res.raw.onData((chunk: ArrayBuffer, last: boolean) => rest.take(chunk.byteLength, last))
    } else {
      void this.#read(exchange, coding === undefined ? Number(length) : undefined, write)
    }
  }

  /** The body cap of a request: the uploads' for a POST to their path, else the server's. */
  #capOf(exchange: Exchange): number {
    const uploads = this.#uploads
    const req = exchange.req
    if (uploads === undefined || req.method !== 'POST') return this.#cap
    return req.path === uploads.path ? uploads.maxBytes : this.#cap
  }

  async #read(exchange: Exchange, length: number | undefined, write: boolean): Promise<void> {
    const body = await readBody(exchange, length, write, this.#capOf(exchange), this.#timeoutMs)
    if (exchange.res.completed) {
      // The client went away meanwhile: nothing to answer.
      this.#settle(exchange)
    } else if (body === TIMED_OUT) {
      void this.#dispatch(exchange, undefined, 'timeout', true)
    } else if (body === TOO_LARGE) {
      void this.#dispatch(exchange, undefined, 'too_large', true)
    } else if (write) {
      this.#hold(exchange, body)
    } else {
      void this.#dispatch(exchange, body.byteLength === 0 ? undefined : body, undefined, false)
    }
  }

  /**
   * Holds a write until the read that brought it has been parsed, with its connection paused
   * (see the class): if uWS closed the connection meanwhile, for a request pipelined behind it,
   * the write is dropped without being carried out; else it is served in its turn.
   */
  #hold(exchange: Exchange, body: Uint8Array | undefined): void {
    if (!exchange.held) {
      exchange.res.raw.pause()
      exchange.held = true
    }
    exchange.body = body === undefined || body.byteLength === 0 ? undefined : body
    this.#queue.add(exchange)
  }

  #serveQueued(exchange: Exchange): void {
    // A client that went away while its request waited (or closed by uWS, for a request pipelined
    // behind a write) is not served.
    if (exchange.res.completed) this.#settle(exchange)
    else void this.#dispatch(exchange, exchange.body, undefined, false)
  }

  /**
   * Answers a request refused before the handler, and closes its connection: once its body has
   * been read and dropped (`RefusedBody`) when its framing is sound, at once otherwise, since a
   * body of an untrusted length is no body to wait for.
   */
  #refuse(exchange: Exchange, refusal: TransportRefusal, body: boolean): void {
    const { req, res } = exchange
    const response = refusalResponse(refusal)
    const head = req.method === 'HEAD'
    const answer = (): void =>
      this.#answers.add(() => {
        if (!res.completed) this.#write(exchange, response, head, true)
        this.#settle(exchange)
      })
    if (body) {
      const rest = new RefusedBody(answer, this.#timeoutMs)
      res.raw.onData((chunk: ArrayBuffer, last: boolean) => rest.take(chunk.byteLength, last))
    } else {
      res.raw.onData(ignoreChunk)
      answer()
    }
  }

  async #dispatch(
    exchange: Exchange,
    body: Uint8Array | undefined,
    bodyError: ApiRequest['bodyError'],
    early: boolean,
  ): Promise<void> {
    const { req, res } = exchange
    let response: ApiResponse
    try {
      response = await this.#handler(new ExchangeRequest(exchange, body, bodyError))
    } catch {
      response = FAILED_ANSWER
    }
    // After an early answer the unread rest of the body must not be taken for a next request.
    const head = req.method === 'HEAD'
    const close = early || this.#closing
    if (response.stream !== undefined && !head) {
      const stream = response.stream
      this.#answers.add(() => {
        if (res.completed) this.#settle(exchange)
        else void this.#stream(exchange, response, stream, close)
      })
      return
    }
    this.#answers.add(() => {
      // A client that went away meanwhile is marked completed by hyper-express.
      if (!res.completed) this.#write(exchange, response, head, close)
      this.#settle(exchange)
    })
  }

  /**
   * Writes a streamed body (an export): the status and headers, then the chunks (`writeStream`),
   * each in a corked write of its own, the next only once uWS has sent what it buffered
   * (`onWritable`). The exchange is settled, for a graceful stop, when the stream ends.
   */
  async #stream(
    exchange: Exchange,
    response: ApiResponse,
    stream: AsyncIterable<Uint8Array>,
    close: boolean,
  ): Promise<void> {
    const res = exchange.res
    const raw = res.raw
    // From here on the answer is this method's: hyper-express must not write, and the abort
    // handler is ours.
    res.completed = true
    let aborted = false
    let wake: (() => void) | undefined
    raw.onAborted(() => {
      aborted = true
      if (wake !== undefined) setImmediate(wake)
    })
    raw.cork(() => {
      if (exchange.held && !close) raw.resume()
      raw.writeStatus(statusLine(response.status))
      for (const name in response.headers) raw.writeHeader(name, response.headers[name]!)
    })
    try {
      await writeStream(stream, {
        gone: () => aborted,
        write: (chunk) => {
          let sent = true
          raw.cork(() => (sent = raw.write(chunk)))
          return sent
        },
        writable: async () => {
          await new Promise<void>((resolve) => {
            wake = resolve
            raw.onWritable(() => {
              // A macrotask: a promise settled in this uWS callback would wait for the next
              // JavaScript callback to run its reactions.
              setImmediate(resolve)
              return true
            })
          })
          wake = undefined
        },
        end: () => raw.cork(() => raw.end(NO_BYTES, close)),
        cut: () => raw.close(),
      })
    } finally {
      this.#settle(exchange)
    }
  }

  #settle(exchange: Exchange): void {
    this.#inFlight.release(exchange.slot, exchange)
    if (this.#inFlight.size === 0) this.#drain.idle()
  }

  #write(exchange: Exchange, response: ApiResponse, head: boolean, close: boolean): void {
    const res = exchange.res
    res.completed = true
    this.#raw = res.raw
    this.#out = response
    this.#head = head
    this.#close = close
    this.#resume = exchange.held && !close
    this.#raw.cork(this.#flush)
    this.#raw = undefined
  }

  #writeCorked(): void {
    const raw = this.#raw!
    // Before the answer ends the response, after which uWS allows no call on it.
    if (this.#resume) raw.resume()
    const { status, headers, body } = this.#out
    raw.writeStatus(statusLine(status))
    for (const name in headers) raw.writeHeader(name, headers[name]!)
    if (body === undefined || this.#head) {
      // No length for a 204 or a HEAD answer: this uWS build closes the connection after
      // endWithoutBody(length), so a length is given only when it closes anyway.
      if (this.#close) raw.endWithoutBody(0, true)
      else raw.endWithoutBody()
    } else {
      raw.end(typeof body === 'string' ? this.#utf8.encode(body) : body, this.#close)
    }
  }

  async #shutdown(graceMs: number): Promise<void> {
    this.#closing = true
    this.#server.close(this.#socket)
    for (const [slot, exchange] of this.#inFlight.entries()) {
      if (exchange.res.completed) this.#inFlight.release(slot, exchange)
    }
    await this.#drain.wait(this.#inFlight.size, graceMs)
    for (const [slot, exchange] of this.#inFlight.entries()) {
      this.#inFlight.release(slot, exchange)
      exchange.res.close()
    }
    // Every connection left is idle (kept alive by its client): closed now, not when the
    // client or uWS's idle timeout gives up on it, which would hold the process for seconds.
    closeConnections(this.#server)
  }
}

const NO_BYTES = new Uint8Array(0)

function ignoreChunk(): void {}

const STATUS_LINES = new Map<number, string>()

function statusLine(status: number): string {
  let line = STATUS_LINES.get(status)
  if (line === undefined) {
    line = `${status} ${STATUS_CODES[status] ?? 'Unknown'}`
    STATUS_LINES.set(status, line)
  }
  return line
}
