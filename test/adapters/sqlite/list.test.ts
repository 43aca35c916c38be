import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { MemoryStorage } from '../../../adapters/memory/index.js'
import { narrowestTerms } from '../../../adapters/sqlite/listing/sqlite-list-search.js'
import {
  openSqliteStorage,
  seedBeneficiaries,
  type SqliteStorage,
} from '../../../adapters/sqlite/index.js'
import type { BeneficiaryRecord, BeneficiaryStatus, SortField } from '../../../core/beneficiary.js'
import type { ListQuery } from '../../../core/ports/beneficiary-store.js'
import { searchTerms } from '../../../core/search-terms.js'
import { parseCreateInput } from '../../../core/validation/index.js'
import { fakeBeneficiaries } from '../../../server/cli/fake-beneficiaries.js'
import {
  T0,
  createdEntry,
  createdRecord,
  historyEntry,
  listQuery,
  newBeneficiary,
} from '../../contracts/storage-fixtures.js'

// The SQLite listing takes other paths than OFFSET beyond 2,000 rows (blocks of ids, days of
// creation), picks plans from its counters and reads the FTS5 index: these tests compare every
// answer with the memory adapter's, the reference, on the same data.

const DAY = 86_400_000
const SORTS: readonly SortField[] = ['id', 'created_at', 'updated_at', 'last_name', 'first_name']
const STATUSES: readonly BeneficiaryStatus[] = ['active', 'inactive', 'pending']
const NAMES = [
  'Émile',
  'emile',
  'EMILE',
  'Zoë',
  'zoe',
  "D'Angelo",
  'de luca',
  'De Luca',
  'DeLuca',
  'Ångström',
  'Øre',
  'Straße',
  'İlkay',
  'ǅemal',
  '𝒜lice',
  '\uff21lice',
  'Smile 🙂',
  'Nguyễn',
  'nguyen',
  'Nguyen Van',
  'a',
  'A',
  'O\u0308zil',
  'Özil',
  'Rossi',
  'Rossetti',
  'Rosa',
  'Marco',
  'Maria',
  'Mario',
  'Ma',
  '---',
]

/** A small seedable generator, so that a failure can be replayed. */
function generator(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = Math.imul(state ^ (state >>> 15), state | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!
}

/** Mostly active, so that one status alone has pages deep enough for the counters. */
function skewedStatus(random: () => number): BeneficiaryStatus {
  const roll = random()
  return roll < 0.7 ? 'active' : roll < 0.85 ? 'inactive' : 'pending'
}

/** A random query, biased towards the edges: deep offsets, empty pages, ties. */
function randomQuery(random: () => number, total: number, start: number, days: number): ListQuery {
  const query: { -readonly [K in keyof ListQuery]: ListQuery[K] } = {
    offset: 0,
    limit: pick(random, [1, 7, 25, 100]),
    sort: pick(random, SORTS),
    descending: random() < 0.5,
  }
  if (random() < 0.4) query.status = pick(random, STATUSES)
  const dates = random()
  const day = (n: number): number => start - (start % DAY) + n * DAY
  if (dates < 0.25) {
    const from = Math.floor(random() * days)
    query.createdFrom = day(from)
    query.createdBefore = day(from + 1 + Math.floor(random() * days))
  } else if (dates < 0.35) {
    query.createdFrom = day(Math.floor(random() * days))
  } else if (dates < 0.45) {
    query.createdBefore = day(Math.floor(random() * days))
  } else if (dates < 0.55) {
    query.createdFrom = start + Math.floor(random() * days * DAY)
    query.createdBefore = query.createdFrom + Math.floor(random() * 5 * DAY)
  }
  const search = random()
  if (search < 0.15) {
    const words = searchTerms(pick(random, NAMES))
    const word = words.length > 0 ? pick(random, words) : 'x'
    query.search = [word.slice(0, 1 + Math.floor(random() * word.length))]
  } else if (search < 0.2) {
    query.search = [...searchTerms(pick(random, NAMES)), ...searchTerms(pick(random, NAMES))]
  } else if (search < 0.22) {
    query.search = []
  }
  const offsets = [
    0,
    Math.floor(random() * total),
    2_000 + Math.floor(random() * Math.max(1, total - 2_000)),
    Math.max(0, total - query.limit),
    Math.floor(total / 3),
    total + 5,
  ]
  query.offset = pick(random, offsets)
  return query
}

async function assertSameAnswers(
  sqlite: SqliteStorage,
  memory: MemoryStorage,
  queries: readonly ListQuery[],
): Promise<void> {
  for (const query of queries) {
    const expected = await memory.beneficiaries.list(query)
    const actual = await sqlite.beneficiaries.list(query)
    assert.deepEqual(actual, expected, `list(${JSON.stringify(query)})`)
  }
}

describe('SQLite listing agrees with the memory adapter (D15, D16, D17, D18)', () => {
  const random = generator(20240315)
  const days = 40
  let sqlite: SqliteStorage
  let memory: MemoryStorage
  let total = 0

  before(async () => {
    sqlite = await openSqliteStorage({ path: ':memory:' })
    memory = new MemoryStorage()
    const records: BeneficiaryRecord[] = []
    for (let i = 0; i < 9_000; i++) {
      // On the hour: many records share an instant (the tie-breaks), some of them midnight.
      const createdAt = T0 - (T0 % DAY) + Math.floor(random() * days * 24) * 3_600_000
      const record = newBeneficiary({
        first_name: pick(random, NAMES),
        last_name: pick(random, NAMES),
        email: `person${i}@example.org`,
        status: skewedStatus(random),
        created_at: createdAt,
        updated_at: createdAt + Math.floor(random() * 3) * 60_000,
      })
      const stored = createdRecord(await sqlite.beneficiaries.create(record, createdEntry(record)))
      assert.equal(
        createdRecord(await memory.beneficiaries.create(record, createdEntry(record))).id,
        stored.id,
      )
      records.push(stored)
    }
    for (let i = 0; i < 1_500; i++) {
      const current = (await sqlite.beneficiaries.get(pick(random, records).id))!
      if (current === undefined) continue
      const at = T0 + (days + 1) * DAY + i * 1000
      const next = {
        ...current,
        status: skewedStatus(random),
        last_name: random() < 0.3 ? pick(random, NAMES) : current.last_name,
        updated_at: at,
        version: current.version + 1,
      }
      const entry = historyEntry('updated', at)
      assert.equal(await sqlite.beneficiaries.update(current, next, entry), 'done')
      assert.equal(await memory.beneficiaries.update(current, next, entry), 'done')
    }
    for (let i = 0; i < 1_200; i++) {
      const id = i < 50 ? records.length - i : pick(random, records).id
      const entry = historyEntry('deleted', T0 + (days + 2) * DAY)
      const outcome = await sqlite.beneficiaries.remove(id, undefined, entry)
      assert.equal(await memory.beneficiaries.remove(id, undefined, entry), outcome)
    }
    total = (await memory.beneficiaries.list(listQuery())).total
  })

  after(async () => {
    await sqlite.close()
    await memory.close()
  })

  it('gives the same page and total for 600 random queries after creates, updates and deletes', async () => {
    const queries = Array.from({ length: 600 }, () => randomQuery(random, total, T0, days))
    await assertSameAnswers(sqlite, memory, queries)
  })

  it('gives the same deep pages, in both directions, for every sort, status and date filter', async () => {
    const queries: ListQuery[] = []
    const from = T0 - (T0 % DAY) + 3 * DAY
    for (const sort of SORTS) {
      for (const descending of [false, true]) {
        for (const status of [undefined, ...STATUSES]) {
          for (const offset of [2_000, 2_345, 2_999, total - 3]) {
            const base = { limit: 25, offset, sort, descending }
            queries.push(status === undefined ? base : { ...base, status })
            queries.push({ ...base, createdFrom: from, ...(status && { status }) })
            queries.push({ ...base, createdBefore: from + 30 * DAY, ...(status && { status }) })
          }
        }
      }
    }
    await assertSameAnswers(sqlite, memory, queries)
  })
})

describe('SQLite listing of records created in id order agrees with the memory adapter', () => {
  it('gives the same deep pages of date ranges sorted by id (D15, D17)', async () => {
    const random = generator(17)
    const sqlite = await openSqliteStorage({ path: ':memory:' })
    const memory = new MemoryStorage()
    try {
      const start = T0 - (T0 % DAY)
      const ids: number[] = []
      for (let i = 0; i < 8_000; i++) {
        // Ids follow creation time, as they do in practice: twenty minutes apart, some at midnight.
        const at = start + i * 1_200_000
        const record = newBeneficiary({
          status: pick(random, STATUSES),
          created_at: at,
          updated_at: at,
        })
        ids.push(createdRecord(await sqlite.beneficiaries.create(record, createdEntry(record))).id)
        await memory.beneficiaries.create(record, createdEntry(record))
      }
      for (let i = 0; i < 600; i++) {
        const id = pick(random, ids)
        const entry = historyEntry('deleted', start)
        assert.equal(
          await sqlite.beneficiaries.remove(id, undefined, entry),
          await memory.beneficiaries.remove(id, undefined, entry),
        )
      }
      const queries: ListQuery[] = []
      for (const descending of [false, true]) {
        for (const status of [undefined, ...STATUSES]) {
          for (const offset of [0, 2_000, 2_222, 3_333, 4_000]) {
            const base = { limit: 25, offset, sort: 'id' as const, descending }
            const range = { createdFrom: start + 2 * DAY, createdBefore: start + 100 * DAY }
            queries.push({ ...base, ...range, ...(status && { status }) })
            queries.push({ ...base, createdFrom: start + DAY, ...(status && { status }) })
          }
        }
      }
      await assertSameAnswers(sqlite, memory, queries)
    } finally {
      await sqlite.close()
      await memory.close()
    }
  })
})

describe('seedBeneficiaries', () => {
  it('adds valid records (D8): e-mail, phone, codice fiscale matching the birth date, address', async () => {
    const storage = await openSqliteStorage({ path: ':memory:' })
    try {
      const now = Date.UTC(2025, 5, 1)
      const { firstId, count } = await seedBeneficiaries(
        storage,
        fakeBeneficiaries({ count: 3_000, seed: 7, now }),
      )
      assert.equal(count, 3_000)
      const statuses = new Set<string>()
      let fiscalCodes = 0
      for (let id = firstId; id < firstId + count; id++) {
        const record = (await storage.beneficiaries.get(id))!
        const { first_name, last_name, email, phone, date_of_birth, fiscal_code } = record
        const fields = { first_name, last_name, email, phone, date_of_birth, fiscal_code }
        const input = { ...fields, address: record.address, metadata: record.metadata }
        const valid = parseCreateInput(
          Object.fromEntries(Object.entries(input).filter(([, value]) => value !== null)),
          '2025-06-01',
        )
        assert.deepEqual(valid, { ...fields, address: record.address, metadata: record.metadata })
        assert.ok(record.created_at >= now - 3 * 366 * DAY && record.created_at < now)
        assert.ok(record.updated_at >= record.created_at && record.updated_at < now)
        statuses.add(record.status)
        if (fiscal_code !== null) fiscalCodes += 1
      }
      assert.deepEqual([...statuses].sort(), ['active', 'inactive', 'pending'])
      assert.ok(fiscalCodes > 0 && fiscalCodes < count / 4)
    } finally {
      await storage.close()
    }
  })

  it('gives the same rows for the same seed, and counts them for the list totals', async () => {
    const options = { count: 2_500, seed: 99, now: Date.UTC(2025, 0, 1) }
    const first = await openSqliteStorage({ path: ':memory:' })
    const second = await openSqliteStorage({ path: ':memory:' })
    const memory = new MemoryStorage()
    try {
      await seedBeneficiaries(first, fakeBeneficiaries(options))
      await seedBeneficiaries(second, fakeBeneficiaries(options))
      const all = listQuery({ limit: 100, offset: 1_200 })
      assert.deepEqual(await first.beneficiaries.list(all), await second.beneficiaries.list(all))
      assert.deepEqual(await first.beneficiaries.get(2_500), await second.beneficiaries.get(2_500))

      for (let id = 1; id <= options.count; id++) {
        const stored = (await first.beneficiaries.get(id))!
        const record = newBeneficiary({ ...stored })
        await memory.beneficiaries.create(record, createdEntry(record))
      }
      const random = generator(5)
      const queries = Array.from({ length: 200 }, () =>
        randomQuery(random, options.count, options.now - 3 * 365 * DAY, 3 * 365),
      )
      await assertSameAnswers(first, memory, queries)
    } finally {
      await first.close()
      await second.close()
      await memory.close()
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
