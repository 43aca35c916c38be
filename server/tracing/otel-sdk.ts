import { importWithPeers, type PeerPackage } from '../../core/missing-peer-dependency-error.js'

/**
 * The slice of the OpenTelemetry packages the tracing uses, typed here so that the library's
 * types do not need them: a host that does not trace installs none of them.
 */

/** A context of `@opentelemetry/api`: opaque here. */
export type OtelContext = object

/** Attribute values the tracing sets: names and numbers, never a personal value. */
export type OtelAttributes = Readonly<Record<string, string | number>>

/** The members of an `@opentelemetry/api` span the tracing calls. */
export interface OtelSpan {
  setAttribute(key: string, value: string | number): unknown
  setStatus(status: { code: number }): unknown
  updateName(name: string): unknown
  end(): void
}

/** An `@opentelemetry/api` tracer. */
export interface OtelTracer {
  startSpan(
    name: string,
    options: { kind: number; attributes?: OtelAttributes },
    context?: OtelContext,
  ): OtelSpan
}

/** A getter of `@opentelemetry/api` that reads a carrier's keys. */
export type OtelTextMapGetter = object

/** What the tracing needs of `@opentelemetry/api`. */
export interface OtelApi {
  readonly ROOT_CONTEXT: OtelContext
  readonly SpanKind: { readonly SERVER: number; readonly CLIENT: number }
  readonly SpanStatusCode: { readonly ERROR: number }
  readonly defaultTextMapGetter: OtelTextMapGetter
  readonly context: {
    active(): OtelContext
    with<A extends unknown[], R>(
      context: OtelContext,
      fn: (...args: A) => R,
      thisArg?: unknown,
      ...args: A
    ): R
    setGlobalContextManager(manager: object): boolean
    disable(): void
  }
  readonly trace: { setSpan(context: OtelContext, span: OtelSpan): OtelContext }
}

/** W3C Trace Context's propagator, `W3CTraceContextPropagator` of `@opentelemetry/core`. */
export interface OtelPropagator {
  extract(context: OtelContext, carrier: unknown, getter: OtelTextMapGetter): OtelContext
}

/** `TracerProvider` of `@opentelemetry/sdk-trace`. */
export interface OtelTracerProvider {
  getTracer(name: string, version?: string): OtelTracer
  forceFlush(): Promise<void>
  shutdown(): Promise<void>
}

/** The constructors and functions of the SDK packages the tracing builds its pipeline from. */
export interface OtelSdk {
  readonly api: OtelApi
  readonly TracerProvider: new (options: {
    resource: object
    spanProcessors: object[]
    sampler: object
  }) => OtelTracerProvider
  readonly BatchSpanProcessor: new (options: { exporter: object }) => object
  readonly OTLPTraceExporter: new (config: { url: string }) => object
  readonly AsyncLocalStorageContextManager: new () => { enable(): object }
  readonly W3CTraceContextPropagator: new () => OtelPropagator
  readonly resourceFromAttributes: (attributes: OtelAttributes) => object
  readonly AlwaysOnSampler: new () => object
  readonly AlwaysOffSampler: new () => object
  readonly TraceIdRatioBasedSampler: new (ratio: number) => object
  readonly ParentBasedSampler: new (options: { root: object }) => object
}

/**
 * The packages tracing loads, which the host installs (optional peer dependencies): the API,
 * the tracing SDK, its context manager over `AsyncLocalStorage`, the W3C propagator (in
 * `core`), the resource naming the service, and the OTLP/HTTP exporter (JSON encoding).
 */
export const TRACING_PEERS: readonly PeerPackage[] = Object.freeze([
  { name: '@opentelemetry/api', range: '~1.9.1' },
  { name: '@opentelemetry/context-async-hooks', range: '~2.12.1' },
  { name: '@opentelemetry/core', range: '~2.12.1' },
  { name: '@opentelemetry/exporter-trace-otlp-http', range: '~0.223.1' },
  { name: '@opentelemetry/resources', range: '~2.12.1' },
  { name: '@opentelemetry/sdk-trace', range: '~2.12.1' },
])

/**
 * Loads the OpenTelemetry packages, only when tracing is turned on.
 * @throws MissingPeerDependencyError naming every package when one is not installed.
 */
export async function loadOtelSdk(): Promise<OtelSdk> {
  // Variables, not literals: the compiler must not require the packages' types.
  const [api, hooks, core, exporter, resources, sdk] = TRACING_PEERS.map((peer) => peer.name)
  const modules = await importWithPeers('tracing (--otlp-endpoint)', TRACING_PEERS, () =>
    Promise.all(
      [api, hooks, core, exporter, resources, sdk].map(
        (name) => import(name!) as Promise<LoadedModule>,
      ),
    ),
  )
  const [apiModule, hooksModule, coreModule, exporterModule, resourcesModule, sdkModule] =
    modules as [LoadedModule, LoadedModule, LoadedModule, LoadedModule, LoadedModule, LoadedModule]
  return {
    // The API's own `default` export lacks most of it: its named exports are read first.
    api: ('SpanKind' in apiModule ? apiModule : apiModule.default) as unknown as OtelApi,
    TracerProvider: member(sdkModule, sdk!, 'TracerProvider'),
    BatchSpanProcessor: member(sdkModule, sdk!, 'BatchSpanProcessor'),
    OTLPTraceExporter: member(exporterModule, exporter!, 'OTLPTraceExporter'),
    AsyncLocalStorageContextManager: member(hooksModule, hooks!, 'AsyncLocalStorageContextManager'),
    W3CTraceContextPropagator: member(coreModule, core!, 'W3CTraceContextPropagator'),
    resourceFromAttributes: member(resourcesModule, resources!, 'resourceFromAttributes'),
    AlwaysOnSampler: member(sdkModule, sdk!, 'AlwaysOnSampler'),
    AlwaysOffSampler: member(sdkModule, sdk!, 'AlwaysOffSampler'),
    TraceIdRatioBasedSampler: member(sdkModule, sdk!, 'TraceIdRatioBasedSampler'),
    ParentBasedSampler: member(sdkModule, sdk!, 'ParentBasedSampler'),
  }
}

/** A module as `import()` gives it: a CommonJS package's exports are also on `default`. */
type LoadedModule = Record<string, unknown> & { default?: Record<string, unknown> }

/** An export of a CommonJS package, as a named export or on its `default`. */
function member<K extends keyof OtelSdk>(module: LoadedModule, name: string, key: K): OtelSdk[K] {
  const found = module[key] ?? module.default?.[key]
  if (typeof found !== 'function') {
    const range = TRACING_PEERS.find((peer) => peer.name === name)!.range
    throw new Error(`"${name}" does not export ${key}: install ${name}@${range}`)
  }
  return found as OtelSdk[K]
}
