import type BetterSqlite3 from 'better-sqlite3'
import { sql, type Compilable, type RawBuilder, type SelectQueryBuilder } from 'kysely'
import type { BeneficiarySummary, SortField } from '../../../core/beneficiary.js'
import { SUMMARY_COLUMNS, summaryOf } from '../writes/sqlite-beneficiary-columns.js'
import { type Shape, unindexed } from './sqlite-list-plan.js'
import { queryBuilder, slot, SqliteQuery } from '../sqlite-query.js'
import type { SqliteSchema } from '../sqlite-schema.js'

/** Prepared page queries kept at most (shapes × page sizes); past it they are prepared anew. */
const MAX_ITEMS_QUERIES = 1024

type Items = SqliteQuery<BeneficiarySummary>

/** {@link SUMMARY_COLUMNS} as the page queries select them. */
const SELECTED = SUMMARY_COLUMNS.map((column) => `beneficiaries.${column}` as const)

const ORDER_COLUMNS: Readonly<Record<SortField, readonly (keyof SqliteSchema['beneficiaries'])[]>> =
  {
    id: ['id'],
    created_at: ['created_at', 'id'],
    updated_at: ['updated_at', 'id'],
    last_name: ['sort_last', 'last_name', 'id'],
    first_name: ['sort_first', 'first_name', 'id'],
  }

/**
 * The page queries of the listing: the SQL of each {@link Shape}, compiled by Kysely and
 * prepared on first use, and the summaries it reads.
 */
export class SqliteListItems {
  readonly #db: BetterSqlite3.Database
  readonly #items = new Map<string, Items>()

  constructor(db: BetterSqlite3.Database) {
    this.#db = db
  }

  /** The summaries of the page `shape` describes, for these slot values, in the query's order. */
  page(shape: Shape, values: Readonly<Record<string, unknown>>): BeneficiarySummary[] {
    return this.#query(shape).allValues(values).map(summaryOf)
  }

  #query(shape: Shape): Items {
    const key = JSON.stringify(shape)
    let query = this.#items.get(key)
    if (query === undefined) {
      query = new SqliteQuery<BeneficiarySummary>(this.#db, buildItemsQuery(shape))
      // A page size is part of the key: the statements kept stay few whatever the requests.
      if (this.#items.size >= MAX_ITEMS_QUERIES) this.#items.clear()
      this.#items.set(key, query)
    }
    return query
  }
}

/** The columns a page query selects: a summary's, or the id alone. */
type Selected = typeof SELECTED | typeof ID_ONLY
const ID_ONLY = ['beneficiaries.id'] as const

type ItemsBuilder = SelectQueryBuilder<SqliteSchema, 'beneficiaries', BeneficiarySummary>

function buildItemsQuery(shape: Shape): Compilable {
  if (shape.seek === 'name') return nameSeekQuery(shape)
  const direction = shape.descending ? 'desc' : 'asc'
  if (shape.search && shape.sort === 'id' && !shape.status && !shape.dates) {
    // The FTS index yields its matches in rowid order: page there, then read only those rows.
    let page = queryBuilder
      .selectFrom('beneficiary_search')
      .select('rowid')
      .where('beneficiary_search', 'match', slot('match'))
      .orderBy('rowid', direction)
      .limit(sql.lit(shape.limit))
    // From a match whose place among the matches is known (`SqliteListSearch`), this one included.
    if (shape.seek === 'id')
      page = page.where('rowid', shape.descending ? '<=' : '>=', slot('seek'))
    return queryBuilder
      .selectFrom('beneficiaries')
      .select(SELECTED)
      .where('id', 'in', shape.fromStart ? page : page.offset(slot('offset')))
      .orderBy('id', direction)
  }

  const filterPlan = shape.plan === 'filter' && !shape.search
  if (!filterPlan && !shape.search) return pageQuery(shape, SELECTED)
  // A filter plan or a search sorts every row it collected: only their ids and sort keys go
  // through the sort, and the page's rows are read afterwards (a sort of whole summaries held a
  // fifth more time, and 35 MB for the 178,000 matches of `r`).
  let query = queryBuilder
    .selectFrom('beneficiaries')
    .select(SELECTED)
    .where('beneficiaries.id', 'in', pageQuery(shape, ID_ONLY) as never) as ItemsBuilder
  for (const column of ORDER_COLUMNS[shape.sort]) {
    query = query.orderBy(sql.ref(`beneficiaries.${column}`), direction)
  }
  return query
}

/** The page's `selected` columns, with every filter, seek, sort and the page's bounds. */
function pageQuery(shape: Shape, selected: Selected): ItemsBuilder {
  const direction = shape.descending ? 'desc' : 'asc'
  let query = queryBuilder.selectFrom('beneficiaries').select(selected) as ItemsBuilder
  if (shape.search) {
    query = query.where('beneficiaries.id', 'in', (eb) =>
      eb
        .selectFrom('beneficiary_search')
        .select('rowid')
        .where('beneficiary_search', 'match', slot('match')),
    )
  }

  const indexed = (column: string, usable: boolean): RawBuilder<number> =>
    usable ? sql<number>`${sql.ref(`beneficiaries.${column}`)}` : unindexed<number>(column)
  const filterPlan = shape.plan === 'filter' && !shape.search
  if (shape.status) {
    const usable = filterPlan || (shape.sort === 'id' && !shape.dates && !shape.search)
    query = query.where(indexed('status', usable), '=', slot('status'))
  }
  if (shape.dates) {
    const usable = !shape.search && (filterPlan || shape.sort === 'created_at')
    query = query
      .where(indexed('created_at', usable), '>=', slot('from'))
      .where(indexed('created_at', usable), '<', slot('before'))
  }
  if (shape.sort === 'id' && shape.dates && shape.plan === 'order' && !shape.search) {
    query = query
      .where('beneficiaries.id', '>=', slot('lo'))
      .where('beneficiaries.id', '<=', slot('hi'))
  }
  if (shape.seek === 'id') {
    query = query.where('beneficiaries.id', shape.descending ? '<' : '>=', slot('seek'))
  }
  if (shape.seek === 'key') {
    query = query.where(
      sql.ref(`beneficiaries.${ORDER_COLUMNS[shape.sort][0]}`),
      '>=',
      slot('seek'),
    )
  }

  // A filter plan or a search sorts the rows it collected; a `+` keeps SQLite from walking the
  // sort's index instead.
  const [first, ...rest] = ORDER_COLUMNS[shape.sort]
  const sortsCollected = filterPlan || shape.search
  if (first !== undefined) {
    query = query.orderBy(
      sortsCollected ? unindexed(first) : sql.ref(`beneficiaries.${first}`),
      direction,
    )
  }
  for (const column of rest) query = query.orderBy(sql.ref(`beneficiaries.${column}`), direction)
  return query.limit(sql.lit(shape.limit)).offset(slot('offset'))
}

/**
 * An ascending page of a name sort that starts in the bucket `seek` (sort key), `seekName` (raw
 * name), `seekId` (first id of its block) at `offset`: the rows of that sort key and raw name
 * from that id on, then those of the following names. Each part walks the name index from its
 * start; SQLite compares row values only on the index's first two columns, so one query
 * `(sort key, raw name, id) >= (...)` would pass every id of the name before the block.
 */
function nameSeekQuery(shape: Shape, selected: Selected = SELECTED): Compilable {
  const [sortKey = 'sort_last', rawName = 'last_name'] = ORDER_COLUMNS[shape.sort]
  const filtered = () => {
    const query = queryBuilder.selectFrom('beneficiaries').select(selected) as ItemsBuilder
    return shape.status ? query.where(unindexed('status'), '=', slot('status')) : query
  }
  const limit = sql.lit(shape.limit)
  const within = filtered()
    .where(sql.ref(`beneficiaries.${sortKey}`), '=', slot('seek'))
    .where(sql.ref(`beneficiaries.${rawName}`), '=', slot('seekName'))
    .where('beneficiaries.id', '>=', slot('seekId'))
    .orderBy('beneficiaries.id')
    .limit(limit)
    .offset(slot('offset'))
  const after = filtered()
    .where(
      sql<boolean>`(${sql.ref(`beneficiaries.${sortKey}`)}, ${sql.ref(`beneficiaries.${rawName}`)}) > (${slot('seek')}, ${slot('seekName')})`,
    )
    .orderBy(sql.ref(`beneficiaries.${sortKey}`))
    .orderBy(sql.ref(`beneficiaries.${rawName}`))
    .orderBy('beneficiaries.id')
    .limit(limit)
  return queryBuilder
    .selectFrom(within.as('within'))
    .selectAll()
    .unionAll(queryBuilder.selectFrom(after.as('after')).selectAll())
    .limit(limit)
}
