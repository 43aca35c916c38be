import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { openSqliteStorage, type SqliteStorage } from '../../../adapters/sqlite/index.js'
import type { BeneficiaryStatus, SortField } from '../../../core/beneficiary.js'
import type { ListQuery } from '../../../core/ports/beneficiary-store.js'
import { searchTerms } from '../../../core/search-terms.js'
import { DAY_MS } from '../../../core/time.js'
import {
  T0,
  createdEntry,
  createdRecord,
  historyEntry,
  newBeneficiary,
} from '../../contracts/storage-fixtures.js'
import { Random } from '../../support/random.js'
import { SQL_ORDER, withTwoConnections } from '../../support/sqlite-list.js'

const STATUSES: readonly BeneficiaryStatus[] = ['active', 'inactive', 'pending']
const NAMES = ['Rossi', 'Rosa', 'rossi', 'Bianchi', 'Émile', 'Zoë', 'de Luca', 'Rosé Bia', 'Ｚeta']
const SEARCHES = [
  'r',
  'ros',
  'rossi',
  'b',
  'bia',
  'e',
  'zoe',
  'de l',
  'ro bi',
  'x',
  'r ros',
  'rossi ro b',
]

/** The ids of a page of a search, as a plain query without the FTS index gives them. */
function expected(storage: SqliteStorage, query: ListQuery): { ids: number[]; total: number } {
  const terms = query.search ?? []
  const conditions = terms.map(() => `instr(' ' || sort_first || ' ' || sort_last, ' ' || ?) > 0`)
  const values: unknown[] = [...terms]
  if (query.status !== undefined) {
    conditions.push('status = ?')
    values.push(query.status)
  }
  if (query.createdFrom !== undefined) {
    conditions.push('created_at >= ?')
    values.push(query.createdFrom)
  }
  if (query.createdBefore !== undefined) {
    conditions.push('created_at < ?')
    values.push(query.createdBefore)
  }
  const where = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`
  const order = SQL_ORDER[query.sort]
    .split(', ')
    .map((column) => `${column} ${query.descending ? 'DESC' : 'ASC'}`)
    .join(', ')
  const ids = storage.database
    .prepare<unknown[], number>(
      `SELECT id FROM beneficiaries ${where} ORDER BY ${order} LIMIT ? OFFSET ?`,
    )
    .pluck()
    .all(...values, query.limit, query.offset)
  const total = storage.database
    .prepare<unknown[], number>(`SELECT count(*) FROM beneficiaries ${where}`)
    .pluck()
    .get(...values)!
  return { ids, total }
}

/**
 * Random searches (and a fifth of lists without a search), sorted by anything, some filtered by
 * status and dates, checked against a plain query.
 */
async function assertSearches(
  storage: SqliteStorage,
  random: Random,
  count: number,
  searchShare = 0.8,
): Promise<void> {
  const sorts = Object.keys(SQL_ORDER) as SortField[]
  for (let i = 0; i < count; i++) {
    const from = T0 + random.between(-2, 30) * DAY_MS
    const query: ListQuery = {
      ...(random.next() < searchShare && { search: searchTerms(random.pick(SEARCHES)) }),
      sort: random.pick(sorts),
      descending: random.next() < 0.5,
      offset: random.between(0, 300),
      limit: random.between(1, 80),
      ...(random.next() < 0.3 && { status: random.pick(STATUSES) }),
      ...(random.next() < 0.5 && {
        createdFrom: from,
        createdBefore: from + random.between(1, 20) * DAY_MS,
      }),
      // Every record's creation, or wider: a range that filters nothing.
      ...(random.next() < 0.1 && { createdFrom: T0 - DAY_MS, createdBefore: T0 + 60 * DAY_MS }),
    }
    const page = await storage.beneficiaries.list(query)
    const { ids, total } = expected(storage, query)
    assert.deepEqual(
      { ids: page.items.map((item) => item.id), total: page.total },
      { ids, total },
      JSON.stringify(query),
    )
    // Every field of each summary as a plain SQL read gives it.
    const row = storage.database.prepare(
      'SELECT id, first_name, last_name, email, phone, status, created_at, updated_at FROM beneficiaries WHERE id = ?',
    )
    assert.deepEqual(
      page.items,
      page.items.map((item) => ({ ...(row.get(item.id) as object) })),
      JSON.stringify(query),
    )
  }
}

/** Creates a record of random names and status, created at `at` and updated at `updatedAt`. */
async function create(
  on: SqliteStorage,
  random: Random,
  i: number,
  at = T0 + random.between(0, 30 * DAY_MS),
  updatedAt = at,
): Promise<number> {
  const record = newBeneficiary({
    first_name: random.pick(NAMES),
    last_name: random.pick(NAMES),
    email: `k${i}@example.org`,
    status: random.pick(STATUSES),
    created_at: at,
    updated_at: updatedAt,
  })
  return createdRecord(await on.beneficiaries.create(record, createdEntry(record))).id
}

/** Updates or deletes random records on `on`: names, status and update times move. */
async function change(on: SqliteStorage, random: Random, ids: number[], count: number) {
  await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const id = random.pick(ids)
      const current = await on.beneficiaries.get(id)
      if (current === undefined) return
      const when = T0 + 40 * DAY_MS + random.between(0, 10 * DAY_MS) + i
      if (i % 7 === 0) {
        await on.beneficiaries.remove(id, undefined, historyEntry('deleted', when))
        return
      }
      await on.beneficiaries.update(
        current,
        {
          ...current,
          status: random.pick(STATUSES),
          first_name: random.next() < 0.5 ? random.pick(NAMES) : current.first_name,
          last_name: random.next() < 0.5 ? random.pick(NAMES) : current.last_name,
          email: random.next() < 0.5 ? `ü${random.between(0, 999)}@example.org` : current.email,
          phone: random.pick([current.phone, null, `+39 06 ${random.between(1000, 9999)}`]),
          updated_at: when,
          version: current.version + 1,
        },
        historyEntry('updated', when),
      )
    }),
  )
}

describe('SQLite lists and searches against a plain SQL query', () => {
  it('sort and filter as SQL does while this connection and another one create, update and delete', async () => {
    await withTwoConnections(async (storage, other) => {
      const random = new Random(2027)
      const ids: number[] = []
      for (let round = 0; round < 3; round++) {
        for (const id of await Promise.all(
          Array.from({ length: 400 }, (_, i) => create(storage, random, round * 1_000 + i)),
        )) {
          ids.push(id)
        }
        await assertSearches(storage, random, 60)
        await change(storage, random, ids, 60)
        await assertSearches(storage, random, 60)
        // Another connection's writes, seen through the counters' log and the FTS5 index.
        for (const id of await Promise.all(
          Array.from({ length: 40 }, (_, i) => create(other, random, round * 1_000 + 500 + i)),
        )) {
          ids.push(id)
        }
        await change(other, random, ids, 40)
        await new Promise((resolve) => setImmediate(resolve))
        await assertSearches(storage, random, 60)
      }
    })
  })

  it('answers searches of several terms as SQL does, whether pairs of names are many or few', async () => {
    await withTwoConnections(async (storage) => {
      const random = new Random(77)
      // A first name each: as many pairs of names as records, more than any term's matches.
      for (let i = 0; i < 600; i++) {
        const record = newBeneficiary({
          first_name: `${random.pick(['Ro', 'Bi', 'Ze'])}${i.toString(36)}`,
          last_name: random.pick(NAMES),
          email: `m${i}@example.org`,
          status: random.pick(STATUSES),
          created_at: T0 + i * 1_000,
          updated_at: T0 + i * 1_000,
        })
        await storage.beneficiaries.create(record, createdEntry(record))
      }
      for (const search of ['ro bi', 'ro ros', 'z r', 'bi bia ros', 'r1 rossi', 'x ro']) {
        for (const sort of ['id', 'last_name'] as const) {
          const query: ListQuery = {
            search: searchTerms(search),
            sort,
            descending: false,
            offset: random.between(0, 20),
            limit: 30,
          }
          const page = await storage.beneficiaries.list(query)
          const { ids, total } = expected(storage, query)
          assert.deepEqual(
            { ids: page.items.map((item) => item.id), total: page.total },
            { ids, total },
            search,
          )
        }
      }
    })
  })

  it('sorts date ranges between ids far apart or near, and searches within dates, as SQL does', async () => {
    await withTwoConnections(async (storage, other) => {
      const random = new Random(8)
      const ids: number[] = []
      const sequence = storage.database.prepare(
        "UPDATE sqlite_sequence SET seq = seq + ? WHERE name = 'beneficiaries'",
      )
      // Created in id order, an hour apart, 700 ids apart: a day's range spans 17,000 ids, four
      // days or more past 65,536.
      for (let i = 0; i < 600; i++) {
        const at = T0 + i * 3_600_000
        ids.push(await create(storage, random, i, at, at + random.between(0, 5 * DAY_MS)))
        sequence.run(random.between(500, 900))
      }
      // Searches too: created in id order, a date range's matches are one run of them.
      await assertSearches(storage, random, 200, 0.5)
      // Names, statuses and e-mails changed, records deleted, by this connection and another.
      await change(storage, random, ids, 60)
      await change(other, random, ids, 60)
      await new Promise((resolve) => setImmediate(resolve))
      await assertSearches(storage, random, 600, 0.2)
      // One record created before the last one: a date range is no longer one run of ids.
      const early = newBeneficiary({
        last_name: 'Rossi',
        email: 'early@example.org',
        created_at: T0 + DAY_MS,
        updated_at: T0 + DAY_MS,
      })
      await storage.beneficiaries.create(early, createdEntry(early))
      await assertSearches(storage, random, 200, 0.5)
    })
  })

  it('lists as SQL does when ids are far sparser than records', async () => {
    await withTwoConnections(async (storage, other, path) => {
      const random = new Random(5)
      const ids = await Promise.all(
        Array.from({ length: 100 }, (_, i) => create(storage, random, i)),
      )
      await assertSearches(storage, random, 20)
      // An id past four per record and past 2^31.
      other.database
        .prepare("UPDATE sqlite_sequence SET seq = ? WHERE name = 'beneficiaries'")
        .run(3_000_000_000)
      ids.push(await create(other, random, 1_000))
      assert.ok(ids.at(-1)! > 2 ** 31)
      await new Promise((resolve) => setImmediate(resolve))
      await assertSearches(storage, random, 40)
      const reopened = await openSqliteStorage({ path })
      try {
        await assertSearches(reopened, random, 40)
      } finally {
        await reopened.close()
      }
    })
  })
})
