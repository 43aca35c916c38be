/** One call waiting for its batch. */
interface Waiting<Item, Result> {
  readonly item: Item
  readonly resolve: (result: Result) => void
  readonly reject: (error: unknown) => void
}

/** How a {@link PostgresBatcher} groups calls. */
export interface BatchLimits {
  /** Batches running at once; calls that arrive while this many run wait for the next one. */
  readonly inFlight: number
  /** Calls in one batch at most. */
  readonly size: number
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
 * fails with that error (a batch whose calls can fail one by one says so in its results).
 */
export class PostgresBatcher<Item, Result> {
  readonly #run: (items: readonly Item[]) => Promise<readonly Result[]>
  readonly #limits: BatchLimits
  readonly #flushLater = (): void => this.#flush()
  #waiting: Waiting<Item, Result>[] = []
  #running = 0
  #scheduled = false

  constructor(run: (items: readonly Item[]) => Promise<readonly Result[]>, limits: BatchLimits) {
    if (!(limits.inFlight >= 1 && limits.size >= 1)) {
      throw new TypeError('batch limits must be at least 1')
    }
    this.#run = run
    this.#limits = { ...limits }
  }

  /** Adds `item` to the next batch; settles with its result once that batch ran. */
  submit(item: Item): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      this.#waiting.push({ item, resolve, reject })
      this.#schedule()
    })
  }

  #schedule(): void {
    if (this.#scheduled || this.#running >= this.#limits.inFlight) return
    this.#scheduled = true
    setImmediate(this.#flushLater)
  }

  #flush(): void {
    this.#scheduled = false
    while (this.#running < this.#limits.inFlight && this.#waiting.length > 0) {
      const batch = this.#waiting.splice(0, this.#limits.size)
      this.#running++
      void this.#send(batch)
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
