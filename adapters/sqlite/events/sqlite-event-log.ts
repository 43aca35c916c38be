import type BetterSqlite3 from 'better-sqlite3'
import type { HistoryAction } from '../../../core/beneficiary.js'
import type { EventRead, EventStore, StoredEvent } from '../../../core/ports/event-store.js'
import { translateStorageFailure } from '../sqlite-query.js'

const POSITION = /^(0|[1-9][0-9]{0,15})$/

type EventRow = [number, string, number, number, string, string, string]

/**
 * The change feed of `SqliteStorage` (D33), read from `beneficiary_events`, which a trigger on
 * the history fills in the transaction of each change (migration `0010_events`). A position is
 * the id of the last event read. SQLite lets one writer at a time take ids, and every
 * transaction commits whole (a group commit too: its writes commit together, numbered in the
 * order they ran), so no event can appear behind an id a reader has seen: the feed needs no
 * further guard here.
 */
export class SqliteEventLog implements EventStore {
  readonly #assertOpen: () => void
  readonly #page: BetterSqlite3.Statement<[number, number], EventRow>
  readonly #through: BetterSqlite3.Statement<[], number>
  readonly #head: BetterSqlite3.Statement<[], number | null>
  readonly #oldest: BetterSqlite3.Statement<[number], [number, number]>
  readonly #purge: (before: number, batch: number) => number

  constructor(db: BetterSqlite3.Database, assertOpen: () => void) {
    this.#assertOpen = assertOpen
    this.#page = db
      .prepare<[number, number], EventRow>(
        `SELECT id, action, beneficiary_id, at, client_id, request_id, changed_fields
        FROM beneficiary_events WHERE id > ? ORDER BY id LIMIT ?`,
      )
      .raw(true)
    this.#through = db
      .prepare<[], number>('SELECT through FROM beneficiary_event_purge WHERE id = 1')
      .pluck(true)
    this.#head = db.prepare<[], number | null>('SELECT max(id) FROM beneficiary_events').pluck(true)
    this.#oldest = db
      .prepare<[number], [number, number]>(
        'SELECT id, at FROM beneficiary_events ORDER BY id LIMIT ?',
      )
      .raw(true)
    const remove = db.prepare<[number]>('DELETE FROM beneficiary_events WHERE id <= ?')
    const mark = db.prepare<[number]>(
      'UPDATE beneficiary_event_purge SET through = max(through, ?) WHERE id = 1',
    )
    const purge = db.transaction((before: number, batch: number): number => {
      // The oldest events, in id order, up to the first that is still kept: the purge
      // deletes a prefix, so every id at or below `through` is gone and nothing above is.
      let last = 0
      let count = 0
      for (const [id, at] of this.#oldest.all(batch)) {
        if (at >= before) break
        last = id
        count += 1
      }
      if (count > 0) {
        remove.run(last)
        mark.run(last)
      }
      return count
    })
    this.#purge = (before, batch) => purge.immediate(before, batch)
  }

  async read(after: string | undefined, limit: number): Promise<EventRead> {
    this.#assertOpen()
    try {
      if (after !== undefined && !POSITION.test(after)) return 'invalid'
      const from = after === undefined ? this.#through.get()! : Number(after)
      const rows = this.#page.all(from, limit)
      // After the page: a purge between the two reads shows here, never as a silent gap.
      if (after !== undefined && from < this.#through.get()!) return 'expired'
      const events = rows.map(eventOf)
      return {
        events,
        next: events.length > 0 ? events[events.length - 1]!.position : String(from),
      }
    } catch (error) {
      throw translateStorageFailure(error)
    }
  }

  async purge(before: number, batch: number): Promise<number> {
    this.#assertOpen()
    try {
      return this.#purge(before, batch)
    } catch (error) {
      throw translateStorageFailure(error)
    }
  }

  async end(): Promise<string> {
    this.#assertOpen()
    return String(Math.max(this.#head.get() ?? 0, this.#through.get()!))
  }

  async head(): Promise<string> {
    this.#assertOpen()
    return String(this.#head.get() ?? 0)
  }
}

function eventOf(row: EventRow): StoredEvent {
  return {
    position: String(row[0]),
    action: row[1] as HistoryAction,
    beneficiaryId: row[2],
    at: row[3],
    clientId: row[4],
    requestId: row[5],
    changedFields: JSON.parse(row[6]) as string[],
  }
}
