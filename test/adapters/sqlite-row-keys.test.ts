import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { openSqliteStorage, type SqliteStorage } from '../../adapters/sqlite/index.js'
import { narrowestTerms } from '../../adapters/sqlite/sqlite-list-search.js'
import { NameClasses } from '../../adapters/sqlite/sqlite-name-classes.js'
import { selectByGroup, selectPage } from '../../adapters/sqlite/sqlite-page-selection.js'
import { WordIndex } from '../../adapters/sqlite/sqlite-word-index.js'
import type { BeneficiaryStatus, SortField } from '../../core/beneficiary.js'
import type { ListQuery } from '../../core/ports/beneficiary-store.js'
import { searchTerms } from '../../core/search-terms.js'
import { DAY_MS } from '../../core/time.js'
import {
  T0,
  createdEntry,
  createdRecord,
  historyEntry,
  newBeneficiary,
} from '../contracts/storage-fixtures.js'
import { Random } from '../support/random.js'
import { SQL_ORDER, withTwoConnections } from '../support/sqlite-list.js'

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

describe('selectPage', () => {
  it('gives the places of a page as a full sort by key, then id, does, keys tied or not', () => {
    const random = new Random(11)
    for (let round = 0; round < 300; round++) {
      // Past 2,048 ids the page is first narrowed down by a histogram of the keys.
      const ids = someIds(random, round)
      const draw = keyDrawer(random, round % 4)
      const keyOf = new Map(Array.from(ids, (id) => [id, draw()]))
      const byId = Float64Array.from({ length: 50_001 }, (_, id) => keyOf.get(id) ?? NaN)
      const sorted = Array.from(ids).sort((a, b) => keyOf.get(a)! - keyOf.get(b)! || a - b)
      const start = random.between(0, ids.length + 2)
      const end = start + random.between(0, 120)
      const before = Int32Array.from(ids)
      assert.deepEqual(selectPage(ids, byId, start, end), sorted.slice(start, end))
      assert.deepEqual(ids, before, 'the ids are read, not changed')
    }
  })
})

describe('selectByGroup', () => {
  it('gives the places of a page as a full sort by group rank, then id or place within, does', () => {
    const random = new Random(12)
    for (let round = 0; round < 300; round++) {
      const ids = someIds(random, round)
      // Names: few groups in a shuffled order, ids within. Update order: a place per id, in
      // blocks of 2^shift places, ordered by place within.
      const byPlace = round % 2 === 1
      const shift = byPlace ? random.between(0, 8) : 0
      const via = new Int32Array(50_001)
      let inOrder: number[] | undefined
      let groups: number
      if (byPlace) {
        const places = Array.from({ length: 50_001 }, (_, id) => id).sort(() => random.next() - 0.5)
        places.forEach((place, id) => (via[id] = place))
        groups = (50_000 >> shift) + 1
      } else {
        groups = random.between(1, 60)
        for (let id = 0; id <= 50_000; id++) via[id] = random.between(0, groups - 1)
        inOrder = Array.from({ length: groups }, (_, group) => group).sort(
          () => random.next() - 0.5,
        )
      }
      const rank = new Map(inOrder?.map((group, at) => [group, at]))
      const keyOf = (id: number) => (byPlace ? via[id]! : rank.get(via[id]!)! * 100_000 + id)
      const sorted = Array.from(ids).sort((a, b) => keyOf(a) - keyOf(b))
      const start = random.between(0, ids.length + 2)
      const end = start + random.between(0, 120)
      const sort = { via, shift, groups, inOrder, within: byPlace ? via : undefined }
      assert.deepEqual(selectByGroup(ids, sort, start, end), sorted.slice(start, end))
    }
  })
})

/** Distinct ids below 50,001, ascending: thousands every third round, a few hundred else. */
function someIds(random: Random, round: number): Int32Array {
  const length = round % 3 === 0 ? random.between(2_000, 9_000) : random.between(0, 400)
  return Int32Array.from(new Set(Array.from({ length }, () => random.between(1, 50_000)))).sort()
}

/**
 * Sort keys of four kinds: few distinct ones (a name's rank), times in milliseconds, times
 * crowded at one end with a few far away (most records updated lately), or all equal.
 */
function keyDrawer(random: Random, kind: number): () => number {
  const distinct = random.between(1, 50)
  switch (kind) {
    case 0:
      return () => random.between(0, distinct)
    case 1:
      return () => 1_700_000_000_000 + random.between(0, 2 ** 30)
    case 2:
      return () => (random.next() < 0.95 ? 1_800_000_000_000 + random.between(0, 99) : 0)
    default:
      return () => 7
  }
}

describe('WordIndex', () => {
  it('finds the records with a word starting with every term, ascending, while records come, change and go', () => {
    const random = new Random(12)
    const alphabet = ['a', 'b', 'r', 'o', 's', 'é', '𝒜', 'ｚ']
    const vocabulary = Array.from({ length: 60 }, () =>
      Array.from({ length: random.between(1, 5) }, () => random.pick(alphabet)).join(''),
    )
    const index = new WordIndex()
    const held = new Map<number, string[]>()
    const check = () => {
      const terms = Array.from({ length: random.between(1, 3) }, () => {
        const word = random.pick(vocabulary)
        return [...word].slice(0, random.between(1, 3)).join('')
      })
      const expected = [...held]
        .filter(([, words]) => terms.every((term) => words.some((word) => word.startsWith(term))))
        .map(([id]) => id)
        .sort((a, b) => a - b)
      assert.deepEqual(Array.from(index.search(terms)), expected, terms.join(' '))
    }
    for (let step = 0; step < 3_000; step++) {
      const id = random.between(1, 400)
      const words = Array.from({ length: random.between(1, 3) }, () => random.pick(vocabulary))
      const old = held.get(id)
      if (old !== undefined) index.remove(id, old)
      if (random.next() < 0.2) {
        held.delete(id)
      } else {
        index.add(id, words)
        held.set(id, words)
      }
      if (step % 5 === 0) check()
    }
  })
})

describe('narrowestTerms', () => {
  it('drops the terms that begin another, and repeats, keeping the order', () => {
    assert.deepEqual(narrowestTerms(['m', 'ma']), ['ma'])
    assert.deepEqual(narrowestTerms(['ros', 'mar', 'r', 'ros', 'm']), ['ros', 'mar'])
    assert.deepEqual(narrowestTerms(['de', 'luca']), ['de', 'luca'])
    assert.deepEqual(narrowestTerms(['a']), ['a'])
  })
})

describe('NameClasses', () => {
  it('unites and counts by name the records of the classes whose names hold every term, with the status asked, as a test of each record does', () => {
    const random = new Random(31)
    const pairs = new NameClasses()
    const held = new Map<number, [first: number, last: number, code: number]>()
    const firstTerms = new Int32Array(12)
    const lastTerms = new Int32Array(12)
    const into = (length: number) => new Int32Array(length)
    const ascending = (ids: Iterable<number>) => [...ids].sort((a, b) => a - b)
    for (let step = 0; step < 4_000; step++) {
      // Ids up to 70,000: the marks span several words of their summary.
      const id = random.between(1, 70_000)
      const old = held.get(id)
      if (old !== undefined) pairs.remove(...old, id)
      if (random.next() < 0.2) {
        held.delete(id)
      } else {
        const record: [number, number, number] = [
          random.between(0, 11),
          random.between(0, 11),
          random.between(1, 3),
        ]
        pairs.add(...record, id)
        held.set(id, record)
      }
      if (step % 50 !== 0) continue
      const all = 2 ** random.between(1, 3) - 1
      for (let entry = 0; entry < 12; entry++) {
        firstTerms[entry] = random.between(0, all)
        lastTerms[entry] = random.between(0, all)
      }
      const test = { firstTerms, lastTerms, all, code: random.between(0, 3) }
      const taken = [...held].filter(
        ([, [first, last, code]]) =>
          (test.code === 0 || code === test.code) &&
          (firstTerms[first]! | lastTerms[last]!) === all,
      )
      assert.deepEqual(Array.from(pairs.union(test, into)), ascending(taken.map(([id]) => id)))
      const side = random.between(0, 1) as 0 | 1
      const counts = new Int32Array(12)
      pairs.countByName(test, side, counts)
      for (let entry = 0; entry < 12; entry++) {
        const ofName = taken.filter(([, record]) => record[side] === entry).map(([id]) => id)
        assert.equal(counts[entry], ofName.length)
        assert.deepEqual(Array.from(pairs.unionOfName(test, side, entry, into)), ascending(ofName))
      }
    }
    // Called again, the marks left by the last call are none.
    firstTerms.fill(1)
    lastTerms.fill(0)
    assert.equal(pairs.union({ firstTerms, lastTerms, all: 1, code: 0 }, into).length, held.size)
  })
})

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
 * Random searches (and a fifth of lists without a search, whose date ranges sorted by update are
 * read from the copy too), sorted by anything, some filtered by status and dates, checked.
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
    // Every field of each summary as SQL reads it: the copy gives them from memory.
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

describe('SQLite searches sorted on the copy of the records keys', () => {
  it('sort and filter as SQL does while this connection and another one create, update and delete', async () => {
    await withTwoConnections(async (storage, other) => {
      const random = new Random(2027)
      const ids: number[] = []
      // As `serve` does before it listens: the copies are loaded, then kept up.
      storage.beneficiaries.warmUp()
      for (let round = 0; round < 3; round++) {
        for (const id of await Promise.all(
          Array.from({ length: 400 }, (_, i) => create(storage, random, round * 1_000 + i)),
        )) {
          ids.push(id)
        }
        await assertSearches(storage, random, 60)
        await change(storage, random, ids, 60)
        await assertSearches(storage, random, 60)
        // Another connection's writes, followed through the write log.
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

  it('answers searches of several terms by testing each match where pairs of names are many, as where they are few', async () => {
    await withTwoConnections(async (storage) => {
      const random = new Random(77)
      storage.beneficiaries.warmUp()
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

  it('loads the copy anew when the write log no longer holds what it missed, or says too much was written to log', async () => {
    await withTwoConnections(async (storage, other) => {
      const random = new Random(9)
      const ids = await Promise.all(
        Array.from({ length: 200 }, (_, i) => create(storage, random, i)),
      )
      await assertSearches(storage, random, 20)
      // Another connection's writes, whose log rows are pruned before this one reads them (as
      // when it falls more than LOG_KEPT generations behind), or all gone.
      await change(other, random, ids, 40)
      other.database.exec(`DELETE FROM beneficiary_write_log
        WHERE generation < (SELECT max(generation) FROM beneficiary_write_log)`)
      await Promise.all(Array.from({ length: 5 }, (_, i) => create(other, random, 400 + i)))
      await new Promise((resolve) => setImmediate(resolve))
      await assertSearches(storage, random, 40)
      await change(other, random, ids, 40)
      other.database.exec('DELETE FROM beneficiary_write_log')
      await Promise.all(Array.from({ length: 5 }, (_, i) => create(other, random, 300 + i)))
      await new Promise((resolve) => setImmediate(resolve))
      await assertSearches(storage, random, 40)
      // A write too large to log (a bulk seed) logs `null`.
      await change(other, random, ids, 40)
      other.database.exec("INSERT INTO beneficiary_write_log (ids) VALUES ('null')")
      await new Promise((resolve) => setImmediate(resolve))
      await assertSearches(storage, random, 40)
    })
  })

  it('sorts a date range between ids far apart in SQL, one between ids near enough on the copy, and filters searches by dates in id order, alike', async () => {
    await withTwoConnections(async (storage, other) => {
      const random = new Random(8)
      const ids: number[] = []
      const sequence = storage.database.prepare(
        "UPDATE sqlite_sequence SET seq = seq + ? WHERE name = 'beneficiaries'",
      )
      // Created in id order, an hour apart, 700 ids apart: a day's range spans 17,000 ids, which
      // the copy sorts; four days or more span past 65,536: sorted by name from each name's ids
      // (the names are few), by update on the copy, by creation in SQL.
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

  it('sorts in SQL instead when ids are far sparser than records', async () => {
    await withTwoConnections(async (storage, other, path) => {
      const random = new Random(5)
      const ids = await Promise.all(
        Array.from({ length: 100 }, (_, i) => create(storage, random, i)),
      )
      await assertSearches(storage, random, 20)
      // An id past four per record and past a million: no array holds it.
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
