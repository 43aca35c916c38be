import type { RedisCommandClient } from './redis-driver.js'

/** The default `keyPrefix`. */
export const DEFAULT_REDIS_KEY_PREFIX = 'beneficiary-service:rate-limit:'

/**
 * Whose clock refills the buckets. `redis`: Redis's own (`TIME`, read inside the script), the
 * same for every instance, so that no instance's clock can refill a bucket early; the `now` the
 * core passes is ignored. `caller`: the `now` the core passes (its `Clock`), for tests with a
 * `FakeClock` and for a single instance; instances whose clocks differ by `s` seconds may then
 * take up to `s` seconds' worth of refill more than the limit allows.
 */
export type RedisClock = 'redis' | 'caller'

/** What the store takes beside its client. */
export interface RedisRateLimitStoreSettings {
  /**
   * Prepended to every bucket's key, so that several services, or test files, share one Redis
   * without sharing buckets. Default {@link DEFAULT_REDIS_KEY_PREFIX}.
   */
  readonly keyPrefix?: string
  /** Whose clock refills the buckets. Default `redis`. */
  readonly clock?: RedisClock
  /**
   * How long one command may take before the take rejects (`StorageUnavailableError`), so that
   * a Redis that hangs never holds a request longer. Default 250 ms.
   */
  readonly commandTimeoutMs?: number
}

/** Options of `new RedisRateLimitStore`: a client of the caller's, which the caller closes. */
export interface RedisRateLimitStoreOptions extends RedisRateLimitStoreSettings {
  /**
   * A connected node-redis client (`createClient()` from `@redis/client` or `redis`), or any
   * client with the same `sendCommand`. Create it with `disableOfflineQueue: true`, so that a
   * take fails at once rather than waiting while the connection is down, and listen to its
   * `error` event, as node-redis requires.
   */
  readonly client: RedisCommandClient
}

/** Options of `openRedisRateLimitStore`: the store makes and owns its client. */
export interface OpenRedisRateLimitStoreOptions extends RedisRateLimitStoreSettings {
  /**
   * `redis://[[user]:password@]host[:port][/database]`, or `rediss://` for TLS. Never logged
   * nor repeated in an error message.
   */
  readonly url: string
  /** How long one connection attempt may take. Default 2000 ms. */
  readonly connectTimeoutMs?: number
}

/** Whether `url` parses as a `redis://` or `rediss://` URL naming a host. */
export function isRedisUrl(url: string): boolean {
  try {
    const { protocol, hostname } = new URL(url)
    return (protocol === 'redis:' || protocol === 'rediss:') && hostname !== ''
  } catch {
    return false
  }
}
