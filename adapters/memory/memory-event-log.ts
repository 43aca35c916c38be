import type { HistoryEntry } from '../../core/beneficiary.js'
import type { EventRead, EventStore, StoredEvent } from '../../core/ports/event-store.js'

const POSITION = /^(0|[1-9][0-9]{0,15})$/

/**
 * The change feed of `MemoryStorage` (D33). `MemoryBeneficiaryStore` appends an event in the
 * same synchronous step as the history entry it reports, so the two exist together or not at
 * all; a position is the number of the last event read, events are numbered in the order they
 * were written, and nothing can appear behind a position once handed out.
 */
export class MemoryEventLog implements EventStore {
  readonly #assertOpen: () => void
  /** Events in number order; the first has number `#first`. */
  #events: StoredEvent[] = []
  #first = 1
  #last = 0

  constructor(assertOpen: () => void) {
    this.#assertOpen = assertOpen
  }

  /** Appends the event of `entry`, a change to the record `beneficiaryId`. */
  append(beneficiaryId: number, entry: HistoryEntry): void {
    this.#last += 1
    this.#events.push(
      Object.freeze({
        position: String(this.#last),
        action: entry.action,
        beneficiaryId,
        at: entry.at,
        clientId: entry.client_id,
        requestId: entry.request_id,
        changedFields: Object.freeze(entry.changes.map((change) => change.field)),
      }),
    )
  }

  async read(after: string | undefined, limit: number): Promise<EventRead> {
    this.#assertOpen()
    let from = this.#first - 1
    if (after !== undefined) {
      if (!POSITION.test(after)) return 'invalid'
      from = Number(after)
      if (from < this.#first - 1) return 'expired'
    }
    const start = Math.max(0, from - this.#first + 1)
    const events = this.#events.slice(start, start + limit)
    const next = events.length > 0 ? events[events.length - 1]!.position : String(from)
    return { events, next }
  }

  async purge(before: number, batch: number): Promise<number> {
    this.#assertOpen()
    let count = 0
    while (count < batch && count < this.#events.length && this.#events[count]!.at < before) {
      count += 1
    }
    if (count > 0) {
      this.#events = this.#events.slice(count)
      this.#first += count
    }
    return count
  }

  async end(): Promise<string> {
    this.#assertOpen()
    return String(this.#last)
  }

  async head(): Promise<string> {
    this.#assertOpen()
    return String(this.#last)
  }
}
