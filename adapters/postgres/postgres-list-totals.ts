import { sql, type RawBuilder } from 'kysely'
import { BENEFICIARY_STATUSES } from '../../core/beneficiary.js'
import type { ListQuery } from '../../core/ports/beneficiary-store.js'
import { DAY_MS } from '../../core/time.js'
import { table, versionExpression } from './postgres-counters.js'
import { idBound } from './postgres-list-items.js'
import { NO_LOWER, NO_UPPER } from './postgres-list-plan.js'
import { slot } from './postgres-query.js'

/** Predictions kept at most; past it they are forgotten (a miss costs one transaction). */
const MAX_PREDICTIONS = 1_000

/** The filters of a list query, as the totals and the page queries take them. */
export interface Filters {
  readonly status: string | undefined
  readonly from: number
  readonly before: number
  readonly dates: boolean
  /** The tsquery of a search (see `postgres-list-search.ts`), or `undefined` without one. */
  readonly q: string | undefined
  /** Names the filters: the key of their prediction. */
  readonly key: string
}

/** The filters of `query`; `q` is its search's tsquery, if any. */
export function filtersOf(query: ListQuery, q: string | undefined): Filters {
  const from = query.createdFrom ?? NO_LOWER
  const before = query.createdBefore ?? NO_UPPER
  return {
    status: query.status,
    from,
    before,
    dates: query.createdFrom !== undefined || query.createdBefore !== undefined,
    q,
    key: `${q ?? ''}\u0000${query.status ?? ''}\u0000${from}\u0000${before}`,
  }
}

/**
 * What the last list with the same filters found, to plan the next one in one statement: the
 * statement counts again and returns the total, so a stale prediction costs a second try,
 * never a wrong page.
 */
export interface Prediction {
  readonly total: number
  /** The data version the total of a search was counted at; -1 otherwise. */
  readonly version: number
  /** Every record, whatever the filters: with `total`, how selective they are. */
  readonly unfiltered: number
  /** The id bounds of the days of a date filter (0 without dates). */
  readonly lo: number
  readonly hi: number
}

/**
 * The exact totals of the listing and the predictions made from them. Without a search, a
 * total is a sum of counter rows (`postgres-counters.ts`): records per status, or per status
 * and creation day plus an index count for the parts of days a range cuts. A search counts its
 * matches in the GIN index, but only when the data version moved since it last counted: the
 * known total is passed in, and a CASE leaves the count unrun when the version agrees.
 */
export class PostgresListTotals {
  readonly #schema: string
  readonly #predictions = new Map<string, Prediction>()

  constructor(schema: string) {
    this.#schema = schema
  }

  /**
   * A one-row query with the columns `total`, `version` and, with `planning`, `unfiltered`,
   * `lo` and `hi` (see {@link Prediction}). Slots: those of {@link totalValues}.
   */
  totals(filters: Pick<Filters, 'dates' | 'q'>, planning: boolean): RawBuilder<unknown> {
    const schema = this.#schema
    const counts = table(schema, 'beneficiary_counts')
    let select: RawBuilder<unknown>
    if (filters.q !== undefined) {
      const dates = filters.dates
        ? sql`AND created_at >= ${slot('from')}::bigint AND created_at < ${slot('before')}::bigint`
        : sql``
      select = sql`SELECT CASE WHEN v.version = ${slot('known_version')}::bigint
          THEN ${slot('known_total')}::bigint
          ELSE (SELECT count(*) FROM ${table(schema, 'beneficiaries')}
            WHERE words @@ ${slot('q')}::tsquery ${dates}
              AND (status COLLATE "C") = ANY(${slot('statuses')}::text[]))
        END AS total, v.version
        FROM (SELECT ${versionExpression(schema)} AS version OFFSET 0) v`
    } else if (!filters.dates) {
      select = sql`SELECT (SELECT coalesce(sum(n), 0)::bigint FROM ${counts}
          WHERE kind = 's' AND status = ANY(${slot('statuses')}::text[])
            AND key = 0 AND prefix = '') AS total, -1::bigint AS version`
    } else {
      const edge = (name: string) => sql`(SELECT count(*)
        FROM ${table(schema, 'beneficiaries')}
        WHERE created_at >= ${slot(`${name}_from`)}::bigint
          AND created_at < ${slot(`${name}_before`)}::bigint
          AND (status COLLATE "C") = ANY(${slot('statuses')}::text[]))`
      select = sql`SELECT (SELECT coalesce(sum(n), 0)::bigint FROM ${counts}
          WHERE kind = 'd' AND status = ANY(${slot('statuses')}::text[])
            AND key >= ${slot('day_from')}::bigint AND key < ${slot('day_before')}::bigint
            AND prefix = '') + ${edge('head')} + ${edge('tail')} AS total,
        -1::bigint AS version`
    }
    if (!planning) return select
    const bounds = filters.dates
      ? sql`${idBound(schema, 'min')} AS lo, ${idBound(schema, 'max')} AS hi`
      : sql`0 AS lo, 0 AS hi`
    return sql`SELECT t.total, t.version, (SELECT coalesce(sum(n), 0)::bigint FROM ${counts}
        WHERE kind = 's' AND status = ANY(${slot('all_statuses')}::text[])
          AND key = 0 AND prefix = '') AS unfiltered, ${bounds}
      FROM (${select}) t`
  }

  /** The slot values of {@link totals} (and of `idBound`) for these filters. */
  totalValues(filters: Filters): Record<string, unknown> {
    const { from, before } = filters
    const known = this.#predictions.get(filters.key)
    const values: Record<string, unknown> = {
      status: filters.status,
      statuses: filters.status === undefined ? BENEFICIARY_STATUSES : [filters.status],
      all_statuses: BENEFICIARY_STATUSES,
      from,
      before,
      q: filters.q,
      known_version: known?.version ?? -1,
      known_total: known?.total ?? 0,
      // The days a date range touches, for the id bounds.
      bounds_from: Math.floor(from / DAY_MS),
      bounds_before: Math.floor((before - 1) / DAY_MS) + 1,
    }
    // The whole days of the range, counted by the day counters; the cut days at either end,
    // counted in the index of created_at (`head`, `tail`).
    const dayFrom = from === NO_LOWER ? NO_LOWER : Math.ceil(from / DAY_MS)
    const dayBefore = before === NO_UPPER ? NO_UPPER : Math.floor(before / DAY_MS)
    const empty = { from: 0, before: 0 }
    let head = empty
    let tail = empty
    if (dayFrom >= dayBefore) {
      values.day_from = 0
      values.day_before = 0
      head = { from, before }
    } else {
      values.day_from = dayFrom
      values.day_before = dayBefore
      if (from !== NO_LOWER && from < dayFrom * DAY_MS) head = { from, before: dayFrom * DAY_MS }
      if (before !== NO_UPPER && dayBefore * DAY_MS < before) {
        tail = { from: dayBefore * DAY_MS, before }
      }
    }
    values.head_from = head.from
    values.head_before = head.before
    values.tail_from = tail.from
    values.tail_before = tail.before
    return values
  }

  /** What the last list with these filters found, if it is remembered. */
  predicted(filters: Filters): Prediction | undefined {
    return this.#predictions.get(filters.key)
  }

  /** Remembers what a list with these filters found. */
  remember(filters: Filters, prediction: Prediction): void {
    if (this.#predictions.size >= MAX_PREDICTIONS && !this.#predictions.has(filters.key)) {
      this.#predictions.clear()
    }
    this.#predictions.set(filters.key, prediction)
  }
}
