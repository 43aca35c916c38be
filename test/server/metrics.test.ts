import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { StorageUnavailableError } from '../../core/errors.js'
import { createHandler } from '../../server/handler.js'
import { ServerMetrics } from '../../server/metrics/server-metrics.js'
import {
  labelValues,
  parsePrometheusText,
  sampleValue,
  type Family,
} from '../support/prometheus-text.js'
import { createWorld, delegateTo, login, MARIO, send } from './server-fixtures.js'

const REQUESTS = 'beneficiary_http_requests_total'
const COUNTS = 'beneficiary_http_request_duration_seconds_count'
const TOKEN = 'scrape-token-0123456789abcdef'

async function scrape(
  handler: ReturnType<typeof createHandler>,
  headers: Record<string, string> = {},
): Promise<Map<string, Family>> {
  const answer = await send(handler, 'GET', '/metrics', { headers })
  assert.equal(answer.status, 200)
  assert.match(answer.headers['content-type'] ?? '', /^text\/plain; version=0\.0\.4/)
  return parsePrometheusText(answer.body ?? '')
}

describe('the text-format parser of these tests', () => {
  it('refuses what breaks the exposition format, so that a bad scrape fails its test', () => {
    const good = '# HELP a_total A.\n# TYPE a_total counter\na_total{x="1"} 2\n'
    assert.equal(sampleValue(parsePrometheusText(good), 'a_total', { x: '1' }), 2)
    for (const bad of [
      'a_total 1',
      'a_total{x="1"} one\n',
      'a_total{x="1",x="2"} 1\n',
      'a_total{x=1} 1\n',
      'a_total{x="\\q"} 1\n',
      'a_total{x="1"} 1\na_total{x="1"} 2\n',
      '1a_total 1\n',
      'a_total 1\n# TYPE a_total counter\n',
      '# TYPE a_total countre\n',
    ]) {
      assert.throws(() => parsePrometheusText(bad), Error, JSON.stringify(bad))
    }
  })
})

describe('metrics through the handler', () => {
  it('counts requests by route template, method and status, never by the path or a value sent', async () => {
    const world = await createWorld()
    const collector = new ServerMetrics({ defaultMetrics: false })
    const handler = createHandler(world.service, { metrics: { collector } })
    const { access } = await login(handler, world.writer)
    const created = await send(handler, 'POST', '/v3/beneficiaries', { token: access, body: MARIO })
    const id = String(created.json?.['id'])
    await send(handler, 'GET', `/v3/beneficiaries/${id}`, { token: access })
    await send(handler, 'GET', `/v3/beneficiaries/${id}`, { token: access })
    await send(handler, 'HEAD', `/v3/beneficiaries/${id}`, { token: access })
    await send(handler, 'GET', '/v3/beneficiaries/987654321', { token: access })
    await send(handler, 'GET', `/v3/beneficiaries/${id}/history`, { token: 'not-a-token' })
    await send(handler, 'PATCH', `/v3/beneficiaries/${id}`, { token: access })
    await send(handler, 'GET', `/v3/${world.writer.client_id}/mario.rossi@example.org`)
    await send(handler, 'BREW', '/coffee/RSSMRA85T10A562S')

    const families = await scrape(handler)
    const count = (route: string, method: string, status: string): number =>
      sampleValue(families, REQUESTS, { route, method, status })
    const detail = '/v3/beneficiaries/{id}'
    assert.equal(count('/v3/auth/login', 'POST', '200'), 1)
    assert.equal(count('/v3/beneficiaries', 'POST', '201'), 1)
    assert.equal(count(detail, 'GET', '200'), 2)
    assert.equal(count(detail, 'HEAD', '200'), 1)
    assert.equal(count(detail, 'GET', '404'), 1)
    assert.equal(count('/v3/beneficiaries/{id}/history', 'GET', '401'), 1)
    assert.equal(count(detail, 'PATCH', '405'), 1)
    // Unknown paths collapse to one label, and a method nobody uses to `other`.
    assert.equal(count('unmatched', 'GET', '404'), 1)
    assert.equal(count('unmatched', 'other', '404'), 1)
    // The latency histogram counts the same requests: the counter is read from it.
    assert.equal(sampleValue(families, COUNTS, { route: detail, method: 'GET', status: '200' }), 2)
    const buckets = families.get('beneficiary_http_request_duration_seconds')!.samples
    assert.ok(buckets.some((sample) => sample.labels['le'] === '+Inf'))

    const labels = labelValues(families)
    const forbidden = [`/${id}`, '987654321', world.writer.client_id, access, 'BREW', 'coffee']
    for (const text of forbidden) {
      assert.ok(!labels.some((value) => value.includes(text)), text)
    }
    for (const value of Object.values(MARIO).filter((v) => typeof v === 'string')) {
      assert.ok(!labels.some((label) => label.includes(value)), value)
    }
  })

  it('counts 429s by limit class, and 503s and storage faults by their cause', async () => {
    const world = await createWorld({ limits: { auth: 1, write: 1, standard: 1000 } })
    let fault: StorageUnavailableError | undefined
    const service = delegateTo(world.service, {
      get: (ctx, id) => {
        if (fault !== undefined) return Promise.reject(fault)
        return world.service.get(ctx, id)
      },
      ready: () => Promise.reject(new Error('connection refused')),
    })
    const collector = new ServerMetrics({ defaultMetrics: false })
    const handler = createHandler(service, { metrics: { collector } })
    const { access } = await login(handler, world.writer)
    const again = await send(handler, 'POST', '/v3/auth/login', {
      body: {},
      remoteAddress: '192.0.2.1',
    })
    assert.equal(again.status, 429)
    await send(handler, 'POST', '/v3/beneficiaries', { token: access, body: MARIO })
    const limited = await send(handler, 'POST', '/v3/beneficiaries', {
      token: access,
      body: { ...MARIO, fiscal_code: undefined },
    })
    assert.equal(limited.status, 429)
    fault = new StorageUnavailableError('disk_full')
    assert.equal((await send(handler, 'GET', '/v3/beneficiaries/1', { token: access })).status, 503)
    fault = new StorageUnavailableError('busy')
    assert.equal((await send(handler, 'GET', '/v3/beneficiaries/1', { token: access })).status, 503)
    assert.equal((await send(handler, 'GET', '/readyz')).status, 503)

    const families = await scrape(handler)
    const value = (name: string, labels: Record<string, string>): number =>
      sampleValue(families, name, labels)
    assert.equal(value('beneficiary_http_rate_limited_total', { class: 'auth' }), 1)
    assert.equal(value('beneficiary_http_rate_limited_total', { class: 'write' }), 1)
    assert.equal(value('beneficiary_http_rate_limited_total', { class: 'standard' }), 0)
    assert.equal(value('beneficiary_http_unavailable_total', { cause: 'disk_full' }), 1)
    assert.equal(value('beneficiary_http_unavailable_total', { cause: 'busy' }), 1)
    assert.equal(value('beneficiary_http_unavailable_total', { cause: 'not_ready' }), 1)
    assert.equal(value('beneficiary_storage_errors_total', { reason: 'disk_full' }), 1)
    assert.equal(value('beneficiary_storage_errors_total', { reason: 'busy' }), 1)
    assert.equal(value('beneficiary_storage_errors_total', { reason: 'unreachable' }), 1)
    assert.equal(value(REQUESTS, { route: '/readyz', method: 'GET', status: '503' }), 1)
  })

  it("includes prom-client's process and event-loop metrics", async () => {
    const world = await createWorld()
    const handler = createHandler(world.service, { metrics: { collector: new ServerMetrics() } })
    const families = await scrape(handler)
    for (const name of [
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
      'nodejs_eventloop_lag_p99_seconds',
      'nodejs_heap_size_used_bytes',
    ]) {
      assert.ok(families.has(name), name)
    }
  })

  it('is not rate limited: no RateLimit fields, and more scrapes than any bucket holds', async () => {
    const world = await createWorld({ limits: { auth: 1, write: 1, standard: 1 } })
    const collector = new ServerMetrics({ defaultMetrics: false })
    const handler = createHandler(world.service, { metrics: { collector } })
    for (let i = 0; i < 5; i++) {
      const answer = await send(handler, 'GET', '/metrics')
      assert.equal(answer.status, 200)
      assert.equal(answer.headers['ratelimit'], undefined)
      assert.equal(answer.headers['cache-control'], 'no-store')
    }
  })

  it('with a token, answers 401 to a scrape without it or with another, and HEAD like GET', async () => {
    const world = await createWorld()
    const collector = new ServerMetrics({ defaultMetrics: false })
    const handler = createHandler(world.service, { metrics: { collector, token: TOKEN } })
    const { access } = await login(handler, world.writer)
    for (const headers of [
      {},
      { authorization: `Bearer ${access}` },
      { authorization: `Bearer ${TOKEN}x` },
      { authorization: `Basic ${TOKEN}` },
    ]) {
      const refused = await send(handler, 'GET', '/metrics', { headers })
      assert.equal(refused.status, 401)
      assert.equal(refused.json?.['error'], 'invalid_token')
      assert.match(refused.headers['www-authenticate'] ?? '', /^Bearer /)
      assert.ok(!(refused.body ?? '').includes('beneficiary_'))
    }
    const families = await scrape(handler, { authorization: `bearer ${TOKEN}` })
    assert.equal(
      sampleValue(families, REQUESTS, { route: '/metrics', method: 'GET', status: '401' }),
      4,
    )
    const head = await send(handler, 'HEAD', '/metrics', {
      headers: { authorization: `Bearer ${TOKEN}` },
    })
    assert.equal(head.status, 200)
    assert.throws(
      () => createHandler(world.service, { metrics: { collector, token: ' ' } }),
      TypeError,
    )
  })

  it('without metrics, /metrics is an unknown path, left out of the OpenAPI document', async () => {
    const world = await createWorld()
    const handler = createHandler(world.service)
    const answer = await send(handler, 'GET', '/metrics')
    assert.equal(answer.status, 404)
    assert.equal(answer.json?.['error'], 'not_found')
    const paths = (await send(handler, 'GET', '/v3/openapi.json')).json?.['paths'] as object
    assert.ok(!('/metrics' in paths))
    assert.ok('/healthz' in paths)

    const withMetrics = createHandler(world.service, {
      metrics: { collector: new ServerMetrics({ defaultMetrics: false }) },
    })
    const documented = (await send(withMetrics, 'GET', '/v3/openapi.json')).json?.[
      'paths'
    ] as Record<string, Record<string, Record<string, unknown>>>
    const operation = documented['/metrics']!['get']!
    assert.deepEqual(operation['security'], [])
    assert.equal(operation['x-rate-limit-class'], undefined)
    const ok = (operation['responses'] as Record<string, Record<string, object>>)['200']!
    assert.deepEqual(Object.keys(ok['content']!), ['text/plain; version=0.0.4'])
  })
})
