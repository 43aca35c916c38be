import type { RateLimitStore } from '../../core/ports/rate-limit-store.js'
import type { Storage } from '../../core/ports/storage.js'
import type { ApiRequest } from '../api-request.js'
import type { ApiResponse } from '../api-response.js'

/** The span of one request, which the handler names once it has found the route. */
export interface RequestSpan {
  /** The route's template, base path included (`/v3/beneficiaries/{id}`): never the raw path. */
  route(template: string): void
}

/** A handler that reports the route it found to the span of the request. */
export type SpanReportingHandler = (request: ApiRequest, span: RequestSpan) => Promise<ApiResponse>

/**
 * OpenTelemetry tracing of the server, as `startTracing` builds it: one span per request, named
 * by its route template, with child spans for the storage calls and the Redis takes it makes.
 * The composition is chosen at start-up: without a `Tracing`, nothing is wrapped and no span
 * object is made.
 *
 * No span carries a personal value: no path (only the route template), no query string, no
 * body, no argument of a storage call, no bucket key, no error message.
 */
export interface Tracing {
  /**
   * Wraps the handler: each request gets a server span, continuing the trace of its
   * `traceparent` and `tracestate` headers (W3C Trace Context) when it has them, and the
   * calls it makes see that span as their parent.
   */
  traceRequests(handle: SpanReportingHandler): (request: ApiRequest) => Promise<ApiResponse>
  /**
   * Wraps every port of `storage` so that each call is a client span named `port.method`
   * (`beneficiaries.get`) with `db.system.name` set to `system` (`postgresql`, `sqlite`,
   * `memory`). `ping` and `close` are passed through untraced.
   */
  traceStorage(storage: Storage, system: string): Storage
  /** Wraps a rate-limit store so that each take is a client span `rate_limits.take`. */
  traceRateLimitStore(store: RateLimitStore, system: string): RateLimitStore
  /** Sends the spans ended so far; resolves once the exporter has answered. */
  forceFlush(): Promise<void>
  /** Sends the spans left and stops the exporter. Spans made afterwards are dropped. */
  shutdown(): Promise<void>
}
