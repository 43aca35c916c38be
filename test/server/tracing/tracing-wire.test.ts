import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { MemoryStorage } from '../../../adapters/memory/index.js'
import { createBeneficiaryService, type ProvisionedClient } from '../../../core/index.js'
import { startServer, type RunningServer } from '../../../server/start-server.js'
import { startTracing } from '../../../server/tracing/start-tracing.js'
import type { Tracing } from '../../../server/tracing/tracing.js'
import type { TransportName } from '../../../server/transports/transport.js'
import { OtlpReceiver, SPAN_KIND, type ReceivedSpan } from '../../support/otlp-receiver.js'
import { skipOn, TRANSPORTS } from '../../support/transports.js'
import { MARIO } from '../server-fixtures.js'

// A request over each transport, traced on memory storage and exported over OTLP/HTTP to a
// receiver in this process: the request span with its route template and status, the storage
// calls as its children, an incoming traceparent continued, and no personal value sent.

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736'
const PARENT_ID = '00f067aa0ba902b7'

/** What a request's client sees, and the trace it asked to continue. */
interface Exchange {
  readonly status: number
  readonly body: Record<string, unknown>
}

async function call(
  server: RunningServer,
  method: string,
  path: string,
  options: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Exchange> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      ...(options.token !== undefined && { authorization: `Bearer ${options.token}` }),
      ...(options.body !== undefined && { 'content-type': 'application/json' }),
      ...options.headers,
    },
    ...(options.body !== undefined && { body: JSON.stringify(options.body) }),
  })
  const text = await response.text()
  return {
    status: response.status,
    body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>),
  }
}

function tracedOver(transport: TransportName): void {
  describe(`tracing over ${transport}`, { skip: skipOn(transport) }, () => {
    let receiver: OtlpReceiver
    let tracing: Tracing
    let server: RunningServer
    let client: ProvisionedClient
    let created: Exchange
    let read: Exchange

    before(async () => {
      receiver = await OtlpReceiver.start()
      tracing = await startTracing({ endpoint: receiver.endpoint, serviceName: 'tracing-test' })
      const storage = tracing.traceStorage(new MemoryStorage(), 'memory')
      const service = await createBeneficiaryService({ storage })
      client = await service.clients.create({ name: 'Case workers', scopes: ['read', 'write'] })
      server = await startServer({ service, transport, port: 0, tracing })
      const login = await call(server, 'POST', '/v3/auth/login', {
        body: { client_id: client.client_id, client_secret: client.client_secret },
      })
      const token = String(login.body['access_token'])
      created = await call(server, 'POST', '/v3/beneficiaries', { token, body: MARIO })
      read = await call(server, 'GET', `/v3/beneficiaries/${String(created.body['id'])}?fields=x`, {
        token,
        headers: {
          traceparent: `00-${TRACE_ID}-${PARENT_ID}-01`,
          tracestate: 'balancer=edge-1',
        },
      })
      await call(server, 'GET', '/v3/no/such/path', { token })
      // Deterministic: every span ended so far is sent, and the receiver has answered.
      await tracing.forceFlush()
    })

    after(async () => {
      await server?.close()
      await tracing?.shutdown()
      await receiver?.close()
    })

    it('exports a span per request, named by method and route template, with its status', () => {
      assert.equal(created.status, 201)
      assert.equal(read.status, 200)
      assert.deepEqual(receiver.refused, [])
      const create = receiver.one('POST /v3/beneficiaries')
      assert.equal(create.kind, SPAN_KIND.SERVER)
      assert.equal(create.serviceName, 'tracing-test')
      assert.deepEqual(create.attributes, {
        'http.request.method': 'POST',
        'http.route': '/v3/beneficiaries',
        'http.response.status_code': 201,
      })
      const get = receiver.one('GET /v3/beneficiaries/{id}')
      assert.equal(get.attributes['http.route'], '/v3/beneficiaries/{id}')
      assert.equal(get.attributes['http.response.status_code'], 200)
      const lost = receiver.one('GET')
      assert.equal(lost.attributes['http.response.status_code'], 404)
      assert.equal(lost.attributes['http.route'], undefined)
    })

    it('makes every storage call a child span of its request', () => {
      const create = receiver.one('POST /v3/beneficiaries')
      const children = receiver.childrenOf(create)
      assert.ok(
        children.some((span) => span.name === 'beneficiaries.create'),
        names(children),
      )
      for (const child of children) {
        assert.equal(child.kind, SPAN_KIND.CLIENT)
        assert.equal(child.attributes['db.system.name'], 'memory')
        assert.equal(child.attributes['db.operation.name'], child.name)
      }
      const get = receiver.one('GET /v3/beneficiaries/{id}')
      const reads = receiver.childrenOf(get).map((span) => span.name)
      assert.ok(reads.includes('beneficiaries.get'), reads.join(', '))
    })

    it('continues the trace of an incoming traceparent, keeping its tracestate', () => {
      const get = receiver.one('GET /v3/beneficiaries/{id}')
      assert.equal(get.traceId, TRACE_ID)
      assert.equal(get.parentSpanId, PARENT_ID)
      assert.equal(get.traceState, 'balancer=edge-1')
      const create = receiver.one('POST /v3/beneficiaries')
      assert.notEqual(create.traceId, TRACE_ID, 'a request without traceparent starts a trace')
      assert.equal(create.parentSpanId, '')
    })

    it('sends no personal value, no id from a path, no query string and no secret', () => {
      const payload = receiver.payload
      assert.ok(payload.length > 0)
      const forbidden = [
        MARIO.first_name,
        MARIO.last_name,
        MARIO.fiscal_code,
        MARIO.email,
        MARIO.phone,
        MARIO.address.street,
        `/v3/beneficiaries/${String(created.body['id'])}`,
        'fields=x',
        client.client_secret,
        client.client_id,
      ]
      for (const value of forbidden)
        assert.ok(!payload.includes(value), `the payload holds ${value}`)
    })
  })
}

describe('tracing with a sampler', () => {
  it('records a share of the traces that start here, and follows a caller that samples', async () => {
    const receiver = await OtlpReceiver.start()
    const tracing = await startTracing({
      endpoint: receiver.endpoint,
      sampler: { name: 'parentbased_traceidratio', ratio: 0 },
    })
    const service = await createBeneficiaryService({
      storage: tracing.traceStorage(new MemoryStorage(), 'memory'),
    })
    const server = await startServer({ service, transport: 'node', port: 0, tracing })
    try {
      const traced = `00-${TRACE_ID}-${PARENT_ID}-01`
      const declined = `00-${TRACE_ID.replace('4', '5')}-${PARENT_ID}-00`
      await call(server, 'GET', '/healthz')
      await call(server, 'GET', '/v3/openapi.json', { headers: { traceparent: traced } })
      await call(server, 'GET', '/readyz', { headers: { traceparent: declined } })
      await tracing.forceFlush()
      assert.deepEqual(receiver.refused, [])
      assert.deepEqual(
        receiver.spans.map((span) => [span.name, span.traceId]),
        [['GET /v3/openapi.json', TRACE_ID]],
      )
    } finally {
      await server.close()
      await tracing.shutdown()
      await receiver.close()
    }
  })

  it('refuses a share outside 0 to 1 before loading anything', async () => {
    await assert.rejects(
      startTracing({
        endpoint: 'http://127.0.0.1:4318',
        sampler: { name: 'traceidratio', ratio: 2 },
      }),
      RangeError,
    )
  })
})

function names(spans: readonly ReceivedSpan[]): string {
  return spans.map((span) => span.name).join(', ')
}

for (const transport of TRANSPORTS) tracedOver(transport)
