import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { buildOpenApiDocument } from '../../../server/openapi.js'
import { ServerMetrics } from '../../../server/metrics/server-metrics.js'
import { startServer, type RunningServer } from '../../../server/start-server.js'
import type { TransportName } from '../../../server/transports/transport.js'
import {
  labelValues,
  parsePrometheusText,
  sampleValue,
  type Family,
} from '../../support/prometheus-text.js'
import { OpenApiResponseValidator } from '../openapi-validator.js'
import { createWorld, MARIO, type World } from '../server-fixtures.js'
import { skipOn } from '../../support/transports.js'

const TOKEN = 'wire-metrics-token-6f1e2d3c4b5a'
const REQUESTS = 'beneficiary_http_requests_total'

function metricsOver(transport: TransportName): void {
  describe(`GET /metrics over ${transport}`, { skip: skipOn(transport) }, () => {
    const validator = new OpenApiResponseValidator()
    let world: World
    let server: RunningServer
    let url: string

    before(async () => {
      world = await createWorld({ limits: { auth: 2, write: 1000, standard: 1000 } })
      server = await startServer({
        service: world.service,
        transport,
        port: 0,
        metrics: { collector: new ServerMetrics(), token: TOKEN },
      })
      url = server.url
    })

    after(() => server.close(1_000))

    async function call(
      method: string,
      path: string,
      options: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
    ): Promise<{ status: number; text: string; headers: Record<string, string> }> {
      const headers: Record<string, string> = { ...options.headers }
      if (options.token !== undefined) headers['authorization'] = `Bearer ${options.token}`
      if (options.body !== undefined) headers['content-type'] = 'application/json'
      const response = await fetch(url + path, {
        method,
        headers,
        ...(options.body !== undefined && { body: JSON.stringify(options.body) }),
      })
      const text = await response.text()
      const answer = {
        status: response.status,
        text,
        headers: Object.fromEntries(response.headers),
      }
      const problems = validator.check(method, path.split('?')[0]!, {
        ...answer,
        body: text === '' ? undefined : text,
      })
      assert.deepEqual(problems, [], `${method} ${path}`)
      return answer
    }

    async function scrape(): Promise<Map<string, Family>> {
      const answer = await call('GET', '/metrics', { token: TOKEN })
      assert.equal(answer.status, 200)
      assert.equal(answer.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8')
      return parsePrometheusText(answer.text)
    }

    it('counts what was asked over the wire, by route template, with no value of a request in a label', async () => {
      const before = await scrape()
      const writer = world.writer
      const credentials = { client_id: writer.client_id, client_secret: writer.client_secret }
      const login = await call('POST', '/v3/auth/login', { body: credentials })
      const token = String((JSON.parse(login.text) as Record<string, unknown>)['access_token'])
      const created = await call('POST', '/v3/beneficiaries', { token, body: MARIO })
      assert.equal(created.status, 201)
      const id = String((JSON.parse(created.text) as Record<string, unknown>)['id'])
      for (let i = 0; i < 3; i++) await call('GET', `/v3/beneficiaries/${id}`, { token })
      await call('GET', `/v3/beneficiaries/${id}`, { token, headers: { 'if-none-match': '*' } })
      await call('GET', `/v3/beneficiaries?search=${encodeURIComponent('Rossi')}`, { token })
      await call('GET', '/v3/beneficiaries/31337', { token })
      await call('GET', `/v3/clients/${writer.client_id}`)
      // The auth bucket holds 2 per address: this login is the third.
      await call('POST', '/v3/auth/login', { body: { ...credentials, client_secret: 'wrong' } })
      const refused = await call('POST', '/v3/auth/login', { body: credentials })
      assert.equal(refused.status, 429)

      const families = await scrape()
      const moved = (labels: Record<string, string>): number =>
        sampleValue(families, REQUESTS, labels) - sampleValue(before, REQUESTS, labels)
      const detail = '/v3/beneficiaries/{id}'
      assert.equal(moved({ route: '/v3/auth/login', method: 'POST', status: '200' }), 1)
      assert.equal(moved({ route: '/v3/auth/login', method: 'POST', status: '401' }), 1)
      assert.equal(moved({ route: '/v3/auth/login', method: 'POST', status: '429' }), 1)
      assert.equal(moved({ route: '/v3/beneficiaries', method: 'POST', status: '201' }), 1)
      assert.equal(moved({ route: '/v3/beneficiaries', method: 'GET', status: '200' }), 1)
      assert.equal(moved({ route: detail, method: 'GET', status: '200' }), 3)
      assert.equal(moved({ route: detail, method: 'GET', status: '304' }), 1)
      assert.equal(moved({ route: detail, method: 'GET', status: '404' }), 1)
      assert.equal(moved({ route: 'unmatched', method: 'GET', status: '404' }), 1)
      assert.equal(moved({ route: '/metrics', method: 'GET', status: '200' }), 1)
      assert.equal(
        sampleValue(families, 'beneficiary_http_rate_limited_total', { class: 'auth' }),
        1,
      )
      const count = sampleValue(families, 'beneficiary_http_request_duration_seconds_count', {
        route: detail,
        method: 'GET',
        status: '200',
      })
      assert.equal(count, 3)
      assert.ok(families.has('nodejs_eventloop_lag_seconds'))
      assert.ok(families.has('process_cpu_seconds_total'))

      const labels = labelValues(families)
      const secrets = [writer.client_id, writer.client_secret, token, `/${id}`, '31337', 'Rossi']
      const personal = Object.values(MARIO).filter((value) => typeof value === 'string')
      for (const text of [...secrets, ...personal, 'RSSMRA']) {
        assert.ok(!labels.some((label) => label.includes(text)), `a label holds ${text}`)
      }
      const routes = new Set(families.get(REQUESTS)!.samples.map((s) => s.labels['route']))
      const templates = new Set(Object.keys(buildOpenApiDocument().paths))
      for (const route of routes) {
        assert.ok(route === 'unmatched' || templates.has(route!), `route label ${route}`)
      }
    })

    it('asks for the token: 401 without it or with an API token, and HEAD answers like GET', async () => {
      const writer = world.writer
      const anonymous = await call('GET', '/metrics')
      assert.equal(anonymous.status, 401)
      assert.match(anonymous.headers['www-authenticate'] ?? '', /^Bearer /)
      assert.equal(
        (JSON.parse(anonymous.text) as Record<string, unknown>)['error'],
        'invalid_token',
      )
      assert.ok(!anonymous.text.includes('beneficiary_http'))
      const other = await call('GET', '/metrics', { token: writer.client_secret })
      assert.equal(other.status, 401)
      const head = await call('HEAD', '/metrics', { token: TOKEN })
      assert.equal(head.status, 200)
      assert.equal(head.text, '')
    })
  })
}

metricsOver('node')
metricsOver('uws')
