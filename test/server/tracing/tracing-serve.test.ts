import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { readServeConfig } from '../../../server/cli/serve-config.js'
import { Settings } from '../../../server/cli/settings.js'
import { call, createClient, login, type Client } from '../../faults/fault-support.js'
import { ServeChild, type Exit } from '../../faults/serve-child.js'
import { cli } from '../../support/cli-in-process.js'
import { OtlpReceiver, SPAN_KIND } from '../../support/otlp-receiver.js'
import {
  createTestDatabase,
  postgresSkip,
  type TestDatabase,
} from '../../support/postgres-database.js'
import { cleanUpKeys, redisSkipReason, testKeyPrefix, TEST_REDIS_URL } from '../../support/redis.js'
import { MARIO } from '../server-fixtures.js'

// `serve --otlp-endpoint` as an operator runs it: a real server process on PostgreSQL with its
// rate limits on Redis, exporting to a receiver in this process. The spans are flushed by the
// server's own stop (SIGTERM), not waited for.

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c'
const PARENT_ID = 'b7ad6b7169203331'

describe('serve --otlp-endpoint', () => {
  it('is off unless an endpoint is given, and named beneficiary-service unless told otherwise', () => {
    const read = (flags: Record<string, string>, env: Record<string, string>) =>
      readServeConfig(new Settings(flags, env)).tracing
    assert.equal(read({}, {}), undefined)
    assert.equal(read({}, { OTEL_SERVICE_NAME: 'alone' }), undefined)
    const always = { name: 'parentbased_always_on', ratio: 1 }
    assert.deepEqual(read({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), {
      endpoint: 'http://collector:4318',
      serviceName: 'beneficiary-service',
      sampler: always,
    })
    assert.deepEqual(
      read(
        { 'otlp-endpoint': 'https://collector:4318', 'otel-service-name': 'registry-blue' },
        { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://other:4318', OTEL_SERVICE_NAME: 'green' },
      ),
      { endpoint: 'https://collector:4318', serviceName: 'registry-blue', sampler: always },
    )
  })

  it("reads OpenTelemetry's sampler variables, and refuses a name or share it does not know", () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }
    const read = (flags: Record<string, string>, env: Record<string, string>) =>
      readServeConfig(new Settings(flags, { ...endpoint, ...env })).tracing?.sampler
    assert.deepEqual(
      read(
        {},
        { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.01' },
      ),
      { name: 'parentbased_traceidratio', ratio: 0.01 },
    )
    assert.deepEqual(read({ 'otel-sampler': 'always_off' }, { OTEL_TRACES_SAMPLER: 'always_on' }), {
      name: 'always_off',
      ratio: 1,
    })
    for (const [env, setting] of [
      [{ OTEL_TRACES_SAMPLER: 'sometimes' }, 'OTEL_TRACES_SAMPLER'],
      [{ OTEL_TRACES_SAMPLER_ARG: '1.5' }, 'OTEL_TRACES_SAMPLER_ARG'],
      [{ OTEL_TRACES_SAMPLER_ARG: '-0.1' }, 'OTEL_TRACES_SAMPLER_ARG'],
      [{ OTEL_TRACES_SAMPLER_ARG: 'half' }, 'OTEL_TRACES_SAMPLER_ARG'],
    ] as const) {
      assert.throws(
        () => read({}, env),
        (error: Error) => error.message.includes(setting),
        setting,
      )
    }
  })

  it('refuses an endpoint that is not an http or https URL, with status 2 and one line', async () => {
    for (const [env, flags, setting] of [
      [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, [], 'OTEL_EXPORTER_OTLP_ENDPOINT'],
      [{}, ['--otlp-endpoint', 'grpc://collector:4317'], '--otlp-endpoint'],
    ] as const) {
      const result = await cli(['serve', '--db', '/nonexistent/never.sqlite', ...flags], env)
      assert.equal(result.status, 2, setting)
      assert.equal(result.err.split('\n').length, 1, result.err)
      assert.ok(result.err.includes(`invalid ${setting}:`), result.err)
    }
  })

  describe('on PostgreSQL, with the rate limits on Redis', async () => {
    const skip = (await postgresSkip()) || ((await redisSkipReason()) ?? false)
    const prefix = testKeyPrefix('tracing')
    cleanUpKeys(prefix)
    let database: TestDatabase | undefined
    let receiver: OtlpReceiver
    let client: Client
    let created: number
    let exit: Exit

    before(async () => {
      if (skip !== false) return
      receiver = await OtlpReceiver.start()
      database = await createTestDatabase('tracing')
      client = await createClient(database.url)
      const server = await ServeChild.start(database.url, {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_SERVICE_NAME: 'registry-under-test',
        REDIS_URL: TEST_REDIS_URL,
        REDIS_KEY_PREFIX: prefix,
        LOG_LEVEL: 'info',
      })
      try {
        const token = await login(server.url, client)
        const reply = await call(server.url, 'POST', '/v3/beneficiaries', { token, body: MARIO })
        assert.equal(reply.status, 201, reply.body)
        created = Number(reply.json!['id'])
        const read = await call(server.url, 'GET', `/v3/beneficiaries/${created}`, {
          token,
          headers: { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` },
        })
        assert.equal(read.status, 200, read.body)
        await server.waitFor((line) => /^Tracing: /.test(String(line['msg'])))
      } finally {
        // The server sends what is left of its spans before it says "Stopped" and exits.
        exit = await server.kill('SIGTERM')
      }
    })

    after(async () => {
      await receiver?.close()
      await database?.drop()
    })

    it('stops cleanly, having sent its spans under its service name', { skip }, () => {
      assert.equal(exit.code, 0)
      assert.deepEqual(receiver.refused, [])
      assert.ok(receiver.spans.length > 0)
      for (const span of receiver.spans) assert.equal(span.serviceName, 'registry-under-test')
    })

    it(
      'makes the PostgreSQL calls and the Redis take children of the request span',
      { skip },
      () => {
        const create = receiver.one('POST /v3/beneficiaries')
        assert.equal(create.kind, SPAN_KIND.SERVER)
        assert.equal(create.attributes['http.response.status_code'], 201)
        const children = receiver.childrenOf(create)
        const systems = new Map(
          children.map((span) => [span.name, span.attributes['db.system.name']]),
        )
        assert.equal(
          systems.get('beneficiaries.create'),
          'postgresql',
          [...systems.keys()].join(', '),
        )
        assert.equal(systems.get('rate_limits.take'), 'redis', [...systems.keys()].join(', '))
        for (const child of children) assert.equal(child.kind, SPAN_KIND.CLIENT)
      },
    )

    it('continues an incoming traceparent on PostgreSQL too', { skip }, () => {
      const get = receiver.one('GET /v3/beneficiaries/{id}')
      assert.equal(get.traceId, TRACE_ID)
      assert.equal(get.parentSpanId, PARENT_ID)
      assert.equal(get.attributes['http.response.status_code'], 200)
      const reads = receiver.childrenOf(get)
      assert.ok(reads.some((span) => span.attributes['db.system.name'] === 'postgresql'))
      assert.ok(reads.some((span) => span.name === 'rate_limits.take'))
    })

    it('sends no personal value, no id from a path, no key and no secret', { skip }, () => {
      const payload = receiver.payload
      for (const value of [
        MARIO.first_name,
        MARIO.last_name,
        MARIO.fiscal_code,
        MARIO.email,
        MARIO.phone,
        `/v3/beneficiaries/${created}`,
        prefix,
        client.client_id,
        client.client_secret,
      ]) {
        assert.ok(!payload.includes(value), `the payload holds ${value}`)
      }
    })
  })
})
