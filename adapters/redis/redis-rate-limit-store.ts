import { StorageUnavailableError } from '../../core/errors.js'
import type { BucketPolicy, RateLimitStore, TakeResult } from '../../core/ports/rate-limit-store.js'
import { takeResult } from '../../core/token-bucket.js'
import { BUCKET_SCRIPT, BUCKET_SCRIPT_SHA } from './redis-bucket-script.js'
import {
  DEFAULT_REDIS_KEY_PREFIX,
  isRedisUrl,
  type OpenRedisRateLimitStoreOptions,
  type RedisClock,
  type RedisRateLimitStoreOptions,
  type RedisRateLimitStoreSettings,
} from './redis-config.js'
import { loadRedis, type RedisCommandClient, type RedisOwnedClient } from './redis-driver.js'

/**
 * Token buckets on Redis (D20, D30): one bucket per key for every instance of the service, so
 * the limits hold across instances. Each take is one script run by `EVALSHA` (by `EVAL` the
 * first time after Redis lost its script cache, a restart say): one round trip, atomic.
 *
 * Every command is bounded by `commandTimeoutMs`; a take Redis does not answer in time, or
 * cannot answer, rejects with `StorageUnavailableError`. Wrap the store in a
 * `FallbackRateLimitStore` to keep serving on per-instance buckets meanwhile (D31), as the
 * server does.
 *
 * @example
 * import { createClient } from '@redis/client'
 * const client = createClient({ url: process.env.REDIS_URL, disableOfflineQueue: true })
 * client.on('error', () => {})
 * await client.connect()
 * const store = new RedisRateLimitStore({ client })
 * const service = await createBeneficiaryService({ storage, limits: { store } })
 */
export class RedisRateLimitStore implements RateLimitStore {
  /** Prepended to every bucket's key. */
  readonly keyPrefix: string
  /** Whose clock refills the buckets. */
  readonly clock: RedisClock
  /** How long one command may take. */
  readonly commandTimeoutMs: number
  readonly #client: RedisCommandClient
  readonly #owned: RedisOwnedClient | undefined
  readonly #roundTrips: RoundTripListener[] = []
  #closed = false

  /**
   * @param owned The client when the store made it (`openRedisRateLimitStore`), to close it.
   * @throws TypeError for a setting out of range.
   */
  constructor(options: RedisRateLimitStoreOptions, owned?: RedisOwnedClient) {
    const settings = checkedSettings(options)
    this.keyPrefix = settings.keyPrefix
    this.clock = settings.clock
    this.commandTimeoutMs = settings.commandTimeoutMs
    this.#client = options.client
    this.#owned = owned
  }

  /** Whether the store's own client is connected; `true` for a client of the caller's. */
  get connected(): boolean {
    return this.#owned?.isReady ?? true
  }

  /**
   * Refills the bucket of `key` and takes a token from it, in one script run on Redis.
   * @throws StorageUnavailableError when Redis does not answer within `commandTimeoutMs`,
   *   the connection is down, or Redis answers with an error.
   * @throws TypeError when the caller's clock counts and `now` is not a finite number.
   */
  async take(key: string, policy: BucketPolicy, now: number): Promise<TakeResult> {
    if (this.clock === 'caller' && !Number.isFinite(now)) {
      throw new TypeError('now must be a finite number of epoch milliseconds')
    }
    // Whole milliseconds, so that the script's units stay exact integers.
    const at = this.clock === 'redis' ? '' : String(Math.floor(now))
    const args = ['1', this.keyPrefix + key, String(policy.capacity), String(policy.windowMs), at]
    const reply = await this.#script(args)
    if (
      !Array.isArray(reply) ||
      (reply[0] !== 0 && reply[0] !== 1) ||
      typeof reply[1] !== 'string' ||
      !/^[0-9]+$/.test(reply[1])
    ) {
      throw new StorageUnavailableError('io_error', {
        cause: new Error('Redis answered the bucket script with an unexpected reply'),
      })
    }
    return takeResult(reply[0] === 1, Number(reply[1]), policy)
  }

  /**
   * Asks Redis whether it answers (`PING`), within `commandTimeoutMs`.
   * @throws StorageUnavailableError when it does not.
   */
  async ping(): Promise<void> {
    await this.#send(['PING'])
  }

  /**
   * Closes the client the store made (`openRedisRateLimitStore`) once the commands already
   * sent are answered, or at once after `commandTimeoutMs` when Redis hangs, so that a
   * shutdown never waits on it; leaves a client of the caller's open.
   */
  async close(): Promise<void> {
    const owned = this.#owned
    if (owned === undefined || this.#closed) return
    this.#closed = true
    let timer: ReturnType<typeof setTimeout> | undefined
    const closed = await Promise.race([
      owned.close().then(
        () => true,
        () => false,
      ),
      new Promise<false>((resolve) => (timer = setTimeout(resolve, this.commandTimeoutMs, false))),
    ])
    clearTimeout(timer)
    if (!closed) owned.destroy()
  }

  /**
   * Calls `listener` after every command (a take, a ping) with how long Redis took to answer, in
   * seconds, and whether it did: for a round-trip-time metric. A listener that throws is ignored.
   */
  observeRoundTrips(listener: RoundTripListener): void {
    this.#roundTrips.push(listener)
  }

  /** Runs the bucket script, within `commandTimeoutMs` in all. */
  #script(args: string[]): Promise<unknown> {
    return this.#bounded(async () => {
      try {
        return await this.#client.sendCommand(['EVALSHA', BUCKET_SCRIPT_SHA, ...args], {
          timeout: this.commandTimeoutMs,
        })
      } catch (error) {
        // Redis forgets its scripts when it restarts: send the text once, which caches it again.
        if (!(error instanceof Error && error.message.startsWith('NOSCRIPT'))) throw error
      }
      return this.#client.sendCommand(['EVAL', BUCKET_SCRIPT, ...args], {
        timeout: this.commandTimeoutMs,
      })
    })
  }

  #send(args: string[]): Promise<unknown> {
    return this.#bounded(() => this.#client.sendCommand(args, { timeout: this.commandTimeoutMs }))
  }

  /**
   * Runs `work`, giving up after `commandTimeoutMs`. node-redis's own `timeout` covers only the
   * wait to be written: a command written to a Redis that hangs would wait for ever.
   * @throws StorageUnavailableError when `work` fails or takes longer.
   */
  async #bounded(work: () => Promise<unknown>): Promise<unknown> {
    const started = performance.now()
    let answered = false
    let timer: ReturnType<typeof setTimeout> | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new RedisTimeoutError(this.commandTimeoutMs)),
        this.commandTimeoutMs,
      )
    })
    try {
      const reply = await Promise.race([work(), timeout])
      answered = true
      return reply
    } catch (error) {
      throw new StorageUnavailableError(
        error instanceof RedisTimeoutError ? 'busy' : 'cannot_open',
        {
          cause: error,
        },
      )
    } finally {
      clearTimeout(timer)
      this.#report((performance.now() - started) / 1000, answered)
    }
  }

  #report(seconds: number, answered: boolean): void {
    for (const listener of this.#roundTrips) {
      try {
        listener(seconds, answered)
      } catch {
        // A metric must never fail a take.
      }
    }
  }
}

/** Told how long one Redis command took, in seconds, and whether Redis answered it. */
export type RoundTripListener = (seconds: number, answered: boolean) => void

/** Redis did not answer a command in time. */
class RedisTimeoutError extends Error {
  constructor(ms: number) {
    super(`Redis did not answer within ${ms} ms`)
    this.name = 'RedisTimeoutError'
  }
}

/**
 * Makes a node-redis client for `url`, connects it and returns a store that owns it
 * (`close()` closes it). The package is loaded only here (`@redis/client`, or `redis`).
 *
 * It resolves once the first connection attempt is over, whether or not Redis answered
 * (`connected` tells): while Redis is unreachable, the client keeps reconnecting in the
 * background and takes reject at once, so a service started during an outage serves on its
 * fallback (D31) and shares its limits as soon as Redis answers.
 *
 * @example
 * const store = await openRedisRateLimitStore({ url: 'redis://127.0.0.1:6379' })
 *
 * @throws TypeError for a URL that is not `redis://` or `rediss://`, or a setting out of range.
 * @throws Error naming the package to install when node-redis is missing.
 */
export async function openRedisRateLimitStore(
  options: OpenRedisRateLimitStoreOptions,
): Promise<RedisRateLimitStore> {
  checkedSettings(options)
  if (!isRedisUrl(options.url)) {
    // The URL itself is not repeated: it may hold a password.
    throw new TypeError('url must be a redis:// or rediss:// URL')
  }
  const connectTimeoutMs = options.connectTimeoutMs ?? 2000
  if (!Number.isSafeInteger(connectTimeoutMs) || connectTimeoutMs < 1) {
    throw new TypeError('connectTimeoutMs must be a positive integer')
  }
  const redis = await loadRedis()
  const client = redis.createClient({
    url: options.url,
    // A take must fail at once while the connection is down, not wait for it in a queue.
    disableOfflineQueue: true,
    // Commands already sent to a Redis that hangs wait for their replies; past this many, new
    // ones are refused at once.
    commandsQueueMaxLength: 10_000,
    socket: {
      connectTimeout: connectTimeoutMs,
      // Forever, at most a second apart: shared limits resume within a second of Redis.
      reconnectStrategy: (retries: number) =>
        Math.min(50 * 2 ** Math.min(retries, 10), 1000) + Math.floor(Math.random() * 100),
    },
  })
  // Every failed attempt is an 'error'; the takes report them, once, through the fallback.
  client.on('error', () => undefined)
  const store = new RedisRateLimitStore({ ...options, client }, client)
  let settle: () => void = () => undefined
  const firstAttempt = new Promise<void>((resolve) => (settle = resolve))
  const failed = (): void => settle()
  client.on('error', failed)
  const timer = setTimeout(settle, connectTimeoutMs + 500)
  client.connect().then(settle, settle)
  await firstAttempt
  clearTimeout(timer)
  client.off('error', failed)
  return store
}

function checkedSettings(
  settings: RedisRateLimitStoreSettings,
): Required<RedisRateLimitStoreSettings> {
  const keyPrefix = settings.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX
  if (typeof keyPrefix !== 'string') throw new TypeError('keyPrefix must be a string')
  const clock = settings.clock ?? 'redis'
  if (clock !== 'redis' && clock !== 'caller') {
    throw new TypeError("clock must be 'redis' or 'caller'")
  }
  const commandTimeoutMs = settings.commandTimeoutMs ?? 250
  if (!Number.isSafeInteger(commandTimeoutMs) || commandTimeoutMs < 1) {
    throw new TypeError('commandTimeoutMs must be a positive integer')
  }
  return { keyPrefix, clock, commandTimeoutMs }
}
