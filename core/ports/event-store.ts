import type { HistoryAction } from '../beneficiary.js'

/**
 * One event of the change feed (D33) as an adapter stores it: what changed, never a value.
 * `position` is the adapter's own text for "right after this event" (digits and dots); the core
 * wraps it into the opaque cursor clients see.
 */
export interface StoredEvent {
  readonly position: string
  readonly action: HistoryAction
  readonly beneficiaryId: number
  /** Epoch milliseconds: the `at` of the history entry the change wrote. */
  readonly at: number
  readonly clientId: string
  readonly requestId: string
  /** The names of the fields the change touched, in the history entry's order. */
  readonly changedFields: readonly string[]
}

/** A page of the feed: the events after a position, and where to resume. */
export interface EventPage {
  readonly events: readonly StoredEvent[]
  /** Where to resume, also when `events` is empty (a position may move without events). */
  readonly next: string
}

/**
 * What `read` answers besides a page: `invalid` for a position this storage never hands out,
 * `expired` for one older than the events kept (D33: 410 `cursor_expired`).
 */
export type EventRead = EventPage | 'invalid' | 'expired'

/**
 * The change feed's storage (D33). Every write of `BeneficiaryStore` that appends a history
 * entry appends its event in the same transaction; this port only reads and purges them.
 *
 * The promise an adapter keeps: reading from `undefined` (the oldest event kept), then always
 * from the last `next`, yields every committed event exactly once, the events of a record in
 * the order of its changes, however many writers and instances there are.
 */
export interface EventStore {
  /** Up to `limit` events after `after` (`undefined`: from the oldest kept). */
  read(after: string | undefined, limit: number): Promise<EventRead>
  /**
   * Deletes up to `batch` of the oldest events that occurred before `before` (epoch ms);
   * returns how many it deleted. A position before a deleted event becomes `expired`.
   */
  purge(before: number, batch: number): Promise<number>
  /**
   * A cheap marker of the newest event (it changes when an event is appended), for long polls
   * to notice writes of other processes without reading pages.
   */
  head(): Promise<string>
  /** A position after every event committed so far: where a new follower starts. */
  end(): Promise<string>
}
