import { sql } from 'kysely'
import type { BeneficiarySummary } from '../../core/beneficiary.js'
import type { ListQuery, Page } from '../../core/ports/beneficiary-store.js'
import { summaryReader } from './postgres-beneficiary-columns.js'
import type { PostgresPool, PostgresPoolClient } from './postgres-driver.js'
import { itemsQuery } from './postgres-list-items.js'
import {
  choosePlan,
  fromNearerEnd,
  type PageRead,
  type Seek,
  type Shape,
} from './postgres-list-plan.js'
import { searchQuery } from './postgres-list-search.js'
import { DEEP_OFFSET, PostgresListSeek } from './postgres-list-seek.js'
import {
  filtersOf,
  PostgresListTotals,
  type Filters,
  type Prediction,
} from './postgres-list-totals.js'
import { PostgresQuery, type Queryable, type Statement } from './postgres-query.js'
import { translateStorageFailure } from './postgres-storage-failure.js'

/** Statements kept at most (shapes × page sizes); past it they are built anew. */
const MAX_STATEMENTS = 512

const pageItem = summaryReader(2)
const plainItem = summaryReader(0)

/**
 * The listing of `PostgresBeneficiaryStore`: filters, sorts (D15), search (D16) and exact totals.
 *
 * A list is usually one statement: the total (from the counters, or a search's count) and the
 * page, in one snapshot, planned from what the last list with the same filters found (a
 * {@link Prediction}). A page read from the other end (the second half of the matches) depends
 * on the total; when the total the statement returns is not the predicted one, the list is
 * read again the long way. The long way, for a first list of some filters and for deep pages:
 * a read-only REPEATABLE READ transaction that counts first, then finds where a deep page
 * starts from the counters (`PostgresListSeek`), then reads the page.
 *
 * A page from the first match is a named statement, prepared once per connection; any other
 * page is sent unnamed, so that PostgreSQL plans it with its offset (see `Shape.fromStart`).
 * The SQL of each shape leaves the planner one index path anyway (see `Plan`).
 *
 * Every list runs in a read-only transaction whose statements PostgreSQL cancels past the
 * list's time budget (`SET LOCAL statement_timeout`), whatever the connection's own timeout:
 * a list that would run away fails with `StorageUnavailableError` (`busy`) and frees its
 * connection, and the requests waiting for one are served. Per statement rather than per
 * connection, so that writes on the same pool keep the storage's longer statement timeout;
 * the price is two short round trips (the `BEGIN` with the `SET LOCAL`, and the `COMMIT`) on a
 * list that is otherwise one statement.
 */
export class PostgresBeneficiaryList {
  readonly #pool: PostgresPool
  readonly #schema: string
  readonly #budget: string
  readonly #totals: PostgresListTotals
  readonly #seek: PostgresListSeek
  readonly #statements = new Map<string, PostgresQuery>()
  readonly #counting = new Map<string, Promise<void>>()

  /** @param timeoutMs The budget of each list statement: a whole number of milliseconds. */
  constructor(pool: PostgresPool, schema: string, timeoutMs: number) {
    this.#pool = pool
    this.#schema = schema
    this.#budget = `SET LOCAL statement_timeout = ${timeoutMs}`
    this.#totals = new PostgresListTotals(schema)
    this.#seek = new PostgresListSeek(schema)
  }

  /** One page of summaries matching `query` and the exact number of matches. */
  async list(query: ListQuery): Promise<Page<BeneficiarySummary>> {
    // Written into the SQL (see `Shape.limit`): only a whole number may get there.
    if (!Number.isSafeInteger(query.limit) || query.limit < 0) {
      throw new TypeError('limit must be a whole number of at least 0')
    }
    let q: string | undefined
    if (query.search !== undefined) {
      q = searchQuery(query.search)
      if (q === undefined) return { items: [], total: 0 }
    }
    const filters = filtersOf(query, q)
    // A list whose total must be counted (the first with these filters, or a search after a
    // write) goes first, and the lists with the same filters that arrive meanwhile wait for it:
    // fifty concurrent searches counting the same 65,000 matches took seconds.
    for (let waited = 0; ; waited++) {
      const predicted = this.#totals.predicted(filters)
      const current =
        predicted !== undefined &&
        (filters.q === undefined || predicted.generation === this.#totals.generation)
      if (current) return this.#read(query, filters, predicted)
      const counting = this.#counting.get(filters.key)
      if (counting === undefined || waited >= 2) {
        const work = this.#read(query, filters, predicted)
        if (counting === undefined) {
          const settled = work.then(
            () => undefined,
            () => undefined,
          )
          this.#counting.set(filters.key, settled)
          void settled.finally(() => {
            if (this.#counting.get(filters.key) === settled) this.#counting.delete(filters.key)
          })
        }
        return work
      }
      await counting
    }
  }

  /** Notes a write that may change a search's total: see {@link PostgresListTotals.generation}. */
  noteWrite(): void {
    this.#totals.noteWrite()
  }

  async #read(
    query: ListQuery,
    filters: Filters,
    predicted: Prediction | undefined,
  ): Promise<Page<BeneficiarySummary>> {
    if (predicted !== undefined) {
      const page = await this.#inOneStatement(query, filters, predicted)
      if (page !== undefined) return page
    }
    // The long way, in one snapshot: see the class.
    return this.#inTransaction('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', (db) =>
      this.#readLongWay(db, query, filters),
    )
  }

  /**
   * The page in one statement, planned from `predicted`; `undefined` when the page is deep or
   * was read from the other end of a total that turned out to differ.
   */
  async #inOneStatement(
    query: ListQuery,
    filters: Filters,
    predicted: Prediction,
  ): Promise<Page<BeneficiarySummary> | undefined> {
    const generation = this.#totals.generation
    const values = this.#totals.totalValues(filters)
    const past = predicted.total === 0 || query.offset >= predicted.total
    const read: PageRead = past
      ? { page: query, reversed: false }
      : fromNearerEnd(query, predicted.total)
    if (read.page.offset >= DEEP_OFFSET) return undefined
    const shape = this.#shape(read.page, filters, predicted, 'none')
    values.offset = read.page.offset
    const totals = this.#totals.totals(filters, false)
    const statement = this.#statement(
      `1${filters.aligned}${JSON.stringify(shape)}`,
      () =>
        sql`SELECT t.total, t.version, p.* FROM (${totals}) t
        LEFT JOIN LATERAL (${itemsQuery(this.#schema, shape)}) p ON true`,
      shape.fromStart,
    )
    const rows = await this.#inTransaction('BEGIN READ ONLY', (db) => statement.arrays(db, values))
    const first = rows[0]!
    const total = first[0] as number
    this.#totals.remember(filters, {
      ...predicted,
      total,
      version: first[1] as number,
      generation,
    })
    if (read.reversed && total !== predicted.total) return undefined
    if (total === 0 || query.offset >= total) return { items: [], total }
    const items = first[2] === null ? [] : rows.map(pageItem)
    return { items: read.reversed ? items.reverse() : items, total }
  }

  /** `work` in a read-only transaction begun with `begin`, under the list's time budget. */
  async #inTransaction<T>(begin: string, work: (db: Queryable) => Promise<T>): Promise<T> {
    let client: PostgresPoolClient
    try {
      client = await this.#pool.connect()
    } catch (error) {
      throw translateStorageFailure(error)
    }
    let broken: Error | undefined
    try {
      await run(client, `${begin}; ${this.#budget}`)
      const result = await work(client)
      await run(client, 'COMMIT')
      return result
    } catch (error) {
      // A list cancelled past its budget leaves a sound connection, kept for the next request
      // (a new one costs PostgreSQL a process); one that cannot even roll back is dropped.
      await client.query('ROLLBACK').catch((rollback: Error) => {
        broken = rollback
      })
      throw error
    } finally {
      client.release(broken)
    }
  }

  async #readLongWay(
    db: Queryable,
    query: ListQuery,
    filters: Filters,
  ): Promise<Page<BeneficiarySummary>> {
    const generation = this.#totals.generation
    const values = this.#totals.totalValues(filters)
    const totals = this.#statement(
      `0${filters.q !== undefined}${filters.status !== undefined}${filters.dates}${filters.aligned}`,
      () => this.#totals.totals(filters, true),
      true,
    )
    const row = (await totals.arrays(db, values))[0]!
    const prediction: Prediction = {
      total: row[0] as number,
      version: row[1] as number,
      unfiltered: row[2] as number,
      lo: row[3] as number,
      hi: row[4] as number,
      generation,
    }
    this.#totals.remember(filters, prediction)
    const total = prediction.total
    if (total === 0 || query.offset >= total) return { items: [], total }

    let { page, reversed } = fromNearerEnd(query, total)
    values.offset = page.offset
    let seek: Seek = 'none'
    if (page.offset >= DEEP_OFFSET && filters.q === undefined) {
      const plan = this.#shape(page, filters, prediction, 'none').plan
      if (plan === 'order') {
        ;({ page, reversed, seek } = await this.#seek.find(
          db,
          { page, reversed },
          filters,
          total,
          values,
        ))
      }
    }
    const shape = this.#shape(page, filters, prediction, seek)
    const items = this.#statement(
      `2${JSON.stringify(shape)}`,
      () => itemsQuery(this.#schema, shape),
      shape.fromStart,
    )
    const rows = (await items.arrays(db, values)).map(plainItem)
    return { items: reversed ? rows.reverse() : rows, total }
  }

  /** The shape of a page: its plan chosen from how selective the filters are. */
  #shape(page: ListQuery, filters: Filters, prediction: Prediction, seek: Seek): Shape {
    const filtered = page.status !== undefined || filters.dates || filters.q !== undefined
    // How many rows an `order` plan visits per match: the filters' selectivity, or for ids
    // between the bounds of a date range, the density of matches between those bounds.
    let span = filtered ? prediction.unfiltered : prediction.total
    if (page.sort === 'id' && filters.dates && filters.q === undefined) {
      span = Math.max(0, prediction.hi - prediction.lo + 1)
    }
    // A search's words are the names' words: its matches cluster in the name orders, and a walk
    // from the top may pass most of the table before the first (`ros` by last_name at a million
    // rows: 1.2 s walking, 0.14 s sorting the 65,000 matches).
    const byName = page.sort === 'last_name' || page.sort === 'first_name'
    return {
      limit: page.limit,
      sort: page.sort,
      descending: page.descending,
      status: page.status !== undefined,
      dates: filters.dates,
      search: filters.q !== undefined,
      plan:
        filters.q !== undefined && byName
          ? 'filter'
          : choosePlan(page, filtered, span, prediction.total),
      seek,
      fromStart: page.offset === 0 && seek === 'none',
    }
  }

  #statement(key: string, build: () => Statement, named: boolean): PostgresQuery {
    let statement = this.#statements.get(key)
    if (statement === undefined) {
      statement = new PostgresQuery(build(), { named })
      // A page size is part of the key: the statements kept stay few whatever the requests.
      if (this.#statements.size >= MAX_STATEMENTS) this.#statements.clear()
      this.#statements.set(key, statement)
    }
    return statement
  }
}

async function run(client: PostgresPoolClient, text: string): Promise<void> {
  try {
    await client.query(text)
  } catch (error) {
    throw translateStorageFailure(error)
  }
}
