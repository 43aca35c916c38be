import type { RedisRateLimitStore } from '../../adapters/redis/index.js'
import { FallbackRateLimitStore } from '../../core/index.js'
import type { HandlerLogger } from '../handler.js'
import type { ReadinessCheck } from '../readiness.js'
import type { Tracing } from '../tracing/tracing.js'
import { CommandFailedError } from './cli-error.js'
import type { RedisTarget } from './serve-config.js'
import { redactedUrl } from './redacted-url.js'

/** The rate limits of `serve --redis-url`: shared on Redis, per instance while it is down. */
export interface SharedLimits {
  /** For `limits.store` of the service. */
  readonly store: FallbackRateLimitStore
  /** For `/readyz`: `rate_limits` is degraded while Redis does not answer. */
  readonly readiness: ReadinessCheck
  /** Redis itself, for its round-trip-time metric (`ServerMetrics.watchRedis`). */
  readonly redis: RedisRateLimitStore
  /** Stops watching Redis and closes the connection. */
  close(): Promise<void>
}

/** How often, while Redis is down, the server asks it again without waiting for a request. */
const RECHECK_MS = 1000

/**
 * Connects to the Redis of `target` and builds the limits of D30 and D31 on it: every take on
 * Redis while it answers, on this instance's own buckets while it does not. The outage is
 * logged once at `error` and its end once at `info`; `store.checkPrimary()` at start finds a
 * Redis already down (the server starts anyway). Recovery needs no request: a timer asks Redis
 * every second while it is down, and `/readyz` asks it each time.
 *
 * With `tracing`, each take on Redis is a span; the takes kept in process while it is down
 * are not.
 *
 * @throws CommandFailedError when node-redis is not installed.
 */
export async function openSharedLimits(
  target: RedisTarget,
  logger: HandlerLogger,
  tracing?: Tracing,
): Promise<SharedLimits> {
  let redis: RedisRateLimitStore
  try {
    const { openRedisRateLimitStore } = await import('../../adapters/redis/index.js')
    redis = await openRedisRateLimitStore({
      url: target.url,
      keyPrefix: target.keyPrefix,
      commandTimeoutMs: target.timeoutMs,
    })
  } catch (error) {
    throw new CommandFailedError(error instanceof Error ? error.message : String(error), {
      cause: error,
    })
  }
  const where = describeRedisUrl(target.url)
  const store = new FallbackRateLimitStore({
    primary: tracing === undefined ? redis : tracing.traceRateLimitStore(redis, 'redis'),
    probe: () => redis.ping(),
    onOutage: (error) =>
      logger.error(
        { redis: where, err: describeFailure(error) },
        `Redis at ${where} does not answer: rate limits are kept per instance until it does`,
      ),
    onRecovery: ({ durationMs }) =>
      logger.info(
        { redis: where, outage_ms: durationMs },
        `Redis at ${where} answers again: rate limits are shared across instances again`,
      ),
  })
  const timer = setInterval(() => {
    if (store.degraded) void store.checkPrimary()
  }, RECHECK_MS)
  timer.unref()
  return {
    store,
    redis,
    readiness: { name: 'rate_limits', check: () => store.checkPrimary() },
    close: async () => {
      clearInterval(timer)
      await redis.close()
    },
  }
}

/** The URL as logs may show it: without its password. */
export function describeRedisUrl(url: string): string {
  return redactedUrl(url, 'redis://(unparsable URL)')
}

/**
 * What went wrong, without a message (D25): the class of the driver's error (`ClientOfflineError`,
 * `TimeoutError`, `ErrorReply`) and its system code (`ECONNREFUSED`), if any.
 */
function describeFailure(error: unknown): object {
  const cause = error instanceof Error && error.cause !== undefined ? error.cause : error
  if (!(cause instanceof Error)) return { type: typeof cause }
  const code = (cause as { code?: unknown }).code
  return { type: cause.constructor.name, ...(typeof code === 'string' && { code }) }
}
