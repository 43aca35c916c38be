import { randomBytes } from 'node:crypto'
import { after } from 'node:test'
import { createClient } from '@redis/client'
import { redactedUrl } from '../../server/cli/redacted-url.js'

/**
 * The Redis the tests use: `TEST_REDIS_URL`, or the one every machine of the project runs
 * (../shared/SERVICES.md). Each test file keeps its keys under a prefix of its own.
 */
export const TEST_REDIS_URL = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379'

/** The one line a skipped file prints: how to run the tests that need Redis. */
const HOW_TO_RUN =
  'start it (redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log) or set TEST_REDIS_URL'

function newTestClient(url = TEST_REDIS_URL) {
  return createClient({ url, disableOfflineQueue: true })
}

/** A node-redis client, as the tests make them. */
export type TestRedisClient = ReturnType<typeof newTestClient>

let probe: Promise<string | undefined> | undefined

/**
 * Why the tests that need Redis must skip, or `undefined` when it answers. Asked once per
 * process. Under `CI=true` a Redis that does not answer is a failure, never a skip: the promise
 * rejects, and so does the import of the test file that awaits it.
 */
export function redisSkipReason(): Promise<string | undefined> {
  probe ??= (async () => {
    const client = createClient({
      url: TEST_REDIS_URL,
      socket: { connectTimeout: 3000, reconnectStrategy: false },
    })
    client.on('error', () => undefined)
    try {
      await client.connect()
      await client.ping()
      return undefined
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error)
      const where = redactedUrl(TEST_REDIS_URL, 'TEST_REDIS_URL')
      if (process.env['CI'] === 'true') {
        throw new Error(`Redis at ${where} does not answer, and CI=true: ${detail}`)
      }
      return `Redis at ${where} does not answer (${detail}): ${HOW_TO_RUN}`
    } finally {
      client.destroy()
    }
  })()
  return probe
}

/** A fresh key prefix for one test file: `test:<label>:<random>:`. */
export function testKeyPrefix(label: string): string {
  return `test:${label}:${randomBytes(6).toString('hex')}:`
}

/**
 * A connected client to the test Redis (or the one at `url`), which the caller closes
 * (`destroy()`).
 */
export async function connectTestRedis(url = TEST_REDIS_URL): Promise<TestRedisClient> {
  const client = newTestClient(url)
  client.on('error', () => undefined)
  await client.connect()
  return client
}

/** Every key under `prefix`. */
export async function keysUnder(client: TestRedisClient, prefix: string): Promise<string[]> {
  const keys: string[] = []
  for await (const batch of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) {
    keys.push(...batch)
  }
  return keys
}

/**
 * Registers an `after` hook that deletes every key under `prefix`, so that a file leaves
 * nothing behind in the shared Redis. A Redis that is down by then is left alone.
 */
export function cleanUpKeys(prefix: string): void {
  after(async () => {
    let client: TestRedisClient
    try {
      client = await connectTestRedis()
    } catch {
      return
    }
    try {
      const keys = await keysUnder(client, prefix)
      if (keys.length > 0) await client.unlink(keys)
    } finally {
      client.destroy()
    }
  })
}
