import assert from 'node:assert/strict'
import { execFile, spawnSync } from 'node:child_process'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { after, describe, it } from 'node:test'
import {
  createTestDatabase,
  postgresSkip,
  type TestDatabase,
} from '../support/postgres-database.js'
import { cleanUpKeys, redisSkipReason, testKeyPrefix, TEST_REDIS_URL } from '../support/redis.js'

const run = promisify(execFile)
const MAIN = fileURLToPath(new URL('../../examples/scale-out/main.js', import.meta.url))

/**
 * `false` when HAProxy is installed; otherwise the line the suite skips with. CI installs it
 * (`.ci/run`), so there a missing HAProxy fails.
 */
function haproxySkip(): string | false {
  if (spawnSync('haproxy', ['-v'], { stdio: 'ignore' }).status === 0) return false
  if (process.env['CI'] === 'true') throw new Error('haproxy is not installed and CI=true')
  return 'haproxy is not installed (apt-get install haproxy) for the scale-out example'
}

/** `count` ports that were free a moment ago on 127.0.0.1. */
async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
          const server = createServer()
          server.once('error', reject)
          server.listen(0, '127.0.0.1', () => resolve(server))
        }),
    ),
  )
  const ports = servers.map((server) => (server.address() as { port: number }).port)
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))))
  return ports
}

describe('the scale-out example', async () => {
  const skip = haproxySkip() || (await postgresSkip()) || ((await redisSkipReason()) ?? false)
  const prefix = testKeyPrefix('scale_out')
  let database: TestDatabase | undefined
  after(() => database?.drop())
  if (!skip) cleanUpKeys(prefix)

  it(
    'runs three instances behind HAProxy: the shared write limit, a logout everywhere, no spoofed auth limit',
    { skip },
    async () => {
      database = await createTestDatabase('scale_out')
      const [lb, a, b, c] = await freePorts(4)
      const env: Record<string, string | undefined> = {
        ...process.env,
        DATABASE_URL: database.url,
        REDIS_URL: TEST_REDIS_URL,
        REDIS_KEY_PREFIX: prefix,
        LB_PORT: String(lb),
        INSTANCE_PORTS: `${a},${b},${c}`,
      }
      delete env['NODE_TEST_CONTEXT']
      const { stdout } = await run(process.execPath, [MAIN], { timeout: 60_000, env }).catch(
        (error: { stdout?: string; stderr?: string }) => {
          assert.fail(`the example failed:\n${error.stdout ?? ''}\n${error.stderr ?? ''}`)
        },
      )
      assert.match(stdout, new RegExp(`balancer http://127\\.0\\.0\\.1:${lb} \\(HAProxy\\)`))
      for (let n = 1; n <= 10; n++) {
        assert.match(stdout, new RegExp(`^write ${n}: 201 from [abc], ${10 - n} left$`, 'm'))
      }
      assert.match(stdout, /^write 11: 429 from [abc], retry after \d+ s/m)
      assert.match(stdout, /^the same token: 401 invalid_token from [abc], [abc], [abc]$/m)
      assert.match(stdout, /^its refresh token: 401 from [abc]$/m)
      assert.match(stdout, /logins with a forged X-Forwarded-For: the last got 429/)
      assert.match(stdout, /^scale-out: ok$/m)
      // It cleaned up after itself: neither the balancer nor an instance answers any more.
      for (const port of [lb, a, b, c]) {
        const left = await fetch(`http://127.0.0.1:${port}/healthz`).then(
          () => 'answering',
          () => 'gone',
        )
        assert.equal(left, 'gone', `port ${port} still answers after the example ended`)
      }
    },
  )
})
