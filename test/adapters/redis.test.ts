import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import {
  openRedisRateLimitStore,
  RedisRateLimitStore,
  type RedisCommandClient,
} from '../../adapters/redis/index.js'
import { StorageUnavailableError } from '../../core/errors.js'
import { ServerMetrics } from '../../server/metrics/server-metrics.js'
import type { BucketPolicy, RateLimitStore } from '../../core/ports/rate-limit-store.js'
import { describeRateLimitStoreContract } from '../contracts/rate-limit-store.contract.js'
import { FreezableProxy } from '../support/freezable-proxy.js'
import {
  cleanUpKeys,
  connectTestRedis,
  keysUnder,
  redisSkipReason,
  testKeyPrefix,
  TEST_REDIS_URL,
  type TestRedisClient,
} from '../support/redis.js'

const skip = (await redisSkipReason()) ?? false

/** 10 per hour: no token comes back while a test runs (one every 6 minutes). */
const SLOW: BucketPolicy = { capacity: 10, windowMs: 3_600_000 }
/** 10 per minute, the write class of D19. */
const WRITE: BucketPolicy = { capacity: 10, windowMs: 60_000 }

describe('Redis rate-limit store', { skip }, () => {
  const prefix = testKeyPrefix('redis-store')
  cleanUpKeys(prefix)
  const opened: RedisRateLimitStore[] = []
  let admin: TestRedisClient
  let stores = 0
  before(async () => {
    admin = await connectTestRedis()
  })
  after(async () => {
    await Promise.all(opened.map((store) => store.close()))
    admin?.destroy()
  })

  /** A store of its own under a fresh prefix (its buckets are nobody else's), closed in `after`. */
  async function open(
    options: { clock?: 'redis' | 'caller'; keyPrefix?: string; url?: string } = {},
  ): Promise<RedisRateLimitStore> {
    const store = await openRedisRateLimitStore({
      url: options.url ?? TEST_REDIS_URL,
      keyPrefix: options.keyPrefix ?? `${prefix}${stores++}:`,
      ...(options.clock !== undefined && { clock: options.clock }),
    })
    opened.push(store)
    return store
  }

  // The contract counts time in FakeClock instants (2024): only the caller's clock can follow it.
  describeRateLimitStoreContract({
    name: 'redis',
    create: () =>
      openRedisRateLimitStore({
        url: TEST_REDIS_URL,
        keyPrefix: `${prefix}contract-${stores++}:`,
        clock: 'caller',
      }),
    destroy: (store) => (store as RedisRateLimitStore).close(),
  })

  describe("whose clock: Redis's by default", () => {
    it('lets no instance refill a bucket early, however far its own clock runs ahead', async () => {
      const keyPrefix = `${prefix}skew-${stores++}:`
      const onTime = await open({ keyPrefix })
      const ahead = await open({ keyPrefix })
      assert.equal(onTime.clock, 'redis')
      for (let i = 0; i < WRITE.capacity; i++) {
        assert.equal((await onTime.take('client-1', WRITE, Date.now())).allowed, true)
      }
      // An hour ahead: with the caller's clock, this take would find a full bucket.
      const refused = await ahead.take('client-1', WRITE, Date.now() + 3_600_000)
      assert.equal(refused.allowed, false)
      assert.ok(
        refused.retryAfterMs > 4000 && refused.retryAfterMs <= 6000,
        `${refused.retryAfterMs}`,
      )
      assert.equal(refused.tokens < 0.4, true)
      // And one far behind cannot push the bucket's clock back.
      assert.equal((await onTime.take('client-1', WRITE, 0)).allowed, false)
    })

    it('with the caller clock, trusts each caller: a clock a minute ahead refills the bucket (why the default is Redis)', async () => {
      const keyPrefix = `${prefix}caller-skew-${stores++}:`
      const onTime = await open({ keyPrefix, clock: 'caller' })
      const ahead = await open({ keyPrefix, clock: 'caller' })
      const now = Date.now()
      for (let i = 0; i < WRITE.capacity; i++) await onTime.take('client-1', WRITE, now)
      assert.equal((await onTime.take('client-1', WRITE, now)).allowed, false)
      assert.equal((await ahead.take('client-1', WRITE, now + 60_000)).tokens, WRITE.capacity - 1)
    })

    it("never moves a bucket's clock back, even when Redis's own clock steps back", async () => {
      const store = await open()
      const key = 'stepped-back'
      const [seconds] = (await admin.sendCommand(['TIME'])) as [string, string]
      const future = Number(seconds) * 1000 + 60_000
      // As if the bucket had been drained a minute from now by the clock Redis had then.
      await admin.hSet(`${store.keyPrefix}${key}`, { units: '0', clock: String(future) })
      const refused = await store.take(key, WRITE, Date.now())
      assert.deepEqual(refused, { allowed: false, tokens: 0, retryAfterMs: 6000, resetMs: 60_000 })
      const state = await admin.hGetAll(`${store.keyPrefix}${key}`)
      assert.deepEqual(state, { units: '0', clock: String(future) })
    })
  })

  it('allows exactly capacity of concurrent takes sent by two instances over two connections', async () => {
    const keyPrefix = `${prefix}concurrent-${stores++}:`
    const [one, two] = [await open({ keyPrefix }), await open({ keyPrefix })]
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? one : two).take('c', SLOW, 0)),
    )
    assert.equal(results.filter((result) => result.allowed).length, SLOW.capacity)
    assert.deepEqual(
      results
        .filter((result) => result.allowed)
        .map((result) => Math.floor(result.tokens))
        .sort((a, b) => a - b),
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    )
  })

  it('keeps its keys under its prefix, expiring a window after the last take', async () => {
    const store = await open()
    await store.take('write:client-1', WRITE, Date.now())
    assert.deepEqual(await keysUnder(admin, store.keyPrefix), [`${store.keyPrefix}write:client-1`])
    const ttl = await admin.pTTL(`${store.keyPrefix}write:client-1`)
    assert.ok(ttl > WRITE.windowMs - 5000 && ttl <= WRITE.windowMs, `PTTL ${ttl}`)
  })

  it('sends one command per take, and sends the script again after Redis forgot it', async () => {
    const sent: string[] = []
    const counting: RedisCommandClient = {
      sendCommand: (args, options) => {
        sent.push(args[0]!)
        return admin.sendCommand(args, options)
      },
    }
    const store = new RedisRateLimitStore({
      client: counting,
      keyPrefix: `${prefix}rt-${stores++}:`,
    })
    await store.take('a', SLOW, 0)
    sent.length = 0
    for (let i = 0; i < 5; i++) await store.take('a', SLOW, 0)
    assert.deepEqual(sent, Array<string>(5).fill('EVALSHA'))
    // What a restart does to the script cache.
    await admin.scriptFlush()
    sent.length = 0
    const after = await store.take('a', SLOW, 0)
    assert.deepEqual(sent, ['EVALSHA', 'EVAL'])
    assert.equal(after.allowed, true)
    assert.equal(Math.floor(after.tokens), 3)
  })

  it('rejects within its timeout, never later, when Redis hangs; answers again once it does; closes without waiting for it', async () => {
    const url = new URL(TEST_REDIS_URL)
    const proxy = await FreezableProxy.start(url.hostname, Number(url.port || 6379))
    try {
      const through = new URL(TEST_REDIS_URL)
      through.hostname = '127.0.0.1'
      through.port = String(proxy.port)
      const store = await open({ url: through.toString() })
      assert.equal(store.connected, true)
      assert.equal((await store.take('h', SLOW, 0)).allowed, true)
      proxy.freeze()
      const started = performance.now()
      await assert.rejects(store.take('h', SLOW, 0), StorageUnavailableError)
      const waited = performance.now() - started
      assert.ok(waited >= 200 && waited < 1000, `rejected after ${waited} ms`)
      await assert.rejects(store.ping(), StorageUnavailableError)
      proxy.thaw()
      await store.ping()
      assert.equal((await store.take('h', SLOW, 0)).allowed, true)
      // A shutdown does not wait for the answers of a Redis that hangs.
      proxy.freeze()
      await assert.rejects(store.ping(), StorageUnavailableError)
      const closing = performance.now()
      await store.close()
      assert.ok(performance.now() - closing < 1000)
    } finally {
      await proxy.close()
    }
  })

  it('opens while Redis is unreachable, rejects every take at once, and closes', async () => {
    const store = await open({ url: 'redis://127.0.0.1:1' })
    assert.equal(store.connected, false)
    const started = performance.now()
    const failure = await store.take('x', WRITE, 0).then(
      () => assert.fail('a take succeeded without Redis'),
      (error: unknown) => error,
    )
    assert.ok(failure instanceof StorageUnavailableError)
    assert.equal(failure.code, 'service_unavailable')
    // At once: not after a connection or command timeout (seconds).
    assert.ok(performance.now() - started < 1000)
  })

  it("times every command for the server's metrics: answered ones and failed ones", async () => {
    const metrics = new ServerMetrics({ defaultMetrics: false })
    const up = await open()
    const down = await open({ url: 'redis://127.0.0.1:1' })
    const seen: [number, boolean][] = []
    up.observeRoundTrips((seconds, answered) => seen.push([seconds, answered]))
    up.observeRoundTrips(() => {
      throw new Error('a broken listener fails no take')
    })
    metrics.watchRedis(up)
    metrics.watchRedis(down)
    await up.take('timed', WRITE, 0)
    await up.ping()
    await assert.rejects(down.take('timed', WRITE, 0), StorageUnavailableError)
    assert.equal(seen.length, 2)
    for (const [seconds, answered] of seen) {
      assert.equal(answered, true)
      assert.ok(seconds > 0 && seconds < up.commandTimeoutMs / 1000, String(seconds))
    }
    const text = await metrics.registry.metrics()
    const count = (outcome: string) =>
      Number(
        new RegExp(
          `^beneficiary_redis_round_trip_seconds_count\\{outcome="${outcome}"\\} (\\d+)$`,
          'm',
        ).exec(text)?.[1],
      )
    assert.equal(count('answered'), 2)
    assert.equal(count('failed'), 1)
  })

  it('refuses a URL that is not Redis without repeating it, and settings out of range', async () => {
    for (const url of ['http://user:hunter2@127.0.0.1:6379', 'redis://', 'not a url']) {
      const error = await openRedisRateLimitStore({ url }).then(
        () => assert.fail(`opened ${url}`),
        (failure: unknown) => failure,
      )
      assert.ok(error instanceof TypeError)
      assert.doesNotMatch(error.message, /hunter2/)
    }
    const client: RedisCommandClient = { sendCommand: () => Promise.resolve('OK') }
    assert.throws(() => new RedisRateLimitStore({ client, commandTimeoutMs: 0 }), TypeError)
    // @ts-expect-error: a clock that does not exist
    assert.throws(() => new RedisRateLimitStore({ client, clock: 'system' }), TypeError)
    const caller: RateLimitStore = new RedisRateLimitStore({ client, clock: 'caller' })
    await assert.rejects(caller.take('k', WRITE, Number.NaN), TypeError)
  })

  it('turns an unexpected reply into StorageUnavailableError', async () => {
    const client: RedisCommandClient = { sendCommand: () => Promise.resolve([1, '1e5']) }
    await assert.rejects(
      new RedisRateLimitStore({ client }).take('k', WRITE, 0),
      StorageUnavailableError,
    )
  })
})
