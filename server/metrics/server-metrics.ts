import type { AccessLogStats } from '../../core/ports/access-log-store.js'
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import { RateLimitedError, StorageUnavailableError } from '../../core/errors.js'
import { OPERATIONS } from '../../core/operations.js'
import type { PathEntry } from '../route-table.js'

/** Options of {@link ServerMetrics}. */
export interface ServerMetricsOptions {
  /**
   * Whether to collect prom-client's default metrics: process CPU, memory and file descriptors,
   * event-loop lag, garbage collection, heap. Default true.
   */
  readonly defaultMetrics?: boolean
}

/** A storage that reports its group commits: `SqliteStorage`. */
export interface GroupCommitSource {
  observeGroupCommits(listener: (size: number, committed: boolean) => void): void
}

/** A storage that reports the batches it sends: `PostgresStorage`. */
export interface BatchSource {
  observeBatches(listener: (kind: 'read' | 'check' | 'create', size: number) => void): void
}

/** How a connection pool is used now: `PostgresStorage.poolUsage()`. */
export interface PoolUsage {
  /** Connections open, in use or idle. */
  readonly total: number
  /** Connections open and idle. */
  readonly idle: number
  /** Requests waiting for a connection. */
  readonly waiting: number
}

/** Upper bounds of the latency buckets, in seconds: the server answers in tens of microseconds. */
const DURATION_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
]
const GROUP_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
/** Methods a request may be counted under; any other is `other`, so a client cannot mint labels. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'])
const REQUEST_LABELS = ['route', 'method', 'status'] as const
const DURATIONS = 'beneficiary_http_request_duration_seconds'

/**
 * The server's Prometheus metrics, on a registry of their own (prom-client), which `GET /metrics`
 * serves. Every label value comes from a closed set: a route's template (`/v3/beneficiaries/{id}`,
 * never the path requested; `unmatched` for every unknown path), a method (`other` beyond the
 * usual ones), a status, a limit class, a storage fault's reason. No value of a request (an id,
 * a client id, a token, a personal field) ever becomes a label.
 *
 * - `beneficiary_http_requests_total{route,method,status}` and
 *   `beneficiary_http_request_duration_seconds{route,method,status}` (from the transport's
 *   receipt of the request to its answer being ready);
 * - `beneficiary_http_rate_limited_total{class}`: 429 answers by limit class;
 * - `beneficiary_http_unavailable_total{cause}`: 503 answers, by the storage fault's reason or
 *   `not_ready` for the readiness probe;
 * - `beneficiary_storage_errors_total{reason}`: storage faults met by requests and by the
 *   readiness probe (`unreachable` when the probe's failure has no reason);
 * - with {@link watchGroupCommits}: `beneficiary_sqlite_group_commit_writes` (writes per
 *   committed group) and `beneficiary_sqlite_group_commit_failures_total`;
 * - with {@link watchPool}: `beneficiary_postgres_pool_connections{state}` and
 *   `beneficiary_postgres_pool_waiting`;
 * - with {@link watchBatches}: `beneficiary_postgres_batch_calls{kind}` (calls per statement);
 * - with {@link watchRedis}: `beneficiary_redis_round_trip_seconds{outcome}`;
 * - prom-client's default metrics: `process_*` and `nodejs_*` (event-loop lag among them).
 *
 * Counting a request costs one histogram observation, about 0.5 µs in all; the request counter
 * is read from the histogram's counts when scraped rather than kept apart.
 *
 * @example
 * const metrics = new ServerMetrics()
 * const server = await startServer({ service, metrics: { collector: metrics } })
 * // GET /metrics now answers; metrics.registry takes the host's own metrics too.
 */
export class ServerMetrics {
  /** The registry `GET /metrics` serves; a host may register metrics of its own on it. */
  readonly registry = new Registry()
  readonly #durations: Histogram<(typeof REQUEST_LABELS)[number]>
  readonly #rateLimited: Counter<'class'>
  readonly #unavailable: Counter<'cause'>
  readonly #storageErrors: Counter<'reason'>
  #redisRoundTrips: Histogram<'outcome'> | undefined

  constructor(options: ServerMetricsOptions = {}) {
    const registers = [this.registry]
    const durations = new Histogram({
      name: DURATIONS,
      help: 'Time to answer a request, in seconds, by route template, method and status.',
      labelNames: REQUEST_LABELS,
      buckets: DURATION_BUCKETS,
      registers,
    })
    this.#durations = durations
    new Counter({
      name: 'beneficiary_http_requests_total',
      help: 'Requests answered, by route template, method and status.',
      labelNames: REQUEST_LABELS,
      registers,
      async collect() {
        this.reset()
        for (const value of (await durations.get()).values) {
          if (value.metricName === `${DURATIONS}_count`) this.inc(value.labels, value.value)
        }
      },
    })
    this.#rateLimited = new Counter({
      name: 'beneficiary_http_rate_limited_total',
      help: 'Requests refused with 429, by limit class.',
      labelNames: ['class'],
      registers,
    })
    for (const policy of Object.values(OPERATIONS)) {
      this.#rateLimited.inc({ class: policy.limitClass }, 0)
    }
    this.#unavailable = new Counter({
      name: 'beneficiary_http_unavailable_total',
      help: 'Requests answered 503, by cause: the storage fault, or not_ready for the readiness probe.',
      labelNames: ['cause'],
      registers,
    })
    this.#storageErrors = new Counter({
      name: 'beneficiary_storage_errors_total',
      help: 'Storage faults met by requests and the readiness probe, by reason.',
      labelNames: ['reason'],
      registers,
    })
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry })
  }

  /** The media type of {@link scrape}'s text. */
  get contentType(): string {
    return this.registry.contentType
  }

  /** Every metric in the Prometheus text exposition format. */
  scrape(): Promise<string> {
    return this.registry.metrics()
  }

  /**
   * Counts one answered request. Called by the handler: `entry` is the matched path (undefined
   * for an unknown one), `error` what the request failed with, if anything.
   */
  observeRequest(
    entry: PathEntry | undefined,
    method: string,
    status: number,
    seconds: number,
    error: unknown,
  ): void {
    const route = entry?.routes[method]
    this.#durations.observe(
      {
        route: entry?.template ?? 'unmatched',
        method: route !== undefined || METHODS.has(method) ? method : 'other',
        status,
      },
      seconds,
    )
    if (error instanceof RateLimitedError) {
      this.#rateLimited.inc({ class: route?.policy?.limitClass ?? 'unknown' })
    } else if (error instanceof StorageUnavailableError) {
      this.#unavailable.inc({ cause: error.reason })
      this.#storageErrors.inc({ reason: error.reason })
    } else if (status === 503) {
      this.#unavailable.inc({ cause: 'not_ready' })
    }
  }

  /** Counts the readiness probe's failure as a storage fault. */
  observeProbeFailure(error: unknown): void {
    const reason = error instanceof StorageUnavailableError ? error.reason : 'unreachable'
    this.#storageErrors.inc({ reason })
  }

  /** Adds the SQLite storage's group commits: how many writes each group holds, failed groups. */
  watchGroupCommits(source: GroupCommitSource): void {
    const sizes = new Histogram({
      name: 'beneficiary_sqlite_group_commit_writes',
      help: 'Writes committed together in one SQLite transaction (one fsync).',
      buckets: GROUP_BUCKETS,
      registers: [this.registry],
    })
    const failures = new Counter({
      name: 'beneficiary_sqlite_group_commit_failures_total',
      help: 'Groups of writes whose transaction failed as a whole, writing nothing.',
      registers: [this.registry],
    })
    source.observeGroupCommits((size, committed) => {
      if (committed) sizes.observe(size)
      else failures.inc()
    })
  }

  /** Adds the PostgreSQL storage's batches: how many calls each statement carried, by kind. */
  watchBatches(source: BatchSource): void {
    const sizes = new Histogram({
      name: 'beneficiary_postgres_batch_calls',
      help: 'Calls sent to PostgreSQL together in one statement, by kind: read, check or create.',
      labelNames: ['kind'],
      buckets: GROUP_BUCKETS.slice(0, 7),
      registers: [this.registry],
    })
    source.observeBatches((kind, size) => sizes.observe({ kind }, size))
  }

  /** Adds a connection pool's use (PostgreSQL), read when scraped. */
  watchPool(usage: () => PoolUsage | undefined): void {
    new Gauge({
      name: 'beneficiary_postgres_pool_connections',
      help: 'Connections of the PostgreSQL pool, by state: in_use or idle.',
      labelNames: ['state'],
      registers: [this.registry],
      collect() {
        const now = usage()
        if (now === undefined) return
        this.set({ state: 'in_use' }, now.total - now.idle)
        this.set({ state: 'idle' }, now.idle)
      },
    })
    new Gauge({
      name: 'beneficiary_postgres_pool_waiting',
      help: 'Requests waiting for a connection of the PostgreSQL pool.',
      registers: [this.registry],
      collect() {
        const now = usage()
        if (now !== undefined) this.set(now.waiting)
      },
    })
  }

  /**
   * The access log's counters (D35, D37), read when scraped: entries written, pending, failed
   * batches, requests that waited for room, and entries purged by the retention.
   */
  watchAccessLog(
    stats: () => AccessLogStats,
    purged: () => number,
    purgedHistory: () => number,
  ): void {
    const registers = [this.registry]
    const counter = (name: string, help: string, read: () => number): void => {
      new Counter({
        name,
        help,
        registers,
        collect() {
          this.reset()
          this.inc(read())
        },
      })
    }
    counter(
      'beneficiary_access_log_written_total',
      'Access-log entries committed.',
      () => stats().written,
    )
    counter(
      'beneficiary_access_log_failed_batches_total',
      'Access-log batches whose write failed; their entries are written again.',
      () => stats().failedFlushes,
    )
    counter(
      'beneficiary_access_log_waits_total',
      'Requests that waited for room in the full access-log queue (back-pressure).',
      () => stats().waits,
    )
    counter(
      'beneficiary_access_log_refused_total',
      'Requests refused with a 503 after waiting too long for room in the access-log queue.',
      () => stats().refused,
    )
    counter(
      'beneficiary_access_log_purged_total',
      'Access-log entries purged by the retention.',
      purged,
    )
    counter(
      'beneficiary_history_purged_total',
      'History entries purged by their maximum age (--history-days).',
      purgedHistory,
    )
    new Gauge({
      name: 'beneficiary_access_log_pending',
      help: 'Access-log entries recorded and not yet committed.',
      registers,
      collect() {
        this.set(stats().pending)
      },
    })
  }

  /**
   * `beneficiary_redis_round_trip_seconds{outcome}`: how long each command of the shared
   * rate-limit store (one per limited request) took, `answered` or `failed` (a timeout, a
   * connection down), timed by the store itself.
   */
  watchRedis(source: RoundTripSource): void {
    const roundTrips = (this.#redisRoundTrips ??= new Histogram({
      name: 'beneficiary_redis_round_trip_seconds',
      help: 'Time of one command of the shared rate-limit store on Redis, by outcome.',
      labelNames: ['outcome'],
      buckets: REDIS_BUCKETS,
      registers: [this.registry],
    }))
    source.observeRoundTrips((seconds, answered) =>
      roundTrips.observe({ outcome: answered ? 'answered' : 'failed' }, seconds),
    )
  }
}

/** What `watchRedis` needs of the store: the Redis store's `observeRoundTrips`. */
export interface RoundTripSource {
  observeRoundTrips(listener: (seconds: number, answered: boolean) => void): void
}

/** Redis on a local network answers in well under a millisecond; the store gives up at 250 ms. */
const REDIS_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
]
