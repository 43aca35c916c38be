import { StorageUnavailableError } from '../../core/errors.js'

/** One call waiting for its batch. */
interface Waiting<Item, Result> {
  readonly item: Item
  /** When it was made, by the batcher's clock. */
  readonly since: number
  readonly resolve: (result: Result) => void
  readonly reject: (error: unknown) => void
}

/** The kinds of calls a storage batches: reads of a record, token checks, creates. */
export type BatchKind = 'read' | 'check' | 'create'

/** Told of each batch a storage sends: its kind and how many calls it carries. */
export type BatchListener = (kind: BatchKind, size: number) => void

/** How a storage's batchers are set: their limits, and who is told of each batch sent. */
export interface Batching {
  readonly limits: BatchLimits
  readonly observe: BatchListener
}

/** How a {@link PostgresBatcher} groups calls. */
export interface BatchLimits {
  /** Batches running at once; calls that arrive while this many run wait for the next one. */
  readonly inFlight: number
  /** Calls in one batch at most. */
  readonly size: number
  /**
   * How long a call may wait for its batch to be sent, in milliseconds: past it, it fails with
   * `StorageUnavailableError('busy')`, as a call waiting for a connection of a busy pool does.
   */
  readonly maxWaitMs: number
}

/**
 * Runs many small calls of one kind as few statements (the batching of DataLoader). Calls made
 * in one turn of the event loop go out together at the end of it; while `inFlight` batches are
 * running, calls wait and go out together as soon as one ends. An idle service therefore sends
 * each call at once, alone, and a busy one sends one statement, one round trip and one
 * transaction for many calls: on PostgreSQL most of a point read's cost, on both ends, is the
 * statement's, not the row's.
 *
 * `run` answers the batch's items in their order, or throws: then every call of the batch
 * fails with that error (a batch whose calls can fail one by one says so in its results). A call
 * never waits for its batch longer than `maxWaitMs` (PostgreSQL stuck on a lock, say): the
 * running batches are bounded by the statement timeout, the waiting calls by this.
 */
export class PostgresBatcher<Item, Result> {
  readonly #run: (items: readonly Item[]) => Promise<readonly Result[]>
  readonly #limits: BatchLimits
  readonly #now: () => number
  readonly #onSend: ((size: number) => void) | undefined
  readonly #flushLater = (): void => this.#flush()
  readonly #expireLater = (): void => this.#expire()
  #waiting: Waiting<Item, Result>[] = []
  #running = 0
  #scheduled = false
  #expiry: NodeJS.Timeout | undefined

  /**
   * @param options.now Milliseconds on a monotonic clock, for the waits; `performance.now` by
   * default. `options.onSend` is told the size of each batch as it is sent.
   */
  constructor(
    run: (items: readonly Item[]) => Promise<readonly Result[]>,
    limits: BatchLimits,
    options: { readonly now?: () => number; readonly onSend?: (size: number) => void } = {},
  ) {
    if (!(limits.inFlight >= 1 && limits.size >= 1 && limits.maxWaitMs >= 1)) {
      throw new TypeError('batch limits must be at least 1')
    }
    this.#run = run
    this.#limits = { ...limits }
    this.#now = options.now ?? (() => performance.now())
    this.#onSend = options.onSend
  }

  /** Adds `item` to the next batch; settles with its result once that batch ran. */
  submit(item: Item): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      this.#waiting.push({ item, since: this.#now(), resolve, reject })
      this.#schedule()
    })
  }

  #schedule(): void {
    if (this.#running >= this.#limits.inFlight) {
      this.#expireOldest()
    } else if (!this.#scheduled) {
      this.#scheduled = true
      setImmediate(this.#flushLater)
    }
  }

  /** Arms the timer that fails the oldest waiting call when its wait is over. */
  #expireOldest(): void {
    const oldest = this.#waiting[0]
    if (this.#expiry !== undefined || oldest === undefined) return
    const left = oldest.since + this.#limits.maxWaitMs - this.#now()
    this.#expiry = setTimeout(this.#expireLater, Math.max(0, left))
    this.#expiry.unref()
  }

  #expire(): void {
    this.#expiry = undefined
    const deadline = this.#now() - this.#limits.maxWaitMs
    let expired = 0
    while (expired < this.#waiting.length && this.#waiting[expired]!.since <= deadline) expired++
    for (const waiting of this.#waiting.splice(0, expired)) {
      waiting.reject(new StorageUnavailableError('busy'))
    }
    this.#schedule()
  }

  #flush(): void {
    this.#scheduled = false
    while (this.#running < this.#limits.inFlight && this.#waiting.length > 0) {
      const batch = this.#waiting.splice(0, this.#limits.size)
      this.#running++
      this.#onSend?.(batch.length)
      void this.#send(batch)
    }
    if (this.#waiting.length === 0 && this.#expiry !== undefined) {
      clearTimeout(this.#expiry)
      this.#expiry = undefined
    }
  }

  async #send(batch: readonly Waiting<Item, Result>[]): Promise<void> {
    try {
      const results = await this.#run(batch.map((waiting) => waiting.item))
      if (results.length !== batch.length) {
        throw new Error(`a batch of ${batch.length} answered ${results.length}`)
      }
      batch.forEach((waiting, i) => waiting.resolve(results[i]!))
    } catch (error) {
      for (const waiting of batch) waiting.reject(error)
    } finally {
      this.#running--
      if (this.#waiting.length > 0) this.#schedule()
    }
  }
}
