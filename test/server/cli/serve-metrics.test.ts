import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { readServeConfig } from '../../../server/cli/serve-config.js'
import { Settings } from '../../../server/cli/settings.js'
import { call, createClient, login } from '../../faults/fault-support.js'
import { ServeChild } from '../../faults/serve-child.js'
import { createTestDatabase, postgresSkip } from '../../support/postgres-database.js'
import { parsePrometheusText, sampleValue } from '../../support/prometheus-text.js'
import { MARIO } from '../server-fixtures.js'
import { cli } from '../../support/cli-in-process.js'

const TOKEN = 'c0ffee0123456789abcdef0123456789'

let directory: string
before(() => {
  directory = mkdtempSync(join(tmpdir(), 'beneficiaries-metrics-'))
})
after(() => rmSync(directory, { recursive: true, force: true }))

describe('serve --metrics', () => {
  it('is public by default, and asks for the token when METRICS_TOKEN is set', () => {
    const config = (flags: Record<string, string>, env: Record<string, string>) =>
      readServeConfig(new Settings(flags, env))
    assert.equal(config({}, {}).metrics, 'public')
    assert.equal(config({}, {}).metricsToken, undefined)
    const guarded = config({}, { METRICS_TOKEN: TOKEN })
    assert.equal(guarded.metrics, 'token')
    assert.equal(guarded.metricsToken, TOKEN)
    assert.equal(config({ metrics: 'off' }, {}).metrics, 'off')
    assert.equal(config({}, { METRICS: 'token', METRICS_TOKEN: TOKEN }).metrics, 'token')
  })

  it('refuses a bad mode, a token mode without a token, a weak token and an unused one (status 2, one line)', async () => {
    const cases: [Record<string, string>, string[], string][] = [
      [{ METRICS: 'loud' }, [], 'METRICS'],
      [{}, ['--metrics', 'token'], '--metrics'],
      [{ METRICS_TOKEN: 'short-secret' }, [], 'METRICS_TOKEN'],
      [{ METRICS_TOKEN: 'has spaces in it, sixteen+' }, [], 'METRICS_TOKEN'],
      [{ METRICS_TOKEN: TOKEN }, ['--metrics', 'public'], '--metrics'],
      [{ METRICS: 'off', METRICS_TOKEN: TOKEN }, [], 'METRICS'],
    ]
    for (const [env, flags, setting] of cases) {
      const result = await cli(['serve', '--db', join(directory, 'never.sqlite'), ...flags], env)
      assert.equal(result.status, 2, setting)
      assert.equal(result.err.split('\n').length, 1, setting)
      assert.ok(result.err.includes(`invalid ${setting}:`), result.err)
      // A token is a secret: never repeated.
      for (const secret of [TOKEN, 'short-secret', 'has spaces']) {
        assert.ok(!result.err.includes(secret), result.err)
      }
    }
    // No flag takes the token: other users of the machine would see it.
    const flag = await cli(['serve', '--metrics-token', TOKEN])
    assert.equal(flag.status, 2)
    assert.ok(!flag.err.includes(TOKEN))
  })

  it('serves the SQLite group commits behind the token, and nothing with --metrics off', async () => {
    const db = join(directory, 'metrics.sqlite')
    const client = await createClient(db)
    const server = await ServeChild.start(db, { METRICS_TOKEN: TOKEN })
    try {
      const listening = server.lines.find((line) => typeof line['url'] === 'string')!
      assert.equal(listening['metrics'], 'token')
      assert.equal((await call(server.url, 'GET', '/metrics')).status, 401)
      const token = await login(server.url, client)
      const creates = ['a', 'b', 'c', 'd'].map((name) =>
        call(server.url, 'POST', '/v3/beneficiaries', {
          token,
          body: { ...MARIO, fiscal_code: undefined, email: `${name}@example.org` },
        }),
      )
      for (const created of await Promise.all(creates)) assert.equal(created.status, 201)
      const response = await fetch(`${server.url}/metrics`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      })
      assert.equal(response.status, 200)
      const families = parsePrometheusText(await response.text())
      const writes = 'beneficiary_sqlite_group_commit_writes'
      assert.ok(sampleValue(families, `${writes}_count`) >= 1)
      assert.ok(sampleValue(families, `${writes}_sum`) >= 4)
      assert.equal(families.has('beneficiary_postgres_pool_connections'), false)
      const requests = { route: '/v3/beneficiaries', method: 'POST', status: '201' }
      assert.equal(sampleValue(families, 'beneficiary_http_requests_total', requests), 4)
    } finally {
      assert.equal((await server.kill('SIGTERM')).code, 0)
    }

    const off = await ServeChild.start(db, { METRICS: 'off' })
    try {
      const answer = await call(off.url, 'GET', '/metrics')
      assert.equal(answer.status, 404)
      assert.equal(answer.json?.['error'], 'not_found')
    } finally {
      await off.kill('SIGTERM')
    }
  })

  it('serves the PostgreSQL pool in use and waiting', async (t) => {
    const skip = await postgresSkip()
    if (skip !== false) return t.skip(skip)
    const database = await createTestDatabase('metrics_pg')
    let server: ServeChild | undefined
    try {
      server = await ServeChild.start(database.url, { DATABASE_POOL_SIZE: '3' })
      assert.equal((await call(server.url, 'GET', '/readyz')).status, 200)
      const answer = await call(server.url, 'GET', '/metrics')
      assert.equal(answer.status, 200)
      const families = parsePrometheusText(answer.body)
      const connections = 'beneficiary_postgres_pool_connections'
      const inUse = sampleValue(families, connections, { state: 'in_use' })
      const idle = sampleValue(families, connections, { state: 'idle' })
      assert.ok(idle >= 1 && inUse >= 0 && inUse + idle <= 3, `${inUse} in use, ${idle} idle`)
      assert.equal(sampleValue(families, 'beneficiary_postgres_pool_waiting'), 0)
      assert.equal(families.has('beneficiary_sqlite_group_commit_writes'), false)
    } finally {
      await server?.kill('SIGTERM')
      await database.drop()
    }
  })
})
