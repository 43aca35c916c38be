import type { Clock, EventStore } from '../core/index.js'

/** Events deleted per statement: short transactions, never a long lock on the feed. */
export const EVENT_PURGE_BATCH = 500
/** How often the purge looks for events past the retention. */
const PURGE_INTERVAL_MS = 10 * 60_000
const DAY_MS = 86_400_000

/**
 * Deletes the events older than `retentionDays` (D33), `EVENT_PURGE_BATCH` at a time, letting
 * the event loop run between batches; returns how many it deleted. A cursor from before a
 * deleted event then answers 410 `cursor_expired`.
 */
export async function purgeExpiredEvents(
  store: EventStore,
  clock: Clock,
  retentionDays: number,
): Promise<number> {
  const before = clock.now() - retentionDays * DAY_MS
  let total = 0
  for (;;) {
    const deleted = await store.purge(before, EVENT_PURGE_BATCH)
    total += deleted
    if (deleted < EVENT_PURGE_BATCH) return total
    await new Promise((resolve) => setImmediate(resolve))
  }
}

/**
 * Runs `purgeExpiredEvents` at start and every ten minutes until `stop()`. With several
 * instances each purges; the batches delete disjoint or already deleted rows, so they only
 * share the work. A failed purge is reported to `onError` and tried again at the next round.
 */
export class EventRetention {
  readonly #store: EventStore
  readonly #clock: Clock
  readonly #retentionDays: number
  readonly #onError: (error: unknown) => void
  #timer: ReturnType<typeof setInterval> | undefined
  #running: Promise<void> | undefined

  constructor(
    store: EventStore,
    clock: Clock,
    retentionDays: number,
    onError: (error: unknown) => void,
  ) {
    this.#store = store
    this.#clock = clock
    this.#retentionDays = retentionDays
    this.#onError = onError
  }

  start(): void {
    if (this.#timer !== undefined) return
    this.#round()
    this.#timer = setInterval(() => this.#round(), PURGE_INTERVAL_MS)
    this.#timer.unref()
  }

  async stop(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer)
    this.#timer = undefined
    await this.#running
  }

  #round(): void {
    if (this.#running !== undefined) return
    this.#running = purgeExpiredEvents(this.#store, this.#clock, this.#retentionDays)
      .then(
        () => undefined,
        (error: unknown) => this.#onError(error),
      )
      .finally(() => {
        this.#running = undefined
      })
  }
}
