import assert from 'node:assert/strict'
import { afterEach, beforeEach, describe, it } from 'node:test'
import type { BucketPolicy, RateLimitStore, TakeResult } from '../../core/ports/rate-limit-store.js'
import { SECOND, T0 } from './storage-fixtures.js'

/** What a store's test file passes to `describeRateLimitStoreContract`. */
export interface RateLimitStoreContractOptions {
  /** Shown in the test names, e.g. `local` or `redis`. */
  readonly name: string
  /** A new store holding no buckets; called before every test. */
  readonly create: () => Promise<RateLimitStore>
  /** Releases a store made by `create`; called after every test. */
  readonly destroy: (store: RateLimitStore) => Promise<void>
}

/** The write class of D19: 10 per minute, so one token comes back every 6 s. */
const WRITE: BucketPolicy = { capacity: 10, windowMs: 60 * SECOND }
/** The auth class of D19: 5 per minute, one token every 12 s. */
const AUTH: BucketPolicy = { capacity: 5, windowMs: 60 * SECOND }

/**
 * Registers, with node:test, every behaviour the `RateLimitStore` port promises (D20), run
 * against a fresh store from `options.create()` for each test. Time is only ever the `now`
 * passed to `take`, so a store shared by several processes runs it unchanged.
 *
 * @example
 * describeRateLimitStoreContract({
 *   name: 'local',
 *   create: async () => new LocalRateLimitStore(),
 *   destroy: async () => {},
 * })
 */
export function describeRateLimitStoreContract(options: RateLimitStoreContractOptions): void {
  describe(`${options.name} rate-limit store contract (D20)`, () => {
    let current: RateLimitStore | undefined
    beforeEach(async () => {
      current = await options.create()
    })
    afterEach(async () => {
      const store = current
      current = undefined
      if (store !== undefined) await options.destroy(store)
    })
    const store = (): RateLimitStore => {
      if (current === undefined) throw new Error('the store exists only while a test runs')
      return current
    }

    /** Takes `count` tokens one after the other at `now`; returns every answer. */
    async function takeMany(
      key: string,
      policy: BucketPolicy,
      now: number,
      count: number,
    ): Promise<TakeResult[]> {
      const results: TakeResult[] = []
      for (let i = 0; i < count; i++) results.push(await store().take(key, policy, now))
      return results
    }

    /** Takes every token of a fresh bucket at `now`, leaving it empty. */
    async function drain(key: string, policy: BucketPolicy, now: number): Promise<void> {
      const results = await takeMany(key, policy, now, policy.capacity)
      assert.ok(results.every((result) => result.allowed))
    }

    it('answers the first take of an unknown key from a full bucket', async () => {
      assert.deepEqual(await store().take('client-1', WRITE, T0), {
        allowed: true,
        tokens: 9,
        retryAfterMs: 0,
        resetMs: 6000,
      })
    })

    it('allows exactly capacity takes at one instant, then refuses with the exact wait', async () => {
      const results = await takeMany('client-1', WRITE, T0, 10)
      assert.deepEqual(
        results.map((result) => [result.allowed, result.tokens]),
        [9, 8, 7, 6, 5, 4, 3, 2, 1, 0].map((tokens) => [true, tokens]),
      )
      assert.deepEqual(results.at(-1), {
        allowed: true,
        tokens: 0,
        retryAfterMs: 6000,
        resetMs: 60_000,
      })
      assert.deepEqual(await store().take('client-1', WRITE, T0), {
        allowed: false,
        tokens: 0,
        retryAfterMs: 6000,
        resetMs: 60_000,
      })
    })

    it('gives one token back after exactly windowMs / capacity, not a millisecond sooner', async () => {
      await drain('client-1', WRITE, T0)
      const early = await store().take('client-1', WRITE, T0 + 5999)
      assert.equal(early.allowed, false)
      assert.equal(early.retryAfterMs, 1)
      assert.deepEqual(await store().take('client-1', WRITE, T0 + 6000), {
        allowed: true,
        tokens: 0,
        retryAfterMs: 6000,
        resetMs: 60_000,
      })
      assert.equal((await store().take('client-1', WRITE, T0 + 6000)).allowed, false)
    })

    it('refills continuously: half a token after half the interval, and a refusal costs nothing', async () => {
      await drain('client-1', WRITE, T0)
      assert.deepEqual(await store().take('client-1', WRITE, T0 + 3000), {
        allowed: false,
        tokens: 0.5,
        retryAfterMs: 3000,
        resetMs: 57_000,
      })
      assert.deepEqual(await store().take('client-1', WRITE, T0 + 9000), {
        allowed: true,
        tokens: 0.5,
        retryAfterMs: 3000,
        resetMs: 57_000,
      })
    })

    for (const policy of [
      { capacity: 5, windowMs: 60_000 },
      { capacity: 100, windowMs: 60_000 },
      { capacity: 7, windowMs: 60_000 },
      { capacity: 3, windowMs: 1000 },
    ]) {
      const interval = Math.ceil(policy.windowMs / policy.capacity)
      it(`keeps its promise for ${policy.capacity} per ${policy.windowMs} ms: refused at ${interval - 1} ms, allowed at ${interval}`, async () => {
        await drain('client-1', policy, T0)
        const refused = await store().take('client-1', policy, T0)
        assert.equal(refused.allowed, false)
        assert.equal(refused.retryAfterMs, interval)
        assert.equal(refused.resetMs, policy.windowMs)
        const early = await store().take('client-1', policy, T0 + interval - 1)
        assert.equal(early.allowed, false)
        assert.equal(early.retryAfterMs, 1)
        assert.equal((await store().take('client-1', policy, T0 + interval)).allowed, true)
      })
    }

    it('reports resetMs as the exact time until the bucket is full again', async () => {
      const policy = { capacity: 3, windowMs: 1000 }
      assert.equal((await store().take('client-3', policy, T0)).resetMs, 334)
      assert.equal((await store().take('client-3', policy, T0)).resetMs, 667)
      assert.equal((await store().take('client-3', policy, T0)).resetMs, 1000)
      assert.equal((await store().take('client-1', WRITE, T0)).resetMs, 6000)
      await takeMany('client-1', WRITE, T0, 2)
      assert.equal((await store().take('client-1', WRITE, T0)).resetMs, 24_000)
    })

    it('never holds more than capacity, however long the bucket stays idle', async () => {
      await store().take('client-1', WRITE, T0)
      const afterTenWindows = await store().take('client-1', WRITE, T0 + 10 * WRITE.windowMs)
      assert.deepEqual(afterTenWindows, {
        allowed: true,
        tokens: 9,
        retryAfterMs: 0,
        resetMs: 6000,
      })
      const later = T0 + 1_000_000 * WRITE.windowMs
      const results = await takeMany('client-1', WRITE, later, 11)
      assert.deepEqual(
        results.map((result) => result.allowed),
        [...Array<boolean>(10).fill(true), false],
      )
    })

    it('keeps each key in its own bucket', async () => {
      await drain('client-1', WRITE, T0)
      assert.equal((await store().take('client-1', WRITE, T0)).allowed, false)
      assert.deepEqual(await store().take('client-2', WRITE, T0), {
        allowed: true,
        tokens: 9,
        retryAfterMs: 0,
        resetMs: 6000,
      })
      assert.equal((await store().take('client-1', WRITE, T0)).allowed, false)
    })

    it('keeps buckets of two policies on different keys apart, each by its own policy', async () => {
      await drain('auth:192.0.2.1', AUTH, T0)
      const auth = await store().take('auth:192.0.2.1', AUTH, T0)
      assert.equal(auth.allowed, false)
      assert.equal(auth.retryAfterMs, 12_000)
      const writes = await takeMany('write:client-1', WRITE, T0, 11)
      assert.equal(writes.filter((result) => result.allowed).length, 10)
      assert.equal(writes.at(-1)?.retryAfterMs, 6000)
      assert.equal((await store().take('auth:192.0.2.1', AUTH, T0 + 6000)).allowed, false)
      assert.equal((await store().take('write:client-1', WRITE, T0 + 6000)).allowed, true)
      assert.equal((await store().take('auth:192.0.2.1', AUTH, T0 + 12_000)).allowed, true)
    })

    it('allows exactly capacity of many concurrent takes, each seeing its own level', async () => {
      const results = await Promise.all(
        Array.from({ length: 25 }, () => store().take('client-1', WRITE, T0)),
      )
      const allowed = results.filter((result) => result.allowed)
      assert.equal(allowed.length, 10)
      // A read-modify-write that is not atomic lets two takes see the same level.
      assert.deepEqual(
        allowed.map((result) => result.tokens).sort((a, b) => a - b),
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
      )
      for (const result of results.filter((result) => !result.allowed)) {
        assert.deepEqual(result, { allowed: false, tokens: 0, retryAfterMs: 6000, resetMs: 60_000 })
      }
    })

    it('does not forget a bucket before it is full while buckets of shorter windows come and go', async () => {
      const hourly = { capacity: 1, windowMs: 3600 * SECOND }
      const perSecond = { capacity: 10, windowMs: SECOND }
      assert.equal((await store().take('slow', hourly, T0)).allowed, true)
      // Enough traffic on other keys to trigger any periodic sweep of idle buckets.
      for (let i = 0; i < 10_000; i++) await store().take(`fast-${i}`, perSecond, T0 + 60 * SECOND)
      const refused = await store().take('slow', hourly, T0 + 60 * SECOND)
      assert.equal(refused.allowed, false)
      assert.equal(refused.retryAfterMs, 3540 * SECOND)
    })

    describe('a take whose now is earlier than the bucket last saw', () => {
      it('takes a token if there is one, and counts from the latest time the bucket has seen', async () => {
        await store().take('client-1', WRITE, T0 + SECOND)
        assert.deepEqual(await store().take('client-1', WRITE, T0), {
          allowed: true,
          tokens: 8,
          retryAfterMs: 0,
          resetMs: 12_000,
        })
        assert.deepEqual(await store().take('client-1', WRITE, T0 + SECOND), {
          allowed: true,
          tokens: 7,
          retryAfterMs: 0,
          resetMs: 18_000,
        })
      })

      it('mints no token: a late take then an on-time take refill the interval once', async () => {
        await drain('client-1', WRITE, T0)
        assert.equal((await store().take('client-1', WRITE, T0 + 6000)).allowed, true)
        assert.deepEqual(await store().take('client-1', WRITE, T0), {
          allowed: false,
          tokens: 0,
          retryAfterMs: 6000,
          resetMs: 60_000,
        })
        assert.deepEqual(await store().take('client-1', WRITE, T0 + 6000), {
          allowed: false,
          tokens: 0,
          retryAfterMs: 6000,
          resetMs: 60_000,
        })
        assert.equal((await store().take('client-1', WRITE, T0 + 12_000)).allowed, true)
        assert.equal((await store().take('client-1', WRITE, T0 + 12_000)).allowed, false)
      })

      it('lets two instances, one lagging 3 s, take no more together than the limit allows', async () => {
        let allowed = 0
        for (let second = 0; second < 120; second++) {
          const now = T0 + second * SECOND
          if ((await store().take('client-1', WRITE, now)).allowed) allowed++
          if ((await store().take('client-1', WRITE, now - 3 * SECOND)).allowed) allowed++
        }
        // Full at the first take, then one token per 6 s up to the latest time seen (119 s).
        assert.equal(allowed, 10 + Math.floor(119 / 6))
      })
    })
  })
}
