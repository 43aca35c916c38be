import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  FakeClock,
  FallbackRateLimitStore,
  LocalRateLimitStore,
  StorageUnavailableError,
  type BucketPolicy,
  type RateLimitStore,
  type TakeResult,
} from '../../core/index.js'

const WRITE: BucketPolicy = { capacity: 10, windowMs: 60_000 }

/** A shared store that answers from its own buckets until told to fail, or to hold its answers. */
class SwitchableStore implements RateLimitStore {
  readonly buckets = new LocalRateLimitStore()
  down = false
  takes = 0
  #held: (() => void)[] = []
  #holding = false

  async take(key: string, policy: BucketPolicy, now: number): Promise<TakeResult> {
    this.takes++
    if (this.down) throw new StorageUnavailableError('cannot_open')
    if (this.#holding) await new Promise<void>((resolve) => this.#held.push(resolve))
    return this.buckets.take(key, policy, now)
  }

  /** Answers nothing until `release()`. */
  hold(): void {
    this.#holding = true
  }

  release(): void {
    this.#holding = false
    for (const resume of this.#held.splice(0)) resume()
  }
}

function setUp(probe?: () => Promise<void>) {
  const clock = new FakeClock()
  const primary = new SwitchableStore()
  const events: string[] = []
  const store = new FallbackRateLimitStore({
    primary,
    clock,
    ...(probe !== undefined && { probe }),
    onOutage: (error) => events.push(`outage ${(error as StorageUnavailableError).reason}`),
    onRecovery: ({ durationMs }) => events.push(`recovery after ${durationMs} ms`),
  })
  return { clock, primary, events, store }
}

describe('FallbackRateLimitStore (D31)', () => {
  it('takes from the shared store while it answers', async () => {
    const { clock, primary, events, store } = setUp()
    for (let i = 0; i < 10; i++) await store.take('write:a', WRITE, clock.now())
    assert.equal((await store.take('write:a', WRITE, clock.now())).allowed, false)
    assert.equal(primary.takes, 11)
    assert.equal(store.degraded, false)
    assert.deepEqual(events, [])
  })

  it('answers from per-instance buckets while the shared store fails, reporting the outage once', async () => {
    const { clock, primary, events, store } = setUp()
    primary.down = true
    const results = []
    for (let i = 0; i < 11; i++) results.push(await store.take('write:a', WRITE, clock.now()))
    // The limit still holds, on this instance's own bucket: never unlimited, never an error.
    assert.deepEqual(
      results.map((result) => result.allowed),
      [...Array<boolean>(10).fill(true), false],
    )
    assert.equal(results.at(-1)?.retryAfterMs, 6000)
    assert.equal(store.degraded, true)
    assert.deepEqual(events, ['outage cannot_open'])
    // Within the retry interval only the first take tried the shared store.
    assert.equal(primary.takes, 1)
  })

  it('tries the shared store again once per interval, and resumes on it by itself', async () => {
    const { clock, primary, events, store } = setUp()
    primary.down = true
    await store.take('write:a', WRITE, clock.now())
    clock.advance(999)
    await store.take('write:a', WRITE, clock.now())
    assert.equal(primary.takes, 1)
    clock.advance(1)
    await store.take('write:a', WRITE, clock.now())
    assert.equal(primary.takes, 2, 'a take a second later tried again')
    assert.equal(store.degraded, true)
    primary.down = false
    clock.advance(1000)
    const resumed = await store.take('write:a', WRITE, clock.now())
    assert.equal(primary.takes, 3)
    // Answered by the shared bucket, which had seen none of the takes made meanwhile.
    assert.equal(resumed.tokens, 9)
    assert.equal(store.degraded, false)
    assert.deepEqual(events, ['outage cannot_open', 'recovery after 2000 ms'])
    await store.take('write:a', WRITE, clock.now())
    assert.equal(primary.takes, 4)
  })

  it('is not taken out of an outage by the late answer to a take sent before it', async () => {
    const { clock, primary, events, store } = setUp()
    primary.hold()
    const early = store.take('write:a', WRITE, clock.now())
    primary.down = true
    await store.take('write:b', WRITE, clock.now())
    assert.equal(store.degraded, true)
    primary.down = false
    primary.release()
    assert.equal((await early).allowed, true)
    assert.equal(store.degraded, true)
    assert.deepEqual(events, ['outage cannot_open'])
  })

  it('asks the probe on checkPrimary, starting and ending the outage without a take', async () => {
    let answers = true
    const { clock, events, store } = setUp(() =>
      answers ? Promise.resolve() : Promise.reject(new StorageUnavailableError('busy')),
    )
    assert.equal(await store.checkPrimary(), true)
    answers = false
    assert.equal(await store.checkPrimary(), false)
    assert.equal(await store.checkPrimary(), false)
    clock.advance(5000)
    answers = true
    assert.equal(await store.checkPrimary(), true)
    assert.deepEqual(events, ['outage busy', 'recovery after 5000 ms'])
  })

  it('without a probe, checkPrimary tells what the takes found', async () => {
    const { clock, primary, store } = setUp()
    assert.equal(await store.checkPrimary(), true)
    primary.down = true
    await store.take('write:a', WRITE, clock.now())
    assert.equal(await store.checkPrimary(), false)
  })

  it('refuses a retry interval that is not a positive integer', () => {
    const primary = new SwitchableStore()
    for (const retryIntervalMs of [0, -1, 1.5, Number.NaN]) {
      assert.throws(() => new FallbackRateLimitStore({ primary, retryIntervalMs }), TypeError)
    }
  })
})
