import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

/** One attribute as OTLP's JSON encoding writes it. */
interface OtlpAttribute {
  readonly key: string
  readonly value: { stringValue?: string; intValue?: number | string; boolValue?: boolean }
}

/** One span as OTLP's JSON encoding writes it (ids in hex). */
interface OtlpJsonSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly traceState?: string
  readonly name: string
  readonly kind: number
  readonly attributes?: readonly OtlpAttribute[]
  readonly status?: { code?: number }
}

/** A `TracesData` message in OTLP's JSON encoding. */
interface OtlpTracesData {
  readonly resourceSpans?: readonly {
    readonly resource?: { attributes?: readonly OtlpAttribute[] }
    readonly scopeSpans?: readonly { spans?: readonly OtlpJsonSpan[] }[]
  }[]
}

/** A received span, its attributes as a plain object. */
export interface ReceivedSpan {
  readonly traceId: string
  readonly spanId: string
  /** Empty for a root span. */
  readonly parentSpanId: string
  readonly traceState: string
  readonly name: string
  /** OTLP's `SpanKind`: 2 server, 3 client. */
  readonly kind: number
  readonly attributes: Readonly<Record<string, string | number | boolean>>
  /** OTLP's `StatusCode`: 0 unset, 2 error. */
  readonly statusCode: number
  /** `service.name` of the span's resource. */
  readonly serviceName: string
}

/** OTLP's span kinds, as the JSON encoding numbers them. */
export const SPAN_KIND = Object.freeze({ SERVER: 2, CLIENT: 3 })

/**
 * An OTLP/HTTP receiver, as a collector is one: `POST /v1/traces` with a JSON body, answered
 * with an empty `ExportTraceServiceResponse`. It keeps every body as it arrived, to search for
 * what must never be sent, and the spans decoded from them.
 */
export class OtlpReceiver {
  readonly #server: Server
  readonly bodies: string[] = []
  readonly spans: ReceivedSpan[] = []
  /** Requests that were not a JSON POST to /v1/traces. */
  readonly refused: string[] = []

  private constructor(server: Server) {
    this.#server = server
  }

  /** Starts a receiver on a free port of 127.0.0.1. */
  static async start(): Promise<OtlpReceiver> {
    const server = createServer()
    const receiver = new OtlpReceiver(server)
    server.on('request', (request, response) => {
      const chunks: Buffer[] = []
      request.on('data', (chunk: Buffer) => chunks.push(chunk))
      request.on('end', () => {
        const type = request.headers['content-type'] ?? ''
        if (
          request.method !== 'POST' ||
          request.url !== '/v1/traces' ||
          !type.startsWith('application/json')
        ) {
          receiver.refused.push(`${request.method} ${request.url} ${type}`)
          response.writeHead(404).end()
          return
        }
        const body = Buffer.concat(chunks).toString('utf8')
        receiver.bodies.push(body)
        receiver.spans.push(...decode(JSON.parse(body) as OtlpTracesData))
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    return receiver
  }

  /** The base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT` takes it. */
  get endpoint(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`
  }

  /** Every byte received, to search. */
  get payload(): string {
    return this.bodies.join('\n')
  }

  /** The spans whose parent is `span`. */
  childrenOf(span: ReceivedSpan): ReceivedSpan[] {
    return this.spans.filter(
      (child) => child.traceId === span.traceId && child.parentSpanId === span.spanId,
    )
  }

  /** The one span named `name` in `traceId` (any trace when not given); throws unless exactly one. */
  one(name: string, traceId?: string): ReceivedSpan {
    const found = this.spans.filter(
      (span) => span.name === name && (traceId === undefined || span.traceId === traceId),
    )
    if (found.length !== 1) {
      const names = this.spans.map((span) => span.name).join(', ')
      throw new Error(`${found.length} spans named ${name}; received: ${names}`)
    }
    return found[0]!
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.#server.close(() => resolve()))
  }
}

function decode(data: OtlpTracesData): ReceivedSpan[] {
  const spans: ReceivedSpan[] = []
  for (const resourceSpans of data.resourceSpans ?? []) {
    const resource = attributesOf(resourceSpans.resource?.attributes)
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      for (const span of scopeSpans.spans ?? []) {
        spans.push({
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId ?? '',
          traceState: span.traceState ?? '',
          name: span.name,
          kind: span.kind,
          attributes: attributesOf(span.attributes),
          statusCode: span.status?.code ?? 0,
          serviceName: String(resource['service.name']),
        })
      }
    }
  }
  return spans
}

function attributesOf(
  attributes: readonly OtlpAttribute[] | undefined,
): Record<string, string | number | boolean> {
  const plain: Record<string, string | number | boolean> = {}
  for (const { key, value } of attributes ?? []) {
    const { stringValue, intValue, boolValue } = value
    plain[key] = stringValue ?? (intValue === undefined ? boolValue! : Number(intValue))
  }
  return plain
}
