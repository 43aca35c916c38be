import { readFile } from 'node:fs/promises'
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import type { Duplex } from 'node:stream'
import type { ApiRequest } from '../api-request.js'
import type { ApiResponse } from '../api-response.js'
import { refusalResponse, type ApiHandler } from '../handler.js'
import { AnswerBatch } from './answer-batch.js'
import { Drain } from './drain.js'
import { refusalOf, requestLine } from './node-parser-error.js'
import { rawResponse } from './raw-response.js'
import { RefusedBody } from './refused-body.js'
import { ServingQueue } from './serving-queue.js'
import {
  FAILED_ANSWER,
  MAX_BODY_BYTES,
  MAX_HEADER_BYTES,
  MAX_HEADER_FIELDS,
  TRANSPORT_DEFAULTS,
  type RunningTransport,
  type Transport,
  type TransportOptions,
} from './transport.js'
import { writeStream, type StreamTarget } from './write-stream.js'

/**
 * The node:http transport (node:https with TLS files): no native dependency, for platforms where
 * uWebSockets.js cannot load. Bodies are read up to the cap; past it (or announced past it), and
 * after more than `MAX_HEADER_FIELDS` header fields (431), the rest of the body is read and
 * dropped within `DRAIN_BYTES` and `requestTimeoutMs` before the answer closes the connection,
 * so that a client still sending reads its answer rather than a reset. A body that has not
 * arrived `requestTimeoutMs` after its headers is answered with a 408, as over uws. What Node's
 * parser refuses before there is a request (malformed HTTP or ambiguous framing, a head over
 * `MAX_HEADER_BYTES`, headers slower than `headersTimeoutMs`) is answered in the standard error
 * body too (400, 431, 408), and the connection half-closed, then closed once the client has
 * stopped sending (within the same bounds); a method that parser does not know (`FOO`), and a
 * CONNECT, are answered by the handler there, as every other method is (405 with `Allow` on a
 * known path, 404 elsewhere). Requests read whole are served in the order they
 * came, a slice of the event loop at a time, and the answers of a slice written together (see
 * `ServingQueue` and `AnswerBatch`).
 */
export const listenNodeHttp: Transport = async (handler, options) => {
  const tls =
    options.tls === undefined
      ? undefined
      : { cert: await readFile(options.tls.cert), key: await readFile(options.tls.key) }
  return new NodeHttpTransport(handler, options, tls).listen(options.port, options.host)
}

/** A request read whole, waiting in the transport's `ServingQueue`. */
interface Queued {
  readonly req: IncomingMessage
  readonly res: ServerResponse
  readonly body: Uint8Array | undefined
  readonly receivedAt: number
}

class NodeHttpTransport {
  readonly #handler: ApiHandler
  readonly #cap: number
  readonly #uploads: TransportOptions['uploads']
  readonly #bodyTimeoutMs: number
  readonly #server: ReturnType<typeof createHttpServer>
  #inFlight = 0
  readonly #answers = new AnswerBatch()
  /** Requests read whole, served in the order they came (`ServingQueue`). */
  readonly #queue = new ServingQueue<Queued>(
    ({ req, res, body, receivedAt }) => void this.#dispatch(req, res, body, undefined, receivedAt),
    this.#answers,
  )
  readonly #drain = new Drain()
  #closing = false
  readonly #onClose = (): void => {
    if (--this.#inFlight === 0) this.#drain.idle()
  }

  constructor(
    handler: ApiHandler,
    options: TransportOptions,
    tls: { readonly cert: Buffer; readonly key: Buffer } | undefined,
  ) {
    this.#handler = handler
    this.#cap = options.maxBodyBytes ?? MAX_BODY_BYTES
    this.#uploads = options.uploads
    this.#bodyTimeoutMs = options.requestTimeoutMs ?? TRANSPORT_DEFAULTS.requestTimeoutMs
    const headersTimeout = options.headersTimeoutMs ?? TRANSPORT_DEFAULTS.headersTimeoutMs
    const serverOptions = {
      // Node's whole-request limit only backs up the body timer of #collect and the reading of a
      // refused body after it (#dropRest), which answer first.
      requestTimeout: headersTimeout + 2 * this.#bodyTimeoutMs + 1_000,
      headersTimeout,
      keepAliveTimeout: 5_000,
      // How often Node checks the two timeouts above; finer than its 30 s default.
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(headersTimeout / 4))),
      // Node refuses a head of `maxHeaderSize` bytes or more; MAX_HEADER_BYTES are allowed.
      maxHeaderSize: MAX_HEADER_BYTES + 1,
      // Node keeps this many fields and drops the rest: one more than allowed tells #accept.
      maxHeadersCount: MAX_HEADER_FIELDS + 1,
      noDelay: true,
    }
    this.#server =
      tls === undefined
        ? createHttpServer(serverOptions)
        : createHttpsServer({ ...serverOptions, cert: tls.cert, key: tls.key })
    this.#server.on('request', (req: IncomingMessage, res: ServerResponse) =>
      this.#accept(req, res),
    )
    this.#server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) =>
      this.#refuse(error, socket),
    )
    // Without a listener Node closes a CONNECT's connection without a word.
    this.#server.on('connect', (req: IncomingMessage, socket: Duplex) => {
      void this.#answerBare(req.method ?? 'CONNECT', req.url ?? '', req.headers, socket)
    })
    this.#server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
      // Refusing an oversized body before the client sends it, rather than after.
      if (!(Number(req.headers['content-length']) > this.#capOf(req))) res.writeContinue()
      this.#accept(req, res)
    })
  }

  async listen(port: number, host: string): Promise<RunningTransport> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject)
      this.#server.listen(port, host, () => {
        this.#server.off('error', reject)
        resolve()
      })
    })
    const bound = (this.#server.address() as AddressInfo).port
    return { port: bound, close: (graceMs) => this.#close(graceMs ?? TRANSPORT_DEFAULTS.graceMs) }
  }

  #accept(req: IncomingMessage, res: ServerResponse): void {
    const receivedAt = performance.now()
    this.#inFlight++
    res.once('close', this.#onClose)
    const headers = req.headers
    const length = headers['content-length']
    const coding = headers['transfer-encoding']
    if (coding !== undefined && coding.trim().toLowerCase() !== 'chunked') {
      // Node frames `gzip, chunked` by its last coding and hands the body over still coded;
      // as over uws, a coding other than chunked alone is refused (RFC 9112, 6.1), at once.
      const refused = refusalResponse('framing')
      this.#answers.add(() => this.#write(res, refused, true))
    } else if (req.rawHeaders.length > 2 * MAX_HEADER_FIELDS) {
      const refused = refusalResponse('headers_too_large')
      this.#dropRest(req, () => this.#answers.add(() => this.#write(res, refused, true)))
    } else if (length === undefined ? headers['transfer-encoding'] === undefined : length === '0') {
      this.#queue.add({ req, res, body: undefined, receivedAt })
    } else if (Number(length) > this.#capOf(req)) {
      const refuse = (): void => void this.#dispatch(req, res, undefined, 'too_large', receivedAt)
      // A client that asked to be told before it sends (100-continue) is told at once.
      if (headers.expect?.toLowerCase() === '100-continue') refuse()
      else this.#dropRest(req, refuse)
    } else {
      this.#collect(req, res, receivedAt)
    }
  }

  /** The body cap of `req`: the uploads' for a POST to their path, else the server's. */
  #capOf(req: IncomingMessage): number {
    const uploads = this.#uploads
    if (uploads === undefined || req.method !== 'POST') return this.#cap
    const url = req.url ?? ''
    const mark = url.indexOf('?')
    return (mark === -1 ? url : url.slice(0, mark)) === uploads.path ? uploads.maxBytes : this.#cap
  }

  #collect(req: IncomingMessage, res: ServerResponse, receivedAt: number): void {
    const cap = this.#capOf(req)
    const chunks: Buffer[] = []
    let size = 0
    let refused = false
    const timer = setTimeout(() => {
      refused = true
      chunks.length = 0
      void this.#dispatch(req, res, undefined, 'timeout', receivedAt)
    }, this.#bodyTimeoutMs).unref()
    req.on('data', (chunk: Buffer) => {
      if (refused) return
      size += chunk.length
      if (size > cap) {
        refused = true
        clearTimeout(timer)
        chunks.length = 0
        this.#dropRest(req, () => void this.#dispatch(req, res, undefined, 'too_large', receivedAt))
      } else {
        chunks.push(chunk)
      }
    })
    req.on('end', () => {
      if (!refused) {
        clearTimeout(timer)
        const body = size === 0 ? undefined : Buffer.concat(chunks, size)
        this.#queue.add({ req, res, body, receivedAt })
      }
    })
    // A client that leaves mid-body ends nothing: only its timer remains, and it must not run.
    req.once('close', () => clearTimeout(timer))
  }

  /**
   * Reads and drops the rest of a refused body (`RefusedBody`), then runs `answer`, which closes
   * the connection: once the body has ended, the client reads its answer rather than a reset.
   */
  #dropRest(req: IncomingMessage, answer: () => void): void {
    const rest = new RefusedBody(answer, this.#bodyTimeoutMs)
    req.on('data', (chunk: Buffer) => rest.take(chunk.length, false))
    req.once('end', () => rest.end())
    // A client that left has nothing more to send, nor to read.
    req.once('close', () => rest.end())
    req.resume()
  }

  async #dispatch(
    req: IncomingMessage,
    res: ServerResponse,
    body: Uint8Array | undefined,
    bodyError: ApiRequest['bodyError'],
    receivedAt: number,
  ): Promise<void> {
    const url = req.url ?? '/'
    const mark = url.indexOf('?')
    let response: ApiResponse
    try {
      response = await this.#handler({
        method: req.method ?? 'GET',
        path: mark === -1 ? url : url.slice(0, mark),
        query: mark === -1 ? '' : url.slice(mark + 1),
        headers: req.headers as Record<string, string | undefined>,
        body,
        bodyError,
        remoteAddress: req.socket.remoteAddress ?? '',
        receivedAt,
      })
    } catch {
      response = FAILED_ANSWER
    }
    this.#answers.add(() => this.#write(res, response, bodyError !== undefined))
  }

  #write(res: ServerResponse, response: ApiResponse, refusedBody: boolean): void {
    if (res.destroyed || res.headersSent) return
    // A refused body may still be arriving: close rather than wait for its end (RFC 9110, 15.5.14).
    if (this.#closing || refusedBody) res.shouldKeepAlive = false
    if (response.stream !== undefined) {
      res.writeHead(response.status, response.headers)
      if (res.req.method === 'HEAD') res.end()
      else void writeStream(response.stream, targetOf(res))
      return
    }
    if (response.body !== undefined)
      res.setHeader('content-length', Buffer.byteLength(response.body))
    res.writeHead(response.status, response.headers)
    res.end(response.body)
  }

  /**
   * Answers what Node's parser refused (`clientError`) in the standard error body, then closes
   * the connection, as Node's default does with a bare status line. A request refused before
   * its headers were complete has no response object: the answer goes to the socket. One
   * refused in its body (a Transfer-Encoding Node cannot frame) has one, not yet answered: the
   * answer goes through it, and the handler's is dropped. When an earlier request of the
   * connection still waits for its answer (pipelining), which must come first, the connection
   * is closed without a word, which a client reads as a refusal.
   */
  #refuse(error: NodeJS.ErrnoException, socket: Duplex): void {
    // `_httpMessage` is the connection's response in progress, as Node's own handler checks it.
    const pending = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy()
      return
    }
    if (pending === null || pending === undefined) {
      // A method Node's parser does not know is the handler's to answer (405 with Allow on a
      // known path, 404 elsewhere), as every method is over HTTP (RFC 9110, 9.1).
      const line = error.code === 'HPE_INVALID_METHOD' ? requestLine(error) : undefined
      if (line === undefined) {
        this.#closeAfter(socket, rawResponse(refusalResponse(refusalOf(error))))
      } else {
        void this.#answerBare(line.method, line.target, {}, socket)
      }
    } else if (!pending.headersSent && !pending.req.complete) {
      this.#write(pending, refusalResponse(refusalOf(error)), true)
    } else {
      socket.destroy()
    }
  }

  /**
   * Answers, through the handler, a request Node hands over without a response object (CONNECT,
   * or a method its parser does not know), on the bare socket, and closes the connection.
   */
  async #answerBare(
    method: string,
    target: string,
    headers: IncomingMessage['headers'],
    socket: Duplex,
  ): Promise<void> {
    const mark = target.indexOf('?')
    let response: ApiResponse
    try {
      response = await this.#handler({
        method,
        path: mark === -1 ? target : target.slice(0, mark),
        query: mark === -1 ? '' : target.slice(mark + 1),
        headers: headers as Record<string, string | undefined>,
        body: undefined,
        remoteAddress: (socket as Duplex & { remoteAddress?: string }).remoteAddress ?? '',
        receivedAt: performance.now(),
      })
    } catch {
      response = FAILED_ANSWER
    }
    if (socket.writable) this.#closeAfter(socket, rawResponse(response))
    else socket.destroy()
  }

  /**
   * Writes `answer` on a bare socket and half-closes it, then reads and drops what the client
   * still sends (`RefusedBody`) until it closes too: a socket closed with bytes unread is reset,
   * and the answer lost with them. Node's parser, done with the connection, is given nothing.
   */
  #closeAfter(socket: Duplex, answer: Buffer): void {
    socket.removeAllListeners('data')
    const rest = new RefusedBody(() => socket.destroy(), this.#bodyTimeoutMs)
    socket.on('data', (chunk: Buffer) => rest.take(chunk.length, false))
    socket.once('end', () => rest.end())
    socket.end(answer)
    socket.resume()
  }

  async #close(graceMs: number): Promise<void> {
    this.#closing = true
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()))
    this.#server.closeIdleConnections()
    await this.#drain.wait(this.#inFlight, graceMs)
    this.#server.closeAllConnections()
    await closed
  }
}

/** A node:http response as `writeStream` writes to it: `drain` tells it may take more. */
function targetOf(res: ServerResponse): StreamTarget {
  return {
    gone: () => res.destroyed,
    write: (chunk) => res.write(chunk),
    writable: () =>
      new Promise<void>((resolve) => {
        const done = (): void => {
          res.off('drain', done)
          res.off('close', done)
          resolve()
        }
        res.on('drain', done)
        res.on('close', done)
      }),
    end: () => res.end(),
    cut: () => res.destroy(),
  }
}
