import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { MemoryStorage } from '../../../adapters/memory/index.js'
import {
  openPostgresStorage,
  seedPostgres,
  type PostgresStorage,
} from '../../../adapters/postgres/index.js'
import type { BeneficiaryRecord, BeneficiaryStatus, SortField } from '../../../core/beneficiary.js'
import type { ListQuery, NewBeneficiary } from '../../../core/ports/beneficiary-store.js'
import type { Storage } from '../../../core/ports/storage.js'
import { searchTerms } from '../../../core/search-terms.js'
import { DAY_MS } from '../../../core/time.js'
import { fakeBeneficiaries } from '../../../server/cli/fake-beneficiaries.js'
import { createdEntry, historyEntry } from '../../contracts/storage-fixtures.js'
import { postgresSkipReason, useTestSchema } from '../../support/postgres.js'
import { Random } from '../../support/random.js'
import { RecordingPool } from './query-plans.js'

const skip = (await postgresSkipReason()) ?? false

/** Past the adapter's DEEP_OFFSET (2,000), so that deep pages seek through the counters. */
const SEEDED = 4_000
const NOW = Date.UTC(2026, 0, 1)
const SORTS: readonly SortField[] = ['id', 'created_at', 'updated_at', 'last_name', 'first_name']

describe('PostgreSQL listing against the memory reference (D15–D18)', { skip }, () => {
  const database = useTestSchema('list')
  let postgres: PostgresStorage
  let recording: RecordingPool
  const memory = new MemoryStorage()
  const random = new Random(20_261_124)
  let total = 0

  async function createBoth(record: NewBeneficiary): Promise<void> {
    const a = await postgres.beneficiaries.create(record, createdEntry(record))
    const b = await memory.beneficiaries.create(record, createdEntry(record))
    assert.ok(a.kind === 'created' && b.kind === 'created')
    assert.equal(a.record.id, b.record.id)
  }

  async function changeBoth(
    id: number,
    change: (record: BeneficiaryRecord) => Partial<BeneficiaryRecord>,
    at: number,
  ): Promise<void> {
    for (const storage of [postgres, memory] as Storage[]) {
      const previous = (await storage.beneficiaries.get(id))!
      const next = {
        ...previous,
        ...change(previous),
        updated_at: at,
        version: previous.version + 1,
      }
      assert.equal(
        await storage.beneficiaries.update(previous, next, historyEntry('updated', at)),
        'done',
      )
    }
  }

  before(async () => {
    recording = new RecordingPool(database.pool())
    postgres = await openPostgresStorage({ pool: recording, schema: database.schema })
    // The bulk loader counts in shard 0; the writes below in the other shards.
    const seeded = [...fakeBeneficiaries({ count: SEEDED, seed: 11, now: NOW })]
    const result = await seedPostgres(postgres, seeded)
    assert.deepEqual(result, { firstId: 1, lastId: SEEDED, count: SEEDED, added: SEEDED })
    for (const record of seeded) await memory.beneficiaries.create(record, createdEntry(record))
    total = SEEDED

    // Live writes: creates on today's days, renames, status changes, deletes, moved updated_at.
    // (No fiscal codes: another seed could repeat one of the first.)
    const fresh = fakeBeneficiaries({ count: 300, seed: 12, now: NOW + 30 * DAY_MS })
    for (const record of fresh) await createBoth({ ...record, fiscal_code: null })
    total += 300
    const statuses: BeneficiaryStatus[] = ['active', 'inactive', 'pending']
    for (let i = 0; i < 150; i++) {
      const id = random.between(1, total)
      const at = NOW + 31 * DAY_MS + i * 60_000
      if ((await postgres.beneficiaries.get(id)) === undefined) continue
      switch (i % 3) {
        case 0: {
          const status = random.pick(statuses)
          await changeBoth(id, () => ({ status }), at)
          break
        }
        case 1:
          await changeBoth(
            id,
            (r) => ({ last_name: `${r.first_name} Äbel`, first_name: 'Zoë' }),
            at,
          )
          break
        default:
          await changeBoth(id, () => ({ phone: '+390612345678' }), at)
      }
    }
    for (let i = 0; i < 60; i++) {
      const id = random.between(1, total)
      if ((await postgres.beneficiaries.get(id)) === undefined) continue
      for (const storage of [postgres, memory] as Storage[]) {
        await storage.beneficiaries.remove(
          id,
          undefined,
          historyEntry('deleted', NOW + 40 * DAY_MS),
        )
      }
    }
  })

  async function assertSame(query: ListQuery): Promise<void> {
    const expected = await memory.beneficiaries.list(query)
    const actual = await postgres.beneficiaries.list(query)
    assert.equal(actual.total, expected.total, JSON.stringify(query))
    assert.deepEqual(
      actual.items.map((item) => item.id),
      expected.items.map((item) => item.id),
      JSON.stringify(query),
    )
  }

  const created = Date.UTC(2024, 5, 1)
  const RANGES: readonly (readonly [number | undefined, number | undefined])[] = [
    [undefined, undefined],
    [created, created + 400 * DAY_MS],
    [created + 3_600_000, created + 200 * DAY_MS + 7],
    [undefined, created],
  ]

  for (const sort of SORTS) {
    it(`pages by ${sort} in both directions, with every filter, from the first page to past the end`, async () => {
      for (const descending of [false, true]) {
        for (const status of [undefined, 'active', 'pending'] as const) {
          for (const [createdFrom, createdBefore] of RANGES) {
            const filters = {
              sort,
              descending,
              ...(status !== undefined && { status }),
              ...(createdFrom !== undefined && { createdFrom }),
              ...(createdBefore !== undefined && { createdBefore }),
            }
            const { total: count } = await memory.beneficiaries.list({
              ...filters,
              offset: 0,
              limit: 1,
            })
            const offsets = [0, 1_999, 2_000, 2_345, count >> 1, count - 25, count - 3, count + 5]
            for (const offset of offsets.filter((o) => o >= 0)) {
              // Twice: the first plans the long way, the second in one statement.
              await assertSame({ ...filters, offset, limit: 25 })
              await assertSame({ ...filters, offset, limit: 25 })
            }
          }
        }
      }
    })
  }

  it('searches as the memory adapter does, with filters, sorts and pages (D16)', async () => {
    const searches = [
      'ros',
      'mar',
      'maria',
      'nguyen',
      'de',
      "d'ang",
      'zoe abel',
      'a',
      'zzz',
      'jose',
    ]
    for (const text of searches) {
      for (const sort of SORTS) {
        for (const status of [undefined, 'inactive'] as const) {
          for (const offset of [0, 20, 150]) {
            const query = {
              search: searchTerms(text),
              sort,
              descending: offset === 20,
              offset,
              limit: 20,
              ...(status !== undefined && { status }),
            }
            await assertSame(query)
            await assertSame({
              ...query,
              createdFrom: created,
              createdBefore: created + 300 * DAY_MS,
            })
          }
        }
      }
    }
  })

  it('found the deep pages through every kind of counter, not by skipping rows', () => {
    const kinds = new Set(
      recording.statements
        .filter((statement) => /GROUP BY (key|prefix) HAVING/.test(statement.text))
        .map((statement) => statement.values[0]),
    )
    assert.deepEqual([...kinds].sort(), ['b', 'd', 'f', 'l', 'u'])
  })

  it('keeps the counters equal to the rows: every status and day total matches a count', async () => {
    const pool = database.pool()
    const schema = database.schema
    const rows = await pool.query(`
      SELECT kind, status, key, prefix, coalesce(c.n, 0) AS counted, coalesce(r.n, 0) AS actual
      FROM (
        SELECT kind, status, key, prefix, sum(n)::int AS n FROM "${schema}".beneficiary_counts
        WHERE kind <> 'v' GROUP BY 1, 2, 3, 4) c
      FULL JOIN (
        SELECT k.kind, k.status, k.key, k.prefix, count(*)::int AS n
        FROM "${schema}".beneficiaries b CROSS JOIN LATERAL "${schema}".beneficiary_count_keys(
          b.id, b.status, b.created_at, b.updated_at, b.sort_first, b.sort_last) k
        GROUP BY 1, 2, 3, 4) r USING (kind, status, key, prefix)
      WHERE coalesce(c.n, 0) <> coalesce(r.n, 0)`)
    assert.deepEqual(rows.rows, [])
  })
})
