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
 * Page statements are sent unnamed, so PostgreSQL plans each with its values (the offset, the
 * status); the SQL of each shape leaves it one index path anyway (see `Plan`).
 */
export class PostgresBeneficiaryList {
  readonly #pool: PostgresPool
  readonly #schema: string
  readonly #totals: PostgresListTotals
  readonly #seek: PostgresListSeek
  readonly #statements = new Map<string, PostgresQuery>()

  constructor(pool: PostgresPool, schema: string) {
    this.#pool = pool
    this.#schema = schema
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
    const predicted = this.#totals.predicted(filters)
    if (predicted !== undefined) {
      const page = await this.#inOneStatement(query, filters, predicted)
      if (page !== undefined) return page
    }
    return this.#inTransaction(query, filters)
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
      `1${JSON.stringify(shape)}`,
      () =>
        sql`SELECT t.total, t.version, p.* FROM (${totals}) t
        LEFT JOIN LATERAL (${itemsQuery(this.#schema, shape)}) p ON true`,
      false,
    )
    const rows = await statement.arrays(this.#pool, values)
    const first = rows[0]!
    const total = first[0] as number
    this.#totals.remember(filters, { ...predicted, total, version: first[1] as number })
    if (read.reversed && total !== predicted.total) return undefined
    if (total === 0 || query.offset >= total) return { items: [], total }
    const items = first[2] === null ? [] : rows.map(pageItem)
    return { items: read.reversed ? items.reverse() : items, total }
  }

  /** The page the long way, in one snapshot: see the class. */
  async #inTransaction(query: ListQuery, filters: Filters): Promise<Page<BeneficiarySummary>> {
    let client: PostgresPoolClient
    try {
      client = await this.#pool.connect()
    } catch (error) {
      throw translateStorageFailure(error)
    }
    let failure: unknown
    try {
      await run(client, 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY')
      const page = await this.#read(client, query, filters)
      await run(client, 'COMMIT')
      return page
    } catch (error) {
      failure = error
      await client.query('ROLLBACK').catch(() => undefined)
      throw error
    } finally {
      // A connection that failed is dropped rather than handed to the next request.
      client.release(failure instanceof Error && failure.name !== 'TypeError' ? failure : undefined)
    }
  }

  async #read(
    db: Queryable,
    query: ListQuery,
    filters: Filters,
  ): Promise<Page<BeneficiarySummary>> {
    const values = this.#totals.totalValues(filters)
    const totals = this.#statement(`0${filters.q !== undefined}${filters.dates}`, () =>
      this.#totals.totals(filters, true),
    )
    const row = (await totals.arrays(db, values))[0]!
    const prediction: Prediction = {
      total: row[0] as number,
      version: row[1] as number,
      unfiltered: row[2] as number,
      lo: row[3] as number,
      hi: row[4] as number,
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
      false,
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
    }
  }

  #statement(key: string, build: () => Statement, named = true): PostgresQuery {
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
