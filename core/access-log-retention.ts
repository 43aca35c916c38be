import { startBackgroundTimer, stopBackgroundTimer, type TimerHandle } from './background-timer.js'
import type { AccessLogStore } from './ports/access-log-store.js'
import type { HistoryPurge } from './ports/history-purge.js'
import type { Clock } from './ports/clock.js'
import { DAY_MS } from './time.js'

/** Options of {@link AccessLogRetention}. */
export interface AccessLogRetentionOptions {
  /** Entries older than this many days are purged (D37). Default 400. */
  readonly days?: number
  /** Entries deleted per transaction: small, so that no request waits long for it. Default 500. */
  readonly batchSize?: number
  /**
   * The pause between two batches while expired entries remain: the purge's pace is at most
   * `batchSize` entries per `pauseMs`. Default 1000.
   */
  readonly pauseMs?: number
  /** How often to look for newly expired entries once none is left. Default one hour. */
  readonly idleMs?: number
  /**
   * History entries older than this many days are purged too (D37), through the `history`
   * given to the constructor. Default: none, the history is kept while its record exists.
   */
  readonly historyDays?: number | undefined
}

const DEFAULTS = { days: 400, batchSize: 500, pauseMs: 1000, idleMs: 3_600_000 }

/**
 * Purges the access-log entries older than the retention (D37), in small batches, by itself:
 * one batch, then a pause, as long as expired entries remain; then a look every `idleMs`. The
 * time comes from the clock, so a test moves it instead of waiting.
 *
 * @example
 * const retention = new AccessLogRetention(storage.accessLog, systemClock, { days: 400 })
 * retention.start()
 * // … on shutdown:
 * await retention.stop()
 */
export class AccessLogRetention {
  readonly #log: AccessLogStore
  readonly #clock: Clock
  readonly #options: Readonly<typeof DEFAULTS>
  readonly #history: { readonly purge: HistoryPurge; readonly days: number } | undefined
  #purgedHistory = 0
  #timer: TimerHandle | undefined
  #running: Promise<unknown> | undefined
  #stopped = true
  #purged = 0
  #onError: ((error: unknown) => void) | undefined

  /** @throws TypeError when an option is not a positive integer. */
  constructor(
    log: AccessLogStore,
    clock: Clock,
    options: AccessLogRetentionOptions = {},
    history?: HistoryPurge,
  ) {
    const { historyDays, ...rest } = options
    const merged = { ...DEFAULTS, ...rest, ...(historyDays !== undefined && { historyDays }) }
    for (const [name, value] of Object.entries(merged)) {
      if (!Number.isSafeInteger(value) || value < 1)
        throw new TypeError(`${name} must be a positive integer`)
    }
    this.#log = log
    this.#clock = clock
    this.#options = Object.freeze({
      days: merged.days,
      batchSize: merged.batchSize,
      pauseMs: merged.pauseMs,
      idleMs: merged.idleMs,
    })
    this.#history =
      historyDays === undefined || history === undefined
        ? undefined
        : { purge: history, days: historyDays }
  }

  /** History entries purged since the start (D37); for metrics. */
  get purgedHistory(): number {
    return this.#purgedHistory
  }

  /** Entries purged since the start; for metrics. */
  get purged(): number {
    return this.#purged
  }

  /** Has `listener` told of a failed batch (retried after the pause); it must not throw. */
  observeFailures(listener: (error: unknown) => void): void {
    this.#onError = listener
  }

  /**
   * Purges one batch of expired access-log entries, and one of expired history entries when a
   * maximum age is set; the larger of the two counts (a full batch means more may be left).
   */
  async purgeBatch(): Promise<number> {
    const now = this.#clock.now()
    const purged = await this.#log.purge(now - this.#options.days * DAY_MS, this.#options.batchSize)
    this.#purged += purged
    const history = this.#history
    if (history === undefined) return purged
    const erased = await history.purge.purge(now - history.days * DAY_MS, this.#options.batchSize)
    this.#purgedHistory += erased
    return Math.max(purged, erased)
  }

  /** Starts purging in the background; the timer does not keep the process alive. */
  start(): void {
    if (!this.#stopped) return
    this.#stopped = false
    this.#schedule(0)
  }

  /** Stops after the batch in progress, if any. */
  async stop(): Promise<void> {
    this.#stopped = true
    stopBackgroundTimer(this.#timer)
    this.#timer = undefined
    await this.#running
  }

  #schedule(delayMs: number): void {
    if (this.#stopped) return
    this.#timer = startBackgroundTimer(() => {
      this.#timer = undefined
      const run = this.purgeBatch().then(
        (purged) =>
          purged < this.#options.batchSize ? this.#options.idleMs : this.#options.pauseMs,
        (error: unknown) => {
          this.#onError?.(error)
          return this.#options.pauseMs
        },
      )
      this.#running = run
      void run.then((next) => this.#schedule(next))
    }, delayMs)
  }
}
