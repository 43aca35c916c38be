import { readFile } from 'node:fs/promises'
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import type { ApiRequest } from '../api-request.js'
import type { ApiResponse } from '../api-response.js'
import type { ApiHandler } from '../handler.js'
import { AnswerBatch } from './answer-batch.js'
import { Drain } from './drain.js'
import {
  FAILED_ANSWER,
  MAX_BODY_BYTES,
  TRANSPORT_DEFAULTS,
  type RunningTransport,
  type Transport,
  type TransportOptions,
} from './transport.js'

/**
 * The node:http transport (node:https with TLS files): no native dependency, for platforms where
 * uWebSockets.js cannot load. Node's own `headersTimeout` and `requestTimeout` cut off slow
 * clients with a 408; bodies are read up to the cap and a 413 is answered as soon as it is passed,
 * the rest being discarded by Node as it arrives. Answers of one turn of the event loop are written
 * together (see `AnswerBatch`).
 */
export const listenNodeHttp: Transport = async (handler, options) => {
  const tls =
    options.tls === undefined
      ? undefined
      : { cert: await readFile(options.tls.cert), key: await readFile(options.tls.key) }
  return new NodeHttpTransport(handler, options, tls).listen(options.port, options.host)
}

class NodeHttpTransport {
  readonly #handler: ApiHandler
  readonly #cap: number
  readonly #server: ReturnType<typeof createHttpServer>
  #inFlight = 0
  readonly #answers = new AnswerBatch()
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
    const requestTimeout = options.requestTimeoutMs ?? TRANSPORT_DEFAULTS.requestTimeoutMs
    const headersTimeout = Math.min(
      options.headersTimeoutMs ?? TRANSPORT_DEFAULTS.headersTimeoutMs,
      requestTimeout,
    )
    const serverOptions = {
      requestTimeout,
      headersTimeout,
      keepAliveTimeout: 5_000,
      // How often Node checks the two timeouts above; finer than its 30 s default.
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(headersTimeout / 4))),
      noDelay: true,
    }
    this.#server =
      tls === undefined
        ? createHttpServer(serverOptions)
        : createHttpsServer({ ...serverOptions, cert: tls.cert, key: tls.key })
    this.#server.on('request', (req: IncomingMessage, res: ServerResponse) =>
      this.#accept(req, res),
    )
    this.#server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
      // Refusing an oversized body before the client sends it, rather than after.
      if (!(Number(req.headers['content-length']) > this.#cap)) res.writeContinue()
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
    if (length === undefined ? headers['transfer-encoding'] === undefined : length === '0') {
      void this.#dispatch(req, res, undefined, undefined, receivedAt)
    } else if (Number(length) > this.#cap) {
      void this.#dispatch(req, res, undefined, 'too_large', receivedAt)
    } else {
      this.#collect(req, res, receivedAt)
    }
  }

  #collect(req: IncomingMessage, res: ServerResponse, receivedAt: number): void {
    const chunks: Buffer[] = []
    let size = 0
    let refused = false
    req.on('data', (chunk: Buffer) => {
      if (refused) return
      size += chunk.length
      if (size > this.#cap) {
        refused = true
        chunks.length = 0
        void this.#dispatch(req, res, undefined, 'too_large', receivedAt)
      } else {
        chunks.push(chunk)
      }
    })
    req.on('end', () => {
      if (!refused) {
        const body = size === 0 ? undefined : Buffer.concat(chunks, size)
        void this.#dispatch(req, res, body, undefined, receivedAt)
      }
    })
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
    if (response.body !== undefined)
      res.setHeader('content-length', Buffer.byteLength(response.body))
    res.writeHead(response.status, response.headers)
    res.end(response.body)
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
