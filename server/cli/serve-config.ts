import { createHash } from 'node:crypto'
import { accessSync, constants, readFileSync } from 'node:fs'
import type { AccessTokenKey, MatchRules } from '../../core/index.js'
import { MatchRulesError, parseMatchRules } from '../../core/matching/match-rules.js'
import { DEFAULT_REDIS_KEY_PREFIX, isRedisUrl } from '../../adapters/redis/redis-config.js'
import { ClientIpResolver } from '../client-ip.js'
import { corsOrigin } from '../cors.js'
import { DOCS_PACKAGE, DOCS_PEERS, docsPackageFolder } from '../docs-page.js'
import { LOG_LEVELS } from '../logger.js'
import { isValidBasePath } from '../route-table.js'
import {
  DEFAULT_SERVICE_NAME,
  isOtlpEndpoint,
  SAMPLERS,
  type SamplerOptions,
} from '../tracing/start-tracing.js'
import type { TlsFiles, TransportName } from '../transports/transport.js'
import { UsageError } from './cli-error.js'
import { storageTarget, type StorageTarget } from './storage-target.js'
import type { Settings } from './settings.js'

/** Everything `serve` needs, read and checked before anything starts. */
export interface ServeConfig {
  /** The database: a SQLite file or a PostgreSQL URL. */
  readonly database: StorageTarget
  readonly host: string
  readonly port: number
  /** `auto`: uws where its build loads on this Node.js, else node (said in one log line). */
  readonly transport: TransportName | 'auto'
  readonly tls: TlsFiles | undefined
  readonly trustProxy: readonly string[]
  readonly basePath: string
  readonly logLevel: string
  readonly limits: {
    readonly auth: number
    readonly write: number
    readonly standard: number
    readonly bulk: number
  }
  readonly accessTokenTtlSeconds: number
  readonly refreshTokenTtlSeconds: number
  /** Keys from `JWT_SECRET` or `JWT_SECRET_FILE`; `undefined`: kept in the database (D3). */
  readonly keys: readonly AccessTokenKey[] | undefined
  /** How long shutdown waits for requests in flight. */
  readonly graceMs: number
  /** How long a write waits for another process's lock on the database before a 503. */
  readonly busyTimeoutMs: number
  /** SQLite: where writes and their commits run, the event loop (`inline`) or a thread. */
  readonly sqliteWriter: 'inline' | 'thread'
  /** PostgreSQL: connections in this instance's pool. */
  readonly poolSize: number
  /** PostgreSQL: how long a list statement may run before PostgreSQL cancels it (a 503). */
  readonly listTimeoutMs: number
  /** How long a request body may take to arrive after its headers before a 408. */
  readonly bodyTimeoutMs: number
  /** The largest file `POST /imports` takes (D39). */
  readonly importMaxBytes: number
  /** Redis for the rate limits (D30, D31); `undefined`: the limits stay in this process. */
  readonly redis: RedisTarget | undefined
  /**
   * `GET /metrics`: `off` (a 404), `public`, or `token` (a scrape needs `metricsToken` as a
   * bearer token).
   */
  readonly metrics: MetricsMode
  /** From `METRICS_TOKEN`, only with `metrics: 'token'`. */
  readonly metricsToken: string | undefined
  /** Whether to serve the API reference page at `/docs`. */
  readonly docs: boolean
  /** Origins whose browser scripts may call the API (CORS); empty: none. */
  readonly corsOrigins: readonly string[]
  /** Where spans go over OTLP/HTTP; `undefined`: tracing is off. */
  readonly tracing: TracingTarget | undefined
  /** Access-log retention (D37): days kept, entries per purge batch, pause between batches. */
  readonly retention: {
    readonly days: number
    readonly batchSize: number
    readonly pauseMs: number
    /** History entries older than this are purged; `undefined`: kept while the record exists. */
    readonly historyDays: number | undefined
  }
  /** How many days the change feed keeps its events (D33). */
  readonly eventRetentionDays: number
  /** The rules of duplicate matching from `--match-rules`; `undefined`: the default set (D38). */
  readonly matchRules: MatchRules | undefined
}

/** The OTLP/HTTP receiver the spans are sent to, and the name they are sent under. */
export interface TracingTarget {
  /** The base URL (`http://collector:4318`); spans go to its `/v1/traces`. */
  readonly endpoint: string
  /** `service.name` of every span. */
  readonly serviceName: string
  /** Which traces are recorded and sent. */
  readonly sampler: SamplerOptions
}

/** The Redis that keeps the rate limits of every instance. */
export interface RedisTarget {
  /** `redis://` or `rediss://`; may hold a password, so never logged as is. */
  readonly url: string
  /** Prepended to every bucket's key. */
  readonly keyPrefix: string
  /** How long one Redis command may take before the request is limited in process instead. */
  readonly timeoutMs: number
}

/** Who may read the metrics. */
export type MetricsMode = 'off' | 'public' | 'token'

const DAY = 86_400
const MAX_INT = 2_147_483_647

/**
 * Reads the `serve` configuration from flags and environment variables (flags win) and checks
 * every value, so that a mistake stops the start with one line naming the setting.
 * @throws UsageError naming the first bad setting.
 */
export function readServeConfig(settings: Settings): ServeConfig {
  const trustProxy = settings.list('trust-proxy', 'TRUST_PROXY')
  try {
    new ClientIpResolver(trustProxy)
  } catch (error) {
    throw new UsageError((error as Error).message, settings.nameOf('trust-proxy', 'TRUST_PROXY'))
  }
  const basePath = settings.string('base-path', 'BASE_PATH', '/v3')
  if (!isValidBasePath(basePath)) {
    throw new UsageError(
      `${JSON.stringify(basePath)} must look like /v3 (a leading slash, no trailing one)`,
      settings.nameOf('base-path', 'BASE_PATH'),
    )
  }
  const host = settings.string('host', 'HOST', '127.0.0.1')
  if (host.trim() === '') throw new UsageError('must not be empty', settings.nameOf('host', 'HOST'))
  return {
    database: storageTarget(settings),
    host,
    port: settings.integer('port', 'PORT', 8080, 0, 65_535),
    transport: settings.choice<TransportName | 'auto'>('transport', 'TRANSPORT', 'auto', [
      'auto',
      'uws',
      'node',
    ]),
    tls: readTls(settings),
    trustProxy,
    basePath,
    logLevel: settings.choice('log-level', 'LOG_LEVEL', 'info', LOG_LEVELS),
    limits: {
      auth: settings.integer('rate-limit-auth', 'RATE_LIMIT_AUTH', 5, 1, MAX_INT),
      write: settings.integer('rate-limit-write', 'RATE_LIMIT_WRITE', 10, 1, MAX_INT),
      standard: settings.integer('rate-limit-standard', 'RATE_LIMIT_STANDARD', 100, 1, MAX_INT),
      bulk: settings.integer('rate-limit-bulk', 'RATE_LIMIT_BULK', 2, 1, MAX_INT),
    },
    accessTokenTtlSeconds: settings.integer(
      'access-token-ttl',
      'ACCESS_TOKEN_TTL_SECONDS',
      3600,
      1,
      30 * DAY,
    ),
    refreshTokenTtlSeconds: settings.integer(
      'refresh-token-ttl',
      'REFRESH_TOKEN_TTL_SECONDS',
      30 * DAY,
      1,
      365 * DAY,
    ),
    keys: readKeys(settings),
    graceMs: settings.integer('shutdown-grace', 'SHUTDOWN_GRACE_SECONDS', 10, 0, 3600) * 1000,
    busyTimeoutMs: settings.integer('busy-timeout', 'SQLITE_BUSY_TIMEOUT_MS', 5000, 0, 10 * 60_000),
    sqliteWriter: settings.choice('sqlite-writer', 'SQLITE_WRITER', 'thread', ['inline', 'thread']),
    poolSize: settings.integer('pool-size', 'DATABASE_POOL_SIZE', 10, 1, 1000),
    // At most the storage's statement timeout, 10 s.
    listTimeoutMs: settings.integer('list-timeout', 'LIST_TIMEOUT_MS', 2000, 1, 10_000),
    // At most 7 s: uWebSockets.js closes a stalled body after 8 s without an answer.
    bodyTimeoutMs: settings.integer('body-timeout', 'BODY_TIMEOUT_SECONDS', 5, 1, 7) * 1000,
    eventRetentionDays: settings.integer('event-retention', 'EVENT_RETENTION_DAYS', 30, 1, 3650),
    importMaxBytes: settings.integer('import-max-mib', 'IMPORT_MAX_MIB', 64, 1, 1024) * 1024 * 1024,
    ...readMetrics(settings),
    docs: readDocs(settings),
    redis: readRedis(settings),
    corsOrigins: readCorsOrigins(settings),
    tracing: readTracing(settings),
    retention: {
      days: settings.integer('access-log-days', 'ACCESS_LOG_RETENTION_DAYS', 400, 1, 36_500),
      batchSize: settings.integer('purge-batch', 'PURGE_BATCH_SIZE', 500, 1, 10_000),
      pauseMs: settings.integer('purge-pause', 'PURGE_PAUSE_MS', 1000, 10, 3_600_000),
      historyDays: settings.integer('history-days', 'HISTORY_RETENTION_DAYS', undefined, 1, 36_500),
    },
    matchRules: readMatchRules(settings),
  }
}

/** The rules file of duplicate matching, read and checked whole: a mistake names its line. */
function readMatchRules(settings: Settings): MatchRules | undefined {
  const file = settings.raw('match-rules', 'MATCH_RULES_FILE')
  if (file === undefined) return undefined
  let text: string
  try {
    text = readFileSync(file.value, 'utf8')
  } catch {
    throw new UsageError(`cannot read ${file.value}`, file.name)
  }
  try {
    return parseMatchRules(text)
  } catch (error) {
    if (error instanceof MatchRulesError) {
      throw new UsageError(`${file.value} ${error.message}`, file.name)
    }
    throw error
  }
}

/**
 * Tracing, on when an OTLP endpoint is given. The variables are OpenTelemetry's own, so that a
 * deployment that already sets them for its other services needs nothing new.
 */
function readTracing(settings: Settings): TracingTarget | undefined {
  const endpoint = settings.raw('otlp-endpoint', 'OTEL_EXPORTER_OTLP_ENDPOINT')
  if (endpoint === undefined) return undefined
  if (!isOtlpEndpoint(endpoint.value)) {
    throw new UsageError(
      'must be an http:// or https:// URL, the OTLP/HTTP base such as http://127.0.0.1:4318',
      endpoint.name,
    )
  }
  const serviceName = settings.string(
    'otel-service-name',
    'OTEL_SERVICE_NAME',
    DEFAULT_SERVICE_NAME,
  )
  const name = settings.choice('otel-sampler', 'OTEL_TRACES_SAMPLER', SAMPLERS[0], SAMPLERS)
  const arg = settings.raw('otel-sampler-arg', 'OTEL_TRACES_SAMPLER_ARG')
  const ratio = arg === undefined ? 1 : Number(arg.value.trim())
  if (arg !== undefined && !(/^[0-9.]+$/.test(arg.value.trim()) && ratio >= 0 && ratio <= 1)) {
    throw new UsageError(`${JSON.stringify(arg.value)} is not a ratio from 0 to 1`, arg.name)
  }
  return { endpoint: endpoint.value, serviceName, sampler: { name, ratio } }
}

function readCorsOrigins(settings: Settings): string[] {
  try {
    return settings.list('cors-origin', 'CORS_ORIGIN').map(corsOrigin)
  } catch (error) {
    throw new UsageError((error as Error).message, settings.nameOf('cors-origin', 'CORS_ORIGIN'))
  }
}

function readRedis(settings: Settings): RedisTarget | undefined {
  const url = settings.raw('redis-url', 'REDIS_URL')
  if (url === undefined) return undefined
  if (!isRedisUrl(url.value)) {
    throw new UsageError('must be a redis:// or rediss:// URL with a host', url.name)
  }
  return {
    url: url.value,
    keyPrefix: settings.string('redis-key-prefix', 'REDIS_KEY_PREFIX', DEFAULT_REDIS_KEY_PREFIX),
    timeoutMs: settings.integer('redis-timeout', 'REDIS_TIMEOUT_MS', 250, 1, 10_000),
  }
}

/** RFC 6750's b64token, at least 16 characters long. */
const METRICS_TOKEN = /^[A-Za-z0-9._~+/-]{16,}=*$/

/**
 * Who may read the metrics: `--metrics` (env `METRICS`), by default `token` when
 * `METRICS_TOKEN` is set, else `public`. The token comes only from the environment: a flag's
 * value is visible to every user of the machine.
 */
function readMetrics(settings: Settings): {
  metrics: MetricsMode
  metricsToken: string | undefined
} {
  const token = settings.raw('metrics-token', 'METRICS_TOKEN')
  const metrics = settings.choice<MetricsMode>(
    'metrics',
    'METRICS',
    token === undefined ? 'public' : 'token',
    ['off', 'public', 'token'],
  )
  const name = settings.nameOf('metrics', 'METRICS')
  if (metrics !== 'token') {
    if (token !== undefined) {
      throw new UsageError(
        `"${metrics}" leaves METRICS_TOKEN unused: give --metrics token, or unset METRICS_TOKEN`,
        name,
      )
    }
    return { metrics, metricsToken: undefined }
  }
  if (token === undefined) {
    throw new UsageError(
      '"token" needs METRICS_TOKEN in the environment (openssl rand -hex 32)',
      name,
    )
  }
  if (!METRICS_TOKEN.test(token.value)) {
    // The value itself is never repeated: it is a secret.
    throw new UsageError(
      'must be 16 or more characters of A-Z a-z 0-9 - . _ ~ + / (openssl rand -hex 32)',
      token.name,
    )
  }
  return { metrics, metricsToken: token.value }
}

/**
 * Whether to serve the reference page: `on` by default when its package is installed (a clone
 * has it as a devDependency), else off; asked for with `--docs on`, its package must be there
 * before anything opens.
 */
function readDocs(settings: Settings): boolean {
  const asked = settings.raw('docs', 'DOCS') !== undefined
  if (settings.choice('docs', 'DOCS', 'on', ['on', 'off']) === 'off') return false
  try {
    docsPackageFolder()
  } catch {
    if (!asked) return false
    throw new UsageError(
      `the reference page needs the ${DOCS_PACKAGE} package: install it (npm install "${DOCS_PACKAGE}@${DOCS_PEERS[0]!.range}"), or turn the page off (--docs off)`,
      settings.nameOf('docs', 'DOCS'),
    )
  }
  return true
}

function readTls(settings: Settings): TlsFiles | undefined {
  const cert = settings.raw('cert', 'TLS_CERT')
  const key = settings.raw('key', 'TLS_KEY')
  if (cert === undefined && key === undefined) return undefined
  if (cert === undefined)
    throw new UsageError('a TLS key needs a certificate too (--cert or TLS_CERT)', key!.name)
  if (key === undefined)
    throw new UsageError('a TLS certificate needs a key too (--key or TLS_KEY)', cert.name)
  for (const file of [cert, key]) {
    try {
      accessSync(file.value, constants.R_OK)
    } catch {
      throw new UsageError(`cannot read ${file.value}`, file.name)
    }
  }
  return { cert: cert.value, key: key.value }
}

/**
 * Access-token keys from `JWT_SECRET` (one secret) or `JWT_SECRET_FILE` (one secret per line,
 * the first signs, all verify). A secret is at least 32 bytes written in base64 or base64url,
 * such as the output of `openssl rand -base64 32`.
 */
function readKeys(settings: Settings): AccessTokenKey[] | undefined {
  const secret = settings.raw('jwt-secret', 'JWT_SECRET')
  const file = settings.raw('jwt-secret-file', 'JWT_SECRET_FILE')
  if (secret !== undefined && file !== undefined) {
    throw new UsageError('give JWT_SECRET or JWT_SECRET_FILE, not both', file.name)
  }
  let lines: string[]
  let name: string
  if (secret !== undefined) {
    lines = [secret.value]
    name = secret.name
  } else if (file !== undefined) {
    try {
      lines = readFileSync(file.value, 'utf8').split(/\r?\n/)
    } catch {
      throw new UsageError(`cannot read ${file.value}`, file.name)
    }
    name = file.name
  } else {
    return undefined
  }
  const keys = lines
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => keyOf(line, name))
  if (keys.length === 0) throw new UsageError('holds no secret', name)
  return keys
}

function keyOf(text: string, name: string): AccessTokenKey {
  const secret = text.replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '')
  if (!/^[A-Za-z0-9_-]+$/.test(secret) || Buffer.from(secret, 'base64url').length < 32) {
    // The value itself is never repeated: it is a secret.
    throw new UsageError(
      'a secret must be at least 32 bytes in base64 or base64url (openssl rand -base64 32)',
      name,
    )
  }
  // The same secret always gets the same key id, so tokens survive a restart.
  const kid = `k-${createHash('sha256').update(secret).digest('base64url').slice(0, 10)}`
  return { kid, secret }
}
