import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { readServeConfig } from '../../../server/cli/serve-config.js'
import { Settings } from '../../../server/cli/settings.js'
import { call, createClient } from '../../faults/fault-support.js'
import { ServeChild } from '../../faults/serve-child.js'
import {
  cleanUpKeys,
  connectTestRedis,
  keysUnder,
  redisSkipReason,
  testKeyPrefix,
  TEST_REDIS_URL,
} from '../../support/redis.js'
import { cli } from '../../support/cli-in-process.js'

let directory: string
before(() => {
  directory = mkdtempSync(join(tmpdir(), 'beneficiaries-cli-redis-'))
})
after(() => rmSync(directory, { recursive: true, force: true }))

describe('serve --redis-url', () => {
  it('refuses a URL that is not Redis, and a timeout out of range, with status 2 and one line', async () => {
    const cases: [Record<string, string>, string[], string][] = [
      [{ REDIS_URL: 'http://127.0.0.1:6379' }, [], 'REDIS_URL'],
      [{}, ['--redis-url', '127.0.0.1:6379'], '--redis-url'],
      [{ REDIS_URL: 'redis://' }, [], 'REDIS_URL'],
      [{ REDIS_URL: 'redis://127.0.0.1' }, ['--redis-timeout', '0'], '--redis-timeout'],
      [{ REDIS_URL: 'redis://127.0.0.1', REDIS_TIMEOUT_MS: '20000' }, [], 'REDIS_TIMEOUT_MS'],
      [{ REDIS_URL: 'https://:hunter2-9f@cache.internal' }, [], 'REDIS_URL'],
    ]
    const db = join(directory, 'never.sqlite')
    for (const [env, flags, setting] of cases) {
      const result = await cli(['serve', '--db', db, ...flags], env)
      assert.equal(result.status, 2, setting)
      assert.equal(result.err.split('\n').length, 1, setting)
      assert.ok(result.err.includes(`invalid ${setting}:`), result.err)
      assert.doesNotMatch(result.err, /hunter2/)
    }
    assert.equal(existsSync(db), false, 'nothing was opened')
  })

  it('is documented in serve --help with its variable, key prefix and timeout', async () => {
    const help = await cli(['serve', '--help'])
    assert.equal(help.status, 0)
    for (const text of ['--redis-url URL', 'REDIS_URL', '--redis-key-prefix', '--redis-timeout']) {
      assert.ok(help.out.includes(text), text)
    }
  })

  it('is read from the flag, else REDIS_URL, with the default prefix and timeout; without it limits stay in process', () => {
    const read = (flags: Record<string, string>, env: Record<string, string>) =>
      readServeConfig(new Settings(flags, env)).redis
    assert.equal(read({}, {}), undefined)
    assert.deepEqual(read({}, { REDIS_URL: 'redis://cache:6379/2' }), {
      url: 'redis://cache:6379/2',
      keyPrefix: 'beneficiary-service:rate-limit:',
      timeoutMs: 250,
    })
    assert.deepEqual(
      read(
        { 'redis-url': 'rediss://cache:6380', 'redis-key-prefix': 'blue:', 'redis-timeout': '100' },
        { REDIS_URL: 'redis://other:6379', REDIS_KEY_PREFIX: 'green:', REDIS_TIMEOUT_MS: '900' },
      ),
      { url: 'rediss://cache:6380', keyPrefix: 'blue:', timeoutMs: 100 },
    )
  })

  describe('with Redis', async () => {
    const skip = (await redisSkipReason()) ?? false
    const prefix = testKeyPrefix('cli')
    cleanUpKeys(prefix)
    const servers: ServeChild[] = []
    after(async () => {
      await Promise.all(servers.map((server) => server.kill()))
    })

    it(
      'two servers on one database share the auth limit through Redis, under the key prefix',
      { skip },
      async () => {
        const db = join(directory, 'shared.sqlite')
        const client = await createClient(db)
        const env = {
          REDIS_URL: TEST_REDIS_URL,
          REDIS_KEY_PREFIX: prefix,
          RATE_LIMIT_AUTH: '3',
          LOG_LEVEL: 'info',
        }
        const one = await ServeChild.start(db, env)
        servers.push(one)
        const two = await ServeChild.start(db, env)
        servers.push(two)
        const statuses: number[] = []
        for (const server of [one, two, one, two]) {
          statuses.push((await call(server.url, 'POST', '/v3/auth/login', { body: client })).status)
        }
        // Per instance, each would have allowed three: together they allow three.
        assert.deepEqual(statuses, [200, 200, 200, 429])
        const redis = await connectTestRedis()
        try {
          assert.deepEqual(await keysUnder(redis, prefix), [`${prefix}auth:127.0.0.1`])
        } finally {
          redis.destroy()
        }
        for (const server of [one, two]) {
          assert.equal((await call(server.url, 'GET', '/readyz')).body, '{"status":"ready"}')
          const shared = await server.waitFor((line) =>
            /shared through Redis/.test(String(line['msg'])),
          )
          assert.equal(shared['redis'], new URL(TEST_REDIS_URL).toString())
          assert.ok(!server.lines.some((line) => /per instance/.test(String(line['msg']))))
          assert.deepEqual(server.errors, [])
        }
      },
    )

    it(
      'starts while Redis is unreachable, limits per instance, says so once and on /readyz, and never logs the password',
      { skip },
      async () => {
        const db = join(directory, 'refused.sqlite')
        const client = await createClient(db)
        // Nothing listens on port 1: every connection attempt is refused.
        const refused = new URL('redis://:not-a-real-password-3c1@127.0.0.1:1')
        const server = await ServeChild.start(db, {
          REDIS_URL: refused.toString(),
          REDIS_KEY_PREFIX: prefix,
          RATE_LIMIT_AUTH: '2',
          LOG_LEVEL: 'info',
        })
        servers.push(server)
        const ready = await call(server.url, 'GET', '/readyz')
        assert.equal(ready.status, 200)
        assert.deepEqual(ready.json, { status: 'degraded', degraded: ['rate_limits'] })
        const statuses: number[] = []
        for (let i = 0; i < 3; i++) {
          statuses.push((await call(server.url, 'POST', '/v3/auth/login', { body: client })).status)
        }
        assert.deepEqual(statuses, [200, 200, 429], 'the limit holds on the instance')
        // Further checks of Redis (each readiness probe makes one), each refused, still make one line.
        for (let i = 0; i < 3; i++) {
          assert.equal((await call(server.url, 'GET', '/readyz')).status, 200)
        }
        const outages = server.lines.filter((line) => /does not answer/.test(String(line['msg'])))
        assert.equal(outages.length, 1)
        assert.equal(outages[0]!['level'], 50)
        assert.equal(outages[0]!['redis'], 'redis://:***@127.0.0.1:1')
        assert.deepEqual(outages[0]!['err'], { type: 'ClientOfflineError' })
        // The limits are per instance from the start: no line says they are shared.
        assert.ok(!server.lines.some((line) => /shared/.test(String(line['msg']))))
        assert.equal((await server.kill('SIGTERM')).code, 0)
        assert.doesNotMatch(JSON.stringify(server.lines) + server.stderr, /not-a-real-password-3c1/)
      },
    )
  })
})
