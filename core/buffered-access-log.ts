import { StorageUnavailableError } from './errors.js'
import { startBackgroundTimer, stopBackgroundTimer, type TimerHandle } from './background-timer.js'
import type {
  AccessLogEntry,
  AccessLogScan,
  AccessLogStats,
  AccessLogStore,
  AccessLogTable,
  StoredAccessLogEntry,
} from './ports/access-log-store.js'
import type { Page } from './ports/beneficiary-store.js'

/** Options of {@link BufferedAccessLog}. */
export interface AccessLogBuffering {
  /**
   * The longest an entry waits in memory before its batch is written. Default 500: with a
   * batch's commit well under half a second, every entry older than one second is committed,
   * the bound the documentation states for a crash.
   */
  readonly flushMs?: number
  /** Entries that start a write at once, without waiting for `flushMs`. Default 2000. */
  readonly batchSize?: number
  /**
   * Entries held at most: beyond this a request waits for the pending batch to commit
   * (back-pressure) rather than growing memory or dropping an entry. Default 50,000.
   */
  readonly maxPending?: number
  /**
   * How long a request waits for room in a full queue before it is refused with 503
   * `service_unavailable` (its answer, not sent, is not recorded): a storage that stopped
   * taking the log's batches never hangs a read. Default 5000.
   */
  readonly maxWaitMs?: number
}

const DEFAULTS = { flushMs: 500, batchSize: 2000, maxPending: 50_000, maxWaitMs: 5000 }

/** A request waiting for room, with the entry it will queue. */
interface Waiter {
  readonly entry: AccessLogEntry
  readonly resolve: () => void
  readonly timer: TimerHandle
}

/**
 * The access log's batching (D35) in front of an adapter's table: `record` pushes to an array
 * and returns; a timer (not keeping the process alive) or a full batch writes what is queued
 * in one transaction, one write at a time. A failed write keeps its entries, in order, for the
 * next attempt. Reads go straight to the table.
 *
 * @example
 * const log = new BufferedAccessLog(new SqliteAccessLogTable(db, statements))
 * log.record({ at: Date.now(), client_id, request_id, operation: 'get', beneficiary_ids: [1], purpose: null })
 * await log.close()
 */
export class BufferedAccessLog implements AccessLogStore {
  readonly #table: AccessLogTable
  readonly #options: Readonly<Required<AccessLogBuffering>>
  #queue: AccessLogEntry[] = []
  #writing: Promise<void> | undefined
  #timer: TimerHandle | undefined
  #waiters: Waiter[] = []
  #refused = 0
  #closed = false
  #written = 0
  #failedFlushes = 0
  #waits = 0
  #onError: ((error: unknown) => void) | undefined

  /** @throws TypeError when an option is not a positive integer. */
  constructor(table: AccessLogTable, options: AccessLogBuffering = {}) {
    const merged = { ...DEFAULTS, ...options }
    for (const [name, value] of Object.entries(merged)) {
      if (!Number.isSafeInteger(value) || value < 1)
        throw new TypeError(`${name} must be a positive integer`)
    }
    this.#table = table
    this.#options = Object.freeze(merged)
  }

  get stats(): AccessLogStats {
    return {
      written: this.#written,
      pending: this.#queue.length,
      failedFlushes: this.#failedFlushes,
      waits: this.#waits,
      refused: this.#refused,
    }
  }

  /** Has `listener` told of each failed write (for a log line or a metric); it must not throw. */
  observeFailures(listener: (error: unknown) => void): void {
    this.#onError = listener
  }

  record(entry: AccessLogEntry): Promise<void> | undefined {
    if (this.#closed) throw new Error('the access log is closed')
    if (this.#queue.length >= this.#options.maxPending) return this.#waitForRoom(entry)
    this.#queue.push(entry)
    if (this.#queue.length >= this.#options.batchSize) this.#startWrite()
    else if (this.#timer === undefined) this.#schedule()
    return undefined
  }

  /** Queues `entry` once a write makes room, or refuses the request after `maxWaitMs`. */
  #waitForRoom(entry: AccessLogEntry): Promise<void> {
    this.#waits++
    this.#startWrite()
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        entry,
        resolve,
        timer: startBackgroundTimer(
          () => {
            this.#waiters = this.#waiters.filter((other) => other !== waiter)
            this.#refused++
            reject(new StorageUnavailableError('busy'))
          },
          this.#options.maxWaitMs,
          true,
        ),
      }
      this.#waiters.push(waiter)
    })
  }

  async flush(): Promise<void> {
    // Until the queue is empty: entries recorded during a write go in the next one.
    for (let rounds = 0; rounds < 1000; rounds++) {
      if (this.#writing !== undefined) {
        await this.#writing
        continue
      }
      if (this.#queue.length === 0) return
      this.#startWrite()
      await this.#writing
      if (this.#lastFailure !== undefined) {
        const failure = this.#lastFailure
        this.#lastFailure = undefined
        throw failure
      }
    }
  }

  #lastFailure: unknown

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    stopBackgroundTimer(this.#timer)
    this.#timer = undefined
    await this.flush()
  }

  forBeneficiary(
    beneficiaryId: number,
    offset: number,
    limit: number,
  ): Promise<Page<StoredAccessLogEntry>> {
    return this.#table.forBeneficiary(beneficiaryId, offset, limit)
  }

  scan(query: AccessLogScan): Promise<readonly StoredAccessLogEntry[]> {
    return this.#table.scan(query)
  }

  purge(before: number, limit: number): Promise<number> {
    return this.#table.purge(before, limit)
  }

  #schedule(): void {
    if (this.#closed) return
    this.#timer = startBackgroundTimer(() => {
      this.#timer = undefined
      this.#startWrite()
    }, this.#options.flushMs)
  }

  #startWrite(): void {
    if (this.#writing !== undefined || this.#queue.length === 0) return
    stopBackgroundTimer(this.#timer)
    this.#timer = undefined
    const batch = this.#queue.splice(0, this.#options.batchSize)
    this.#writing = this.#table.append(batch).then(
      () => {
        this.#written += batch.length
        this.#lastFailure = undefined
        this.#done()
      },
      (error: unknown) => {
        // Kept, in order, in front of what came since: the next write tries them again.
        this.#queue = batch.concat(this.#queue)
        this.#failedFlushes++
        this.#lastFailure = error
        this.#onError?.(error)
        this.#done()
      },
    )
  }

  #done(): void {
    this.#writing = undefined
    const room = this.#options.maxPending - this.#queue.length
    for (const waiter of this.#waiters.splice(0, Math.max(room, 0))) {
      stopBackgroundTimer(waiter.timer)
      this.#queue.push(waiter.entry)
      waiter.resolve()
    }
    if (this.#queue.length >= this.#options.batchSize && this.#lastFailure === undefined) {
      this.#startWrite()
    } else if (this.#queue.length > 0 && this.#timer === undefined) {
      this.#schedule()
    }
  }
}
