import type { RateLimitStore } from '../../core/ports/rate-limit-store.js'
import type { Storage } from '../../core/ports/storage.js'
import type { ApiRequest } from '../api-request.js'
import type { ApiResponse } from '../api-response.js'
import type { OtelApi, OtelPropagator, OtelSpan, OtelTracer } from './otel-sdk.js'
import { tracedRateLimitStore, tracedStorage, type SpanAround } from './traced-ports.js'
import type { RequestSpan, SpanReportingHandler, Tracing } from './tracing.js'

/** The methods a span may name; any other is `_OTHER` (OpenTelemetry's HTTP conventions). */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])

/** What `OtelTracing` is built from. */
export interface OtelTracingParts {
  readonly api: OtelApi
  readonly tracer: OtelTracer
  readonly propagator: OtelPropagator
  readonly flush: () => Promise<void>
  readonly shutdown: () => Promise<void>
}

/**
 * `Tracing` over the OpenTelemetry API. Span names and attributes follow OpenTelemetry's HTTP
 * and database conventions: `http.request.method`, `http.route`, `http.response.status_code`,
 * `error.type` on a server span; `db.system.name`, `db.operation.name` and `error.type` (the
 * error's class, never its message) on a client span.
 */
export class OtelTracing implements Tracing {
  readonly #api: OtelApi
  readonly #tracer: OtelTracer
  readonly #propagator: OtelPropagator
  readonly #flush: () => Promise<void>
  readonly #shutdown: () => Promise<void>

  constructor(parts: OtelTracingParts) {
    this.#api = parts.api
    this.#tracer = parts.tracer
    this.#propagator = parts.propagator
    this.#flush = parts.flush
    this.#shutdown = parts.shutdown
  }

  traceRequests(handle: SpanReportingHandler): (request: ApiRequest) => Promise<ApiResponse> {
    const api = this.#api
    const tracer = this.#tracer
    const propagator = this.#propagator
    const kind = api.SpanKind.SERVER
    const error = api.SpanStatusCode.ERROR
    return async (request) => {
      const parent = propagator.extract(api.ROOT_CONTEXT, request.headers, api.defaultTextMapGetter)
      const method = KNOWN_METHODS.has(request.method) ? request.method : '_OTHER'
      const span = tracer.startSpan(
        method,
        { kind, attributes: { 'http.request.method': method } },
        parent,
      )
      const named: RequestSpan = {
        route(template) {
          span.updateName(`${method} ${template}`)
          span.setAttribute('http.route', template)
        },
      }
      let response: ApiResponse
      try {
        response = await api.context.with(
          api.trace.setSpan(parent, span),
          handle,
          undefined,
          request,
          named,
        )
      } catch (thrown) {
        failed(span, error, typeName(thrown))
        span.end()
        throw thrown
      }
      span.setAttribute('http.response.status_code', response.status)
      // A 4xx is the client's doing: only a 5xx marks the server's span as failed.
      if (response.status >= 500) failed(span, error, String(response.status))
      span.end()
      return response
    }
  }

  traceStorage(storage: Storage, system: string): Storage {
    return tracedStorage(storage, this.#around(system))
  }

  traceRateLimitStore(store: RateLimitStore, system: string): RateLimitStore {
    return tracedRateLimitStore(store, this.#around(system))
  }

  forceFlush(): Promise<void> {
    return this.#flush()
  }

  shutdown(): Promise<void> {
    return this.#shutdown()
  }

  /** Client spans under the active one, each the active span while its call runs. */
  #around(system: string): SpanAround {
    const api = this.#api
    const tracer = this.#tracer
    const kind = api.SpanKind.CLIENT
    const error = api.SpanStatusCode.ERROR
    return async (name, call) => {
      const active = api.context.active()
      const span = tracer.startSpan(
        name,
        { kind, attributes: { 'db.system.name': system, 'db.operation.name': name } },
        active,
      )
      try {
        return await api.context.with(api.trace.setSpan(active, span), call)
      } catch (thrown) {
        failed(span, error, typeName(thrown))
        throw thrown
      } finally {
        span.end()
      }
    }
  }
}

function failed(span: OtelSpan, code: number, type: string): void {
  span.setStatus({ code })
  span.setAttribute('error.type', type)
}

/** The class of what was thrown (`ConflictError`): its message may hold a personal value. */
function typeName(thrown: unknown): string {
  return thrown instanceof Error ? thrown.constructor.name : '_OTHER'
}
