/**
 * The standalone HTTP server of the beneficiary service: the /v3 API over a
 * `BeneficiaryService`, its transports, its OpenAPI document, its logger and its Prometheus
 * metrics. `startServer` is the whole server; `createHandler` is the API as a plain function, for
 * a host that brings its own HTTP server or calls a transport's `listen…` function itself.
 *
 * @example
 * import { createBeneficiaryService } from 'beneficiary-service'
 * import { openSqliteStorage } from 'beneficiary-service/sqlite'
 * import { createLogger, ServerMetrics, startServer } from 'beneficiary-service/server'
 *
 * const storage = await openSqliteStorage({ path: 'data.sqlite' })
 * const service = await createBeneficiaryService({ storage })
 * const metrics = new ServerMetrics()
 * metrics.watchGroupCommits(storage)
 * const server = await startServer({
 *   service,
 *   port: 8080,
 *   logger: createLogger(),
 *   metrics: { collector: metrics, token: process.env.METRICS_TOKEN },
 * })
 */
export { createHandler } from './handler.js'
export type { ApiHandler, HandlerLogger, HandlerOptions } from './handler.js'
export type { ReadinessCheck } from './readiness.js'
export type { ApiRequest } from './api-request.js'
export type { ApiResponse } from './api-response.js'
export { startServer } from './start-server.js'
export type { RunningServer, StartServerOptions } from './start-server.js'
export { buildOpenApiDocument } from './openapi.js'
export { ServerMetrics } from './metrics/server-metrics.js'
export type {
  GroupCommitSource,
  PoolUsage,
  ServerMetricsOptions,
} from './metrics/server-metrics.js'
export type { MetricsOptions } from './metrics/metrics-endpoint.js'
export type { OpenApiOptions } from './openapi.js'
export { createLogger } from './logger.js'
export type { LoggerOptions } from './logger.js'
export { listenHyperExpress } from './transports/hyper-express-transport.js'
export { listenNodeHttp } from './transports/node-http-transport.js'
export type {
  RunningTransport,
  TlsFiles,
  Transport,
  TransportName,
  TransportOptions,
} from './transports/transport.js'
export { TransportUnavailableError } from './transports/transport-unavailable-error.js'
export { nodeSha256 } from './node-sha256.js'
export { startTracing } from './tracing/start-tracing.js'
export type { TracingOptions } from './tracing/start-tracing.js'
export type { RequestSpan, SpanReportingHandler, Tracing } from './tracing/tracing.js'
export { ImportWorker } from './bulk/import-worker.js'
export type { ImportJobEvent, ImportWorkerOptions } from './bulk/import-worker.js'
