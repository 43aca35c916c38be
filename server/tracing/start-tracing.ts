import { loadOtelSdk, type OtelSdk } from './otel-sdk.js'
import { OtelTracing } from './otel-tracing.js'
import type { Tracing } from './tracing.js'

/** `service.name` of the spans unless told otherwise. */
export const DEFAULT_SERVICE_NAME = 'beneficiary-service'

/**
 * The samplers of OpenTelemetry's `OTEL_TRACES_SAMPLER`: `always_on`, `always_off` and
 * `traceidratio` (a share of traces, chosen by trace id) decide alone; the `parentbased_`
 * ones follow an incoming `traceparent`'s decision and decide for themselves only a trace that
 * starts here.
 */
export const SAMPLERS = Object.freeze([
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
  'always_on',
  'always_off',
  'traceidratio',
] as const)

/** One of {@link SAMPLERS}. */
export type SamplerName = (typeof SAMPLERS)[number]

/** Which traces are recorded and sent. */
export interface SamplerOptions {
  readonly name: SamplerName
  /** The share of traces the `traceidratio` samplers keep, 0 to 1. Ignored by the others. */
  readonly ratio: number
}

/** Options of `startTracing`. Only `endpoint` is required. */
export interface TracingOptions {
  /**
   * The OTLP/HTTP endpoint's base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT` gives it
   * (`http://collector:4318`): spans are sent to its `/v1/traces`, JSON-encoded.
   */
  readonly endpoint: string
  /** `service.name` of the spans' resource. Default `beneficiary-service`. */
  readonly serviceName?: string | undefined
  /** `service.version` of the spans' resource. Default: none. */
  readonly serviceVersion?: string | undefined
  /** Which traces are recorded. Default `parentbased_always_on`: every trace the caller does not decline. */
  readonly sampler?: SamplerOptions | undefined
}

/**
 * Starts exporting spans over OTLP/HTTP and returns the `Tracing` to give `startServer` (and to
 * wrap the storage and the rate-limit store with). Loads the OpenTelemetry packages, which the
 * host installs (optional peer dependencies), only now: a server that does not trace never
 * loads them.
 *
 * Spans are batched and sent in the background (OpenTelemetry's `BatchSpanProcessor`); which
 * traces are recorded is the `sampler`'s choice (by default every trace but those an incoming
 * `traceparent` says are not sampled). The process-wide
 * context manager (over `AsyncLocalStorage`) is registered unless the host has one already;
 * `shutdown()` sends what is left and unregisters it.
 *
 * @example
 * const tracing = await startTracing({ endpoint: 'http://127.0.0.1:4318' })
 * const service = await createBeneficiaryService({ storage: tracing.traceStorage(storage, 'sqlite') })
 * const server = await startServer({ service, tracing })
 * // … on stop:
 * await server.close()
 * await tracing.shutdown()
 *
 * @throws MissingPeerDependencyError naming the packages when one is not installed.
 * @throws TypeError when `endpoint` is not an http:// or https:// URL.
 * @throws RangeError when the sampler's ratio is not between 0 and 1.
 */
export async function startTracing(options: TracingOptions): Promise<Tracing> {
  if (!isOtlpEndpoint(options.endpoint)) {
    throw new TypeError('endpoint must be an http:// or https:// URL')
  }
  const sampling = options.sampler ?? { name: 'parentbased_always_on', ratio: 1 }
  if (!(sampling.ratio >= 0 && sampling.ratio <= 1)) {
    throw new RangeError('the sampler ratio must be between 0 and 1')
  }
  const sdk = await loadOtelSdk()
  const attributes = {
    'service.name': options.serviceName ?? DEFAULT_SERVICE_NAME,
    ...(options.serviceVersion !== undefined && { 'service.version': options.serviceVersion }),
  }
  const exporter = new sdk.OTLPTraceExporter({ url: tracesUrl(options.endpoint) })
  const provider = new sdk.TracerProvider({
    resource: sdk.resourceFromAttributes(attributes),
    spanProcessors: [new sdk.BatchSpanProcessor({ exporter })],
    sampler: samplerOf(sdk, sampling),
  })
  const manager = new sdk.AsyncLocalStorageContextManager().enable()
  const registered = sdk.api.context.setGlobalContextManager(manager)
  return new OtelTracing({
    api: sdk.api,
    tracer: provider.getTracer('beneficiary-service', options.serviceVersion),
    propagator: new sdk.W3CTraceContextPropagator(),
    flush: () => provider.forceFlush(),
    shutdown: async () => {
      await provider.shutdown()
      if (registered) sdk.api.context.disable()
    },
  })
}

/** The SDK's sampler for these options. */
function samplerOf(sdk: OtelSdk, options: SamplerOptions): object {
  const own = options.name.replace(/^parentbased_/, '')
  const root =
    own === 'always_on'
      ? new sdk.AlwaysOnSampler()
      : own === 'always_off'
        ? new sdk.AlwaysOffSampler()
        : new sdk.TraceIdRatioBasedSampler(options.ratio)
  return options.name.startsWith('parentbased_') ? new sdk.ParentBasedSampler({ root }) : root
}

/** Whether `text` can be an OTLP/HTTP endpoint: an http:// or https:// URL with a host. */
export function isOtlpEndpoint(text: string): boolean {
  try {
    const url = new URL(text)
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== ''
  } catch {
    return false
  }
}

/** The signal's path appended to the base URL, as OpenTelemetry's exporter specification says. */
export function tracesUrl(endpoint: string): string {
  return `${endpoint.replace(/\/+$/, '')}/v1/traces`
}
