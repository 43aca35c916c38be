import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { seedBeneficiaries, type SqliteStorage } from '../../../adapters/sqlite/index.js'
import {
  byCodePoint,
  byNumber,
  CountedKeys,
} from '../../../adapters/sqlite/listing/sqlite-counted-keys.js'
import { LOG_KEPT } from '../../../adapters/sqlite/writes/sqlite-counters.js'
import type { BeneficiaryStatus, SortField } from '../../../core/beneficiary.js'
import type { ListQuery } from '../../../core/ports/beneficiary-store.js'
import { DAY_MS } from '../../../core/time.js'
import { fakeBeneficiaries } from '../../../server/cli/fake-beneficiaries.js'
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
const NAMES = ['Rossi', 'Rosa', 'rossi', 'Bianchi', 'Émile', 'Zoë', 'de Luca', '𝒜lba', 'Ｚeta']

describe('CountedKeys', () => {
  it('finds the key holding an offset in both directions, within a range of keys, skipping empty keys', () => {
    const keys = new CountedKeys<number>(byNumber)
    for (const [key, n] of [
      [30, 2],
      [10, 3],
      [20, 0],
      [40, 5],
      [10, 1],
    ] as const) {
      keys.add(key, n)
    }
    assert.deepEqual(
      Array.from({ length: keys.size }, (_, i) => [keys.key(i), keys.count(i)]),
      [
        [10, 4],
        [20, 0],
        [30, 2],
        [40, 5],
      ],
    )
    const rows = [10, 10, 10, 10, 30, 30, 40, 40, 40, 40, 40]
    rows.forEach((key, offset) => {
      const up = keys.find(offset, 0, keys.size, false)!
      assert.equal(keys.key(up.index), key)
      assert.equal(up.before, rows.indexOf(key))
      const down = keys.find(offset, 0, keys.size, true)!
      const fromTop = rows.toReversed()
      assert.equal(keys.key(down.index), fromTop[offset])
      assert.equal(down.before, fromTop.indexOf(fromTop[offset]!))
    })
    assert.equal(keys.find(rows.length, 0, keys.size, false), undefined)
    assert.equal(keys.sum(keys.lowerBound(15), keys.lowerBound(40)), 2)
    assert.equal(keys.key(keys.find(0, 1, 3, false)!.index), 30)
    assert.equal(keys.find(2, 1, 3, true), undefined)
  })

  it('orders strings as SQLite BINARY does (UTF-8 bytes), characters past U+FFFF included', () => {
    const random = new Random(7)
    const alphabet = ['a', 'z', 'é', '\uE000', '\uFFFD', '𝒜', '😀', 'Ｚ', '\u0000']
    const words = Array.from({ length: 400 }, () =>
      Array.from({ length: random.between(0, 4) }, () => random.pick(alphabet)).join(''),
    )
    const bytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b))
    for (const a of words) {
      for (const b of words.slice(0, 40)) {
        assert.equal(Math.sign(byCodePoint(a, b)), bytes(a, b), `${a} ${b}`)
      }
    }
  })
})

/** A list query's filters, as the adapter gets them. */
type Filters = Pick<ListQuery, 'status' | 'createdFrom' | 'createdBefore'>

/** The WHERE clause and its values for `filters`, in plain SQL. */
function where(filters: Filters): [string, unknown[]] {
  const terms: [string, unknown][] = []
  if (filters.status !== undefined) terms.push(['status = ?', filters.status])
  if (filters.createdFrom !== undefined) terms.push(['created_at >= ?', filters.createdFrom])
  if (filters.createdBefore !== undefined) terms.push(['created_at < ?', filters.createdBefore])
  if (terms.length === 0) return ['', []]
  return [`WHERE ${terms.map(([term]) => term).join(' AND ')}`, terms.map(([, value]) => value)]
}

/** The ids of a page as a plain OFFSET over the sort's whole order gives them. */
function expectedIds(
  storage: SqliteStorage,
  sort: SortField,
  filters: Filters,
  descending: boolean,
  offset: number,
  limit: number,
): number[] {
  const order = SQL_ORDER[sort]
    .split(', ')
    .map((column) => `${column} ${descending ? 'DESC' : 'ASC'}`)
    .join(', ')
  const [clause, values] = where(filters)
  return storage.database
    .prepare<unknown[], number>(
      `SELECT id FROM beneficiaries ${clause} ORDER BY ${order} LIMIT ? OFFSET ?`,
    )
    .pluck()
    .all(...values, limit, offset)
}

/** Pages from 2,000 on (found through the counters, DEEP_OFFSET) and their totals, checked. */
async function assertPages(
  storage: SqliteStorage,
  random: Random,
  sort: SortField,
  filters: Filters,
  from: number,
): Promise<void> {
  const descending = random.next() < 0.5
  const query = { sort, descending, offset: 0, limit: 1, ...filters }
  const total = (await storage.beneficiaries.list(query)).total
  const [clause, values] = where(filters)
  const counted = storage.database
    .prepare<unknown[], number>(`SELECT count(*) FROM beneficiaries ${clause}`)
    .pluck()
    .get(...values)
  assert.equal(total, counted, JSON.stringify(query))
  for (let i = 0; i < 3 && total > from; i++) {
    const offset = random.between(from, total - 1)
    const limit = random.between(1, 60)
    const page = await storage.beneficiaries.list({ ...query, offset, limit })
    assert.deepEqual(
      page.items.map((item) => item.id),
      expectedIds(storage, sort, filters, descending, offset, limit),
      JSON.stringify({ ...query, offset, limit }),
    )
  }
}

/** Deep pages of every sort and status, and pages of the name sorts within date ranges. */
async function assertDeepPages(storage: SqliteStorage, random: Random): Promise<void> {
  for (const status of [undefined, ...STATUSES]) {
    for (const sort of Object.keys(SQL_ORDER) as SortField[]) {
      await assertPages(storage, random, sort, status === undefined ? {} : { status }, 2_000)
    }
    for (const sort of ['first_name', 'last_name'] as const) {
      // Whole days, as the core gives them, or any instant.
      const day = random.next() < 0.8 ? DAY_MS : 1
      const first = T0 - (T0 % day) + random.between(0, 20) * DAY_MS
      const range = { createdFrom: first, createdBefore: first + random.between(1, 40) * DAY_MS }
      await assertPages(storage, random, sort, { ...range, ...(status && { status }) }, 0)
    }
  }
}

/** Creates a record on `on` with random names and status, and returns its id. */
async function createOn(
  on: SqliteStorage,
  random: Random,
  email: string,
  at = T0,
): Promise<number> {
  const record = newBeneficiary({
    first_name: random.pick(NAMES),
    last_name: random.pick(NAMES),
    email,
    status: random.pick(STATUSES),
    created_at: at,
    updated_at: at,
  })
  return createdRecord(await on.beneficiaries.create(record, createdEntry(record))).id
}

describe('SQLite counter mirror', () => {
  it('finds deep pages from the copy of the counters while this connection and another one write, over several name blocks', async () => {
    await withTwoConnections(async (storage, other) => {
      const random = new Random(2026)
      const ids: number[] = []
      // Created in id order, days apart, so that date ranges cover whole blocks of ids.
      let at = T0
      const create = async (on: SqliteStorage, i: number) => {
        at += random.between(0, 800_000)
        ids.push(await createOn(on, random, `m${i}@example.org`, at))
      }
      for (let round = 0; round < 4; round++) {
        // Ids jump to the next block of the name counters (32,768) at every round.
        storage.database
          .prepare("UPDATE sqlite_sequence SET seq = ? WHERE name = 'beneficiaries'")
          .run(round * 32_768 + random.between(0, 28_000))
        await Promise.all(
          Array.from({ length: 2_100 }, (_, i) => create(storage, round * 3000 + i)),
        )
        await assertDeepPages(storage, random)

        // This connection's updates (status, names, update day) and deletes, one group each.
        await Promise.all(
          Array.from({ length: 150 }, async (_, i) => {
            const id = random.pick(ids)
            const current = await storage.beneficiaries.get(id)
            if (current === undefined) return
            const when = T0 + 40 * DAY_MS + round * DAY_MS + i
            if (i % 10 === 0) {
              await storage.beneficiaries.remove(id, undefined, historyEntry('deleted', when))
              return
            }
            await storage.beneficiaries.update(
              current,
              {
                ...current,
                status: random.pick(STATUSES),
                last_name: random.next() < 0.5 ? random.pick(NAMES) : current.last_name,
                updated_at: when,
                version: current.version + 1,
              },
              historyEntry('updated', when),
            )
          }),
        )
        await assertDeepPages(storage, random)

        // Another connection's writes: the copy follows them through the counter log.
        await Promise.all(
          Array.from({ length: 50 }, (_, i) => create(other, round * 3000 + 2_900 + i)),
        )
        await new Promise((resolve) => setImmediate(resolve))
        await assertDeepPages(storage, random)
      }
    })
  })

  it('loads the counters anew when the log no longer holds every generation it missed, and keeps the log bounded', async () => {
    await withTwoConnections(async (storage, other) => {
      const random = new Random(99)
      await createOn(storage, random, 'l0@example.org')
      await assertDeepPages(storage, random)
      // One generation per create: each is awaited, so each is a group of its own.
      for (let i = 1; i <= LOG_KEPT + 400; i++) await createOn(other, random, `l${i}@example.org`)
      const log = storage.database
        .prepare<[], { kept: number; first: number }>(
          'SELECT count(*) AS kept, min(generation) AS first FROM beneficiary_counter_log',
        )
        .get()!
      assert.ok(log.first > 2, `the generations this copy missed are gone (from ${log.first})`)
      assert.ok(log.kept <= LOG_KEPT + 256, `${log.kept} generations kept`)
      await assertDeepPages(storage, random)
    })
  })

  it('loads the counters anew after a bulk seed by another connection, which logs a marker instead of its changes', async () => {
    await withTwoConnections(async (storage, other) => {
      const random = new Random(5)
      await assertDeepPages(storage, random)
      const seeded = await seedBeneficiaries(
        other,
        fakeBeneficiaries({ count: 4_000, seed: 3, now: T0 }),
      )
      assert.equal(seeded.count, 4_000)
      const last = storage.database
        .prepare<[], string>(
          'SELECT changes FROM beneficiary_counter_log ORDER BY generation DESC LIMIT 1',
        )
        .pluck()
        .get()
      assert.equal(last, 'null')
      await new Promise((resolve) => setImmediate(resolve))
      await assertDeepPages(storage, random)
    })
  })
  it("erases a deleted record's names from the name counters and the counter log (D27), and every copy follows", async () => {
    await withTwoConnections(async (storage, other) => {
      const random = new Random(8)
      for (let i = 0; i < 40; i++) await createOn(storage, random, `e${i}@example.org`)
      const record = newBeneficiary({
        first_name: 'Ottavina',
        last_name: 'Unicornelli',
        email: 'erased@example.org',
      })
      const { id } = createdRecord(await storage.beneficiaries.create(record, createdEntry(record)))
      await assertDeepPages(other, random)
      const traces = () =>
        storage.database
          .prepare<[], { counters: number; log: number }>(
            `SELECT
              (SELECT count(*) FROM beneficiary_name_key_counts
                WHERE raw_name IN ('Ottavina', 'Unicornelli')) AS counters,
              (SELECT count(*) FROM beneficiary_counter_log
                WHERE instr(changes, 'Unicornelli') > 0 OR instr(changes, 'Ottavina') > 0) AS log`,
          )
          .get()!
      assert.deepEqual(traces(), { counters: 2, log: 1 })

      assert.equal(
        await storage.beneficiaries.remove(id, undefined, historyEntry('deleted', T0)),
        'done',
      )
      assert.deepEqual(traces(), { counters: 0, log: 0 })
      await new Promise((resolve) => setImmediate(resolve))
      await assertDeepPages(other, random)
      await assertDeepPages(storage, random)
    })
  })
})
