import type { HistoryAction } from '../../core/beneficiary.js'
import type { EventRead, EventStore, StoredEvent } from '../../core/ports/event-store.js'
import type { Queryable } from './postgres-query.js'
import { translateStorageFailure } from './postgres-storage-failure.js'

const NUMBER = '(0|[1-9][0-9]{0,19})'
const POSITION = new RegExp(`^${NUMBER}\\.${NUMBER}\\.${NUMBER}$`)

/**
 * A place in the feed: every event of a transaction id below `lo` has been read, and of the
 * batch of transaction ids from `lo` (inclusive) to `hi` (exclusive), every event up to `last`.
 * Transaction ids are 64-bit (`xid8`): kept as bigint.
 */
interface Position {
  readonly lo: bigint
  readonly hi: bigint
  readonly last: bigint
}

/**
 * The change feed of `PostgresStorage` (D33), from `beneficiary_events` (migration `0004_events`).
 *
 * Event numbers come from a sequence when the row is written, but transactions commit in
 * another order: a consumer that has read event 106 could later see event 105 commit behind it.
 * The guard is PostgreSQL's own visibility horizon. Every event carries its transaction id
 * (`xid8`); `pg_snapshot_xmin(pg_current_snapshot())` is the oldest transaction id still
 * running, so every transaction below it has ended, committed or not, and no event can ever
 * appear with a transaction id below it. The feed is read in batches of transaction ids
 * `[lo, hi)`, `hi` being such a horizon when the batch began: a batch is complete and final,
 * read in event-number order, and the next batch starts at `hi`. A cursor names its batch and
 * the last event read in it, so it never passes an event that can still commit.
 *
 * The events of one record keep their order: a change of a record happens after the previous
 * one committed (row locks, compare-and-swap versions), so its transaction id is not lower
 * (never in an earlier batch) and its event number is higher (later in the same batch).
 *
 * The cost of the guard: an event waits for every older transaction of the cluster to end
 * before the feed hands it out, so a transaction left open elsewhere holds the feed back
 * (never makes it skip).
 */
export class PostgresEventLog implements EventStore {
  readonly #pool: Queryable
  readonly #assertOpen: () => void
  readonly #page: string
  readonly #state: string
  readonly #head: string
  readonly #purge: string

  constructor(pool: Queryable, schema: string, assertOpen: () => void) {
    this.#pool = pool
    this.#assertOpen = assertOpen
    const events = `"${schema}".beneficiary_events`
    const purge = `"${schema}".beneficiary_event_purge`
    this.#page = `SELECT id::text AS event_id, xid::text AS event_xid, action, beneficiary_id::float8, at::float8 AS at,
        client_id, request_id, changed_fields
      FROM ${events}
      WHERE xid >= $1::text::xid8 AND xid < $2::text::xid8 AND id > $3::bigint
      ORDER BY id LIMIT $4`
    this.#state = `SELECT pg_snapshot_xmin(pg_current_snapshot())::text,
        through_id::text, through_xid::text
      FROM ${purge} WHERE id = 1`
    this.#head = `SELECT max(xid)::text FROM ${events}
      WHERE xid < pg_snapshot_xmin(pg_current_snapshot())`
    this.#purge = `WITH oldest AS (
        SELECT id, at FROM ${events} ORDER BY id LIMIT $2),
      stop AS (SELECT min(id) AS id FROM oldest WHERE at >= $1),
      gone AS (
        DELETE FROM ${events} e USING oldest o
        WHERE e.id = o.id AND (o.id < (SELECT id FROM stop) OR (SELECT id FROM stop) IS NULL)
        RETURNING e.id, e.xid),
      mark AS (
        UPDATE ${purge} SET
          through_id = greatest(through_id, (SELECT max(id) FROM gone)),
          through_xid = greatest(through_xid, (SELECT xid FROM gone ORDER BY xid DESC LIMIT 1))
        WHERE id = 1 AND EXISTS (SELECT 1 FROM gone))
      SELECT count(*)::int FROM gone`
  }

  async read(after: string | undefined, limit: number): Promise<EventRead> {
    this.#assertOpen()
    let from: Position
    if (after === undefined) {
      from = { lo: 0n, hi: 0n, last: 0n }
    } else {
      const parts = POSITION.exec(after)
      if (parts === null) return 'invalid'
      from = { lo: BigInt(parts[1]!), hi: BigInt(parts[2]!), last: BigInt(parts[3]!) }
      if (from.lo > from.hi) return 'invalid'
    }
    try {
      const events: StoredEvent[] = []
      let position = from
      // The batch the cursor is in, then (when it runs out) the batch up to today's horizon.
      if (position.hi > position.lo) {
        events.push(...(await this.#batch(position, limit)))
      }
      const [horizon, throughId, throughXid] = (
        await this.#pool.query({ text: this.#state, rowMode: 'array' })
      ).rows[0] as [string, string, string]
      if (after !== undefined && expired(from, BigInt(throughId), BigInt(throughXid))) {
        return 'expired'
      }
      if (events.length < limit && BigInt(horizon) > position.hi) {
        position = { lo: position.hi, hi: BigInt(horizon), last: 0n }
        events.push(...(await this.#batch(position, limit - events.length)))
      }
      const next = events.length > 0 ? events[events.length - 1]!.position : positionText(position)
      return { events, next }
    } catch (error) {
      throw translateStorageFailure(error)
    }
  }

  async #batch(position: Position, limit: number): Promise<StoredEvent[]> {
    const { rows } = await this.#pool.query({
      text: this.#page,
      values: [String(position.lo), String(position.hi), String(position.last), limit],
      rowMode: 'array',
    })
    return (rows as unknown[][]).map((row) => {
      const [id, , action, beneficiaryId, at, clientId, requestId, fields] = row as [
        string,
        string,
        HistoryAction,
        number,
        number,
        string,
        string,
        string[],
      ]
      return {
        position: positionText({ ...position, last: BigInt(id) }),
        action,
        beneficiaryId,
        at,
        clientId,
        requestId,
        changedFields: fields,
      }
    })
  }

  async purge(before: number, batch: number): Promise<number> {
    this.#assertOpen()
    try {
      const { rows } = await this.#pool.query({
        text: this.#purge,
        values: [before, batch],
        rowMode: 'array',
      })
      return (rows[0] as [number])[0]
    } catch (error) {
      throw translateStorageFailure(error)
    }
  }

  /** The empty batch at today's horizon: every event below it is complete, and passed. */
  async end(): Promise<string> {
    this.#assertOpen()
    try {
      const [horizon] = (await this.#pool.query({ text: this.#state, rowMode: 'array' }))
        .rows[0] as [string]
      return `${horizon}.${horizon}.0`
    } catch (error) {
      throw translateStorageFailure(error)
    }
  }

  async head(): Promise<string> {
    this.#assertOpen()
    try {
      const { rows } = await this.#pool.query({ text: this.#head, rowMode: 'array' })
      return String((rows[0] as [string | null])[0] ?? '')
    } catch (error) {
      throw translateStorageFailure(error)
    }
  }
}

function positionText(position: Position): string {
  return `${position.lo}.${position.hi}.${position.last}`
}

/**
 * Whether the purge may have deleted an event the cursor has not read: one of a transaction
 * id at or above `lo`, unless it lies in the cursor's batch at or before its last event.
 * Conservative: only a cursor near the end of the retention can be told expired too early.
 */
function expired(from: Position, throughId: bigint, throughXid: bigint): boolean {
  if (throughId === 0n) return false
  if (throughXid < from.lo) return false
  return !(throughId <= from.last && throughXid < from.hi)
}
