import type { BeneficiaryService } from '../core/beneficiary-service.js'
import { createHandler, type HandlerLogger } from './handler.js'
import type { ReadinessCheck } from './readiness.js'
import type { MetricsOptions } from './metrics/metrics-endpoint.js'
import { listenHyperExpress } from './transports/hyper-express-transport.js'
import { listenNodeHttp } from './transports/node-http-transport.js'
import type { TlsFiles, Transport, TransportName } from './transports/transport.js'
import type { Tracing } from './tracing/tracing.js'

/** The default cap of an import job's file (D39): 64 MiB, some 200,000 rows. */
export const DEFAULT_IMPORT_MAX_BYTES = 64 * 1024 * 1024
/** Options of `startServer`. Only `service` is required. */
export interface StartServerOptions {
  /** The service to expose; the caller owns it and its storage. */
  readonly service: BeneficiaryService
  /** `uws` (hyper-express, the default) or `node` (node:http, no native dependency). */
  readonly transport?: TransportName | undefined
  /** Default `127.0.0.1`. */
  readonly host?: string | undefined
  /** Default 8080; 0 picks a free port. */
  readonly port?: number | undefined
  /** Serve HTTPS with these PEM files (D26). */
  readonly tls?: TlsFiles | undefined
  /** Trusted proxies whose `X-Forwarded-For` is read (D21). Default: none. */
  readonly trustProxy?: readonly string[] | undefined
  /** Prefix of the API; must equal the service's `basePath`. Default `/v3`. */
  readonly basePath?: string | undefined
  /** One JSON line per request goes here (a pino logger). Default: none. */
  readonly logger?: HandlerLogger | undefined
  /** Parts `/readyz` reports as `degraded` while they fail (D31). Default: none. */
  readonly readiness?: readonly ReadinessCheck[] | undefined
  /**
   * Prometheus metrics: counted for every request and served at `GET /metrics` (outside the
   * base path, not rate limited), to anybody or only with a bearer token. Default: none, and
   * `/metrics` is a 404.
   */
  readonly metrics?: MetricsOptions | undefined
  /**
   * Time for a request's body to arrive once its headers have; then 408 `request_timeout` on
   * both transports. Default 5 s; at most 7 s over uws (`MAX_UWS_BODY_TIMEOUT_MS`).
   */
  readonly requestTimeoutMs?: number | undefined
  /** Time for the request headers to arrive (node transport; 408 after). Default 10 s. */
  readonly headersTimeoutMs?: number | undefined
  /** Body cap in bytes. Default 1 MiB (D12). */
  readonly maxBodyBytes?: number | undefined
  /** Cap of the file of an import job, `POST {basePath}/imports` (D39). Default 64 MiB. */
  readonly importMaxBytes?: number | undefined
  /**
   * Serve the API reference page at `/docs`: Swagger UI over the OpenAPI document, from the
   * `swagger-ui-dist` package, which the host installs. Default: false.
   */
  readonly docs?: boolean | undefined
  /**
   * Origins whose browser scripts may call the API (CORS, off by default): exact origins such
   * as `https://app.example.org`, or `*` for any. Preflights are answered from the route table.
   */
  readonly corsOrigins?: readonly string[] | undefined
  /**
   * OpenTelemetry tracing from `startTracing`: a span per request, named by its route
   * template, continuing the trace of an incoming `traceparent`. Wrap the storage and the
   * rate-limit store with the same `Tracing` for their child spans. Default: none, and no
   * request pays for it.
   */
  readonly tracing?: Tracing | undefined
}

/** A listening server. */
export interface RunningServer {
  /** The port bound. */
  readonly port: number
  /** The transport serving the requests. */
  readonly transport: TransportName
  /** `http://host:port` or `https://host:port`. */
  readonly url: string
  /**
   * Stops accepting connections and waits for requests in flight, at most `graceMs`
   * (default 10 s), then closes every connection left, idle keep-alive ones included, so the
   * process can exit at once. Does not close the service's storage: its owner does.
   */
  close(graceMs?: number): Promise<void>
}

const TRANSPORTS: Readonly<Record<TransportName, Transport>> = {
  uws: listenHyperExpress,
  node: listenNodeHttp,
}

/**
 * Serves the /v3 API of `service` over HTTP or HTTPS.
 *
 * @example
 * const server = await startServer({ service, transport: 'node', port: 0 })
 * console.log(`listening on ${server.url}`)
 * await server.close()
 *
 * @throws MissingPeerDependencyError when the `uws` transport is asked for and hyper-express is
 *   not installed (an optional peer dependency, with an `overrides` entry: see docs/embedding.md).
 * @throws TransportUnavailableError when the `uws` transport cannot load on this platform.
 * @throws Error as node:http's, on either transport, when it cannot listen: `EADDRINUSE` for a
 *   port in use by any process (the uws transport never shares a port).
 * @throws Error naming the package when `docs` is on and `swagger-ui-dist` is not installed.
 * @throws TypeError for a malformed `basePath`, `trustProxy` or `corsOrigins` entry, or a `requestTimeoutMs`
 *   the transport cannot keep.
 */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const transportName = options.transport ?? 'uws'
  const transport = TRANSPORTS[transportName]
  if (transport === undefined) throw new TypeError(`unknown transport: ${String(transportName)}`)
  const handler = createHandler(options.service, {
    ...(options.basePath !== undefined && { basePath: options.basePath }),
    ...(options.trustProxy !== undefined && { trustProxy: options.trustProxy }),
    ...(options.logger !== undefined && { logger: options.logger }),
    ...(options.readiness !== undefined && { readiness: options.readiness }),
    ...(options.metrics !== undefined && { metrics: options.metrics }),
    ...(options.docs !== undefined && { docs: options.docs }),
    ...(options.corsOrigins !== undefined && { corsOrigins: options.corsOrigins }),
    ...(options.tracing !== undefined && { tracing: options.tracing }),
  })
  const host = options.host ?? '127.0.0.1'
  const running = await transport(handler, {
    host,
    port: options.port ?? 8080,
    tls: options.tls,
    requestTimeoutMs: options.requestTimeoutMs,
    headersTimeoutMs: options.headersTimeoutMs,
    maxBodyBytes: options.maxBodyBytes,
    uploads: {
      path: `${options.basePath ?? '/v3'}/imports`,
      maxBytes: options.importMaxBytes ?? DEFAULT_IMPORT_MAX_BYTES,
    },
  })
  const scheme = options.tls === undefined ? 'http' : 'https'
  const urlHost = host.includes(':') ? `[${host}]` : host
  return {
    port: running.port,
    transport: transportName,
    url: `${scheme}://${urlHost}:${running.port}`,
    close: (graceMs) => running.close(graceMs),
  }
}
