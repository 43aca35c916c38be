/**
 * Rate limits on Redis: token buckets shared by every instance of the service (D20, D30),
 * through node-redis (`@redis/client`, an optional peer dependency loaded only by
 * `openRedisRateLimitStore`).
 *
 * @example
 * import { FallbackRateLimitStore, createBeneficiaryService } from 'beneficiary-service'
 * import { openRedisRateLimitStore } from 'beneficiary-service/redis'
 *
 * const redis = await openRedisRateLimitStore({ url: process.env.REDIS_URL })
 * const store = new FallbackRateLimitStore({ primary: redis, probe: () => redis.ping() })
 * const service = await createBeneficiaryService({ storage, limits: { store } })
 */
export { RedisRateLimitStore, openRedisRateLimitStore } from './redis-rate-limit-store.js'
export type { RoundTripListener } from './redis-rate-limit-store.js'
export type {
  OpenRedisRateLimitStoreOptions,
  RedisClock,
  RedisRateLimitStoreOptions,
  RedisRateLimitStoreSettings,
} from './redis-config.js'
export type { RedisCommandClient, RedisCommandOptions } from './redis-driver.js'
