import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { FreezableProxy } from '../support/freezable-proxy.js'
import {
  createTestDatabase,
  postgresSkip,
  type TestDatabase,
} from '../support/postgres-database.js'
import { PrivateRedis, privateRedisSkip } from '../support/private-services.js'
import {
  cleanUpKeys,
  connectTestRedis,
  keysUnder,
  redisSkipReason,
  testKeyPrefix,
  TEST_REDIS_URL,
} from '../support/redis.js'
import { call, createClient, login, letters, type Client } from './fault-support.js'
import { ServeChild } from './serve-child.js'

/** Every request is answered within this, outage or not: Redis's commands are bounded. */
const ANSWER_WITHIN_MS = 2500

/** Mixed reads and writes from a few lanes until `stop()`; what they saw. */
function load(base: string, token: string, lanes: number) {
  const statuses = new Map<number, number>()
  const unexpected: string[] = []
  let slowest = 0
  let running = true
  let names = 0
  const run = async (lane: number): Promise<void> => {
    while (running) {
      const write = lane === 0
      const name = letters(names++)
      const started = performance.now()
      try {
        const reply = write
          ? await call(base, 'POST', '/v3/beneficiaries', {
              token,
              timeoutMs: ANSWER_WITHIN_MS * 4,
              body: { first_name: name, last_name: 'Outage', email: `${name}@example.org` },
            })
          : await call(base, 'GET', '/v3/beneficiaries?per_page=5&sort=-id', {
              token,
              timeoutMs: ANSWER_WITHIN_MS * 4,
            })
        statuses.set(reply.status, (statuses.get(reply.status) ?? 0) + 1)
        if (reply.status !== (write ? 201 : 200)) unexpected.push(`${reply.status} ${reply.body}`)
      } catch (error) {
        unexpected.push(`no answer (${(error as Error).name})`)
      }
      slowest = Math.max(slowest, performance.now() - started)
      await delay(20)
    }
  }
  const all = Promise.all(Array.from({ length: lanes }, (_, lane) => run(lane)))
  return {
    statuses,
    unexpected,
    /** Requests answered so far. */
    get answered() {
      return [...statuses.values()].reduce((sum, count) => sum + count, 0)
    },
    get slowest() {
      return slowest
    },
    async stop(): Promise<void> {
      running = false
      await all
    },
  }
}

async function waitUntilReady(base: string, withinMs: number): Promise<void> {
  const deadline = performance.now() + withinMs
  while ((await call(base, 'GET', '/readyz')).body !== '{"status":"ready"}') {
    assert.ok(performance.now() < deadline, `not ready within ${withinMs} ms`)
    await delay(100)
  }
}

describe('Redis stopped under load, then started (D31, D30)', async () => {
  // A Redis of this file's own: stopping the machine's would fail the other files' commands.
  const skip = privateRedisSkip() || (await postgresSkip())
  const prefix = testKeyPrefix('outage')
  let redis: PrivateRedis | undefined
  let database: TestDatabase | undefined
  let server: ServeChild | undefined
  after(async () => {
    await server?.kill()
    await redis?.destroy()
    await database?.drop()
  })

  it(
    'keeps serving on per-instance limits (no 500, no hang), says degraded, logs once each way, shares limits again by itself, and revives no revoked token',
    { skip },
    async () => {
      redis = await PrivateRedis.create()
      database = await createTestDatabase('redis_outage')
      const client: Client = await createClient(database.url)
      server = await ServeChild.start(database.url, {
        REDIS_URL: redis.url,
        REDIS_KEY_PREFIX: prefix,
        LOG_LEVEL: 'info',
      })
      const base = server.url
      const token = await login(base, client)
      const revoked = await login(base, client)
      assert.equal((await call(base, 'POST', '/v3/auth/logout', { token: revoked })).status, 204)
      const inspector = await connectTestRedis(redis.url)
      try {
        assert.ok((await keysUnder(inspector, prefix)).includes(`${prefix}auth:127.0.0.1`))
      } finally {
        inspector.destroy()
      }

      const traffic = load(base, token, 3)
      try {
        await delay(500)
        await redis.stop()
        const before = traffic.answered
        await delay(1500)
        const ready = await call(base, 'GET', '/readyz')
        assert.equal(ready.status, 200)
        assert.deepEqual(ready.json, { status: 'degraded', degraded: ['rate_limits'] })
        assert.equal((await call(base, 'GET', '/v3/beneficiaries', { token: revoked })).status, 401)
        assert.ok(traffic.answered > before + 10, 'requests were served while Redis was down')
        await redis.start()
        // Shared again without a restart or a request of ours: the server asks every second.
        await waitUntilReady(base, 10_000)
        await delay(500)
      } finally {
        await traffic.stop()
      }

      assert.deepEqual(traffic.unexpected, [], 'every request answered 200 or 201')
      assert.ok(traffic.slowest < ANSWER_WITHIN_MS, `slowest answer ${traffic.slowest} ms`)
      // Redis restarted empty: the logout, kept in PostgreSQL, still holds.
      const after = await call(base, 'GET', '/v3/beneficiaries', { token: revoked })
      assert.equal(after.status, 401)
      assert.equal(after.json?.['error'], 'invalid_token')
      // The buckets are on Redis again: it had none after its restart.
      const restarted = await connectTestRedis(redis.url)
      try {
        const keys = await keysUnder(restarted, prefix)
        assert.ok(keys.includes(`${prefix}standard:${client.client_id}`), keys.join(', '))
        assert.ok(keys.includes(`${prefix}write:${client.client_id}`), keys.join(', '))
      } finally {
        restarted.destroy()
      }
      const outage = server.lines.filter((line) => /does not answer/.test(String(line['msg'])))
      const recovery = server.lines.filter((line) => /answers again/.test(String(line['msg'])))
      assert.equal(outage.length, 1, 'the outage is logged once')
      assert.equal(outage[0]!['level'], 50)
      assert.equal(recovery.length, 1, 'its end is logged once')
      assert.equal(recovery[0]!['level'], 30)
      assert.ok(Number(recovery[0]!['outage_ms']) >= 1000)
      assert.deepEqual(server.errors, outage, 'nothing else went wrong')
    },
  )
})

describe('Redis hanging (D31)', async () => {
  const skip = (await redisSkipReason()) ?? false
  const prefix = testKeyPrefix('hang')
  const directory = mkdtempSync(join(tmpdir(), 'beneficiaries-redis-hang-'))
  let proxy: FreezableProxy | undefined
  let server: ServeChild | undefined
  after(async () => {
    await server?.kill()
    await proxy?.close()
    rmSync(directory, { recursive: true, force: true })
  })
  cleanUpKeys(prefix)

  it(
    'never holds a request longer than the Redis timeout, and shares limits again once Redis answers',
    { skip },
    async () => {
      const target = new URL(TEST_REDIS_URL)
      proxy = await FreezableProxy.start(target.hostname, Number(target.port || 6379))
      const through = new URL(TEST_REDIS_URL)
      through.hostname = '127.0.0.1'
      through.port = String(proxy.port)
      const db = join(directory, 'hang.sqlite')
      const client = await createClient(db)
      server = await ServeChild.start(db, {
        REDIS_URL: through.toString(),
        REDIS_KEY_PREFIX: prefix,
        // Short enough to see the outage well within the wait below, long enough that a busy
        // machine's pause after the thaw is not taken for a second outage (it was, once, at 100).
        REDIS_TIMEOUT_MS: '250',
        LOG_LEVEL: 'info',
      })
      const base = server.url
      const token = await login(base, client)
      proxy.freeze()
      const traffic = load(base, token, 2)
      try {
        await delay(1500)
        const ready = await call(base, 'GET', '/readyz')
        assert.deepEqual(ready.json, { status: 'degraded', degraded: ['rate_limits'] })
        proxy.thaw()
        await waitUntilReady(base, 5000)
      } finally {
        await traffic.stop()
      }
      assert.deepEqual(traffic.unexpected, [])
      assert.ok(traffic.slowest < 1000, `slowest answer ${traffic.slowest} ms`)
      assert.equal(server.errors.length, 1, 'the outage, once')
      assert.equal(
        server.lines.filter((line) => /answers again/.test(String(line['msg']))).length,
        1,
      )
    },
  )
})
