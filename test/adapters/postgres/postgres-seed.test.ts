import assert from 'node:assert/strict'
import { after, before, beforeEach, describe, it } from 'node:test'
import {
  openPostgresStorage,
  seedPostgres,
  type PostgresSeedStart,
  type PostgresStorage,
} from '../../../adapters/postgres/index.js'
import type { NewBeneficiary } from '../../../core/ports/beneficiary-store.js'
import { fakeBeneficiaries } from '../../../server/cli/fake-beneficiaries.js'
import { createdEntry } from '../../contracts/storage-fixtures.js'
import { postgresSkipReason, useTestSchema } from '../../support/postgres.js'
import { assertCountersRecounted, assertSeededExactly } from '../../support/postgres-seeded.js'

const skip = (await postgresSkipReason()) ?? false

const COUNT = 3_000
const BATCH = 500

/** The made-up records of a load, which stop with an error after `stopAfter` when given. */
function records(start: PostgresSeedStart, stopAfter = Infinity): Iterable<NewBeneficiary> {
  return (function* () {
    let i = 0
    for (const record of fakeBeneficiaries({ count: COUNT, seed: 5, now: start.startedAt })) {
      if (i++ === stopAfter) throw new Error('the source broke')
      yield record
    }
  })()
}

describe('seedPostgres: batches that commit, and a named load that resumes', { skip }, () => {
  const database = useTestSchema('seed')
  const { schema } = database
  let storage: PostgresStorage

  before(async () => {
    storage = await openPostgresStorage({ pool: database.newPool(4), schema })
  })
  after(() => storage.close())
  beforeEach(async () => {
    await database.pool().query(
      `TRUNCATE "${schema}".beneficiaries, "${schema}".beneficiary_history,
        "${schema}".beneficiary_counts, "${schema}".bulk_loads RESTART IDENTITY`,
    )
  })

  async function done(name: string): Promise<number | undefined> {
    const result = await database
      .pool()
      .query<{ done: number }>(`SELECT done::int FROM "${schema}".bulk_loads WHERE name = $1`, [
        name,
      ])
    return result.rows[0]?.done
  }

  it('keeps the batches committed before a failure, then resumes after them with the same records', async () => {
    const starts: PostgresSeedStart[] = []
    const progress: number[] = []
    await assert.rejects(
      seedPostgres(storage, (start) => (starts.push(start), records(start, 1_250)), {
        name: 'demo',
        batchSize: BATCH,
        onProgress: (n) => progress.push(n),
      }),
      /the source broke/,
    )
    assert.deepEqual(progress, [500, 1_000])
    assert.equal(await done('demo'), 1_000)
    await assertCountersRecounted(database.pool(), schema, 1_000)

    const result = await seedPostgres(storage, (start) => (starts.push(start), records(start)), {
      name: 'demo',
      batchSize: BATCH,
      onProgress: (n) => progress.push(n),
    })
    assert.equal(starts.length, 2)
    assert.equal(starts[0]!.done, 0)
    assert.deepEqual(starts[1], { startedAt: starts[0]!.startedAt, done: 1_000 })
    assert.deepEqual(progress.slice(2), [1_500, 2_000, 2_500, 3_000])
    assert.deepEqual(result, { firstId: 1, lastId: COUNT, count: COUNT, added: 2_000 })
    const expected = [...records(starts[0]!)]
    await assertSeededExactly(database.pool(), schema, expected)

    // Finished: called again, it adds nothing and does not ask for the records.
    const again = await seedPostgres(
      storage,
      () => {
        throw new Error('not asked for')
      },
      { name: 'demo' },
    )
    assert.deepEqual(again, { firstId: 1, lastId: COUNT, count: COUNT, added: 0 })
    await assertSeededExactly(database.pool(), schema, expected)
  })

  it('adds none of a batch that breaks a constraint, and keeps the batches before it', async () => {
    const start = { startedAt: Date.UTC(2026, 0, 1), done: 0 }
    const all = [...records(start)]
    const taken = all.findIndex((record, i) => i >= 1_200 && record.fiscal_code !== null)
    // A record created through the port already holds a fiscal code of the third batch.
    const holder = { ...all[0]!, fiscal_code: all[taken]!.fiscal_code }
    await storage.beneficiaries.create(holder, createdEntry(holder))
    await assert.rejects(
      seedPostgres(storage, all, { name: 'conflict', batchSize: BATCH }),
      (error: Error & { code?: string }) => error.code === '23505',
    )
    assert.equal(await done('conflict'), 1_000)
    const rows = await database
      .pool()
      .query<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".beneficiaries`)
    assert.equal(rows.rows[0]!.n, 1 + 1_000)
  })

  it('lets only one of two calls of one load add each batch: nothing twice', async () => {
    const results = await Promise.allSettled(
      [0, 1].map(() => seedPostgres(storage, records, { name: 'twice', batchSize: 200 })),
    )
    let added = 0
    let startedAt = 0
    for (const result of results) {
      if (result.status === 'fulfilled') {
        added += result.value.added
      } else {
        assert.match(String(result.reason), /another call added to the load "twice" meanwhile/)
      }
    }
    assert.equal(added, COUNT)
    const load = await database
      .pool()
      .query<{ started_at: string }>(`SELECT started_at FROM "${schema}".bulk_loads`)
    startedAt = Number(load.rows[0]!.started_at)
    await assertSeededExactly(database.pool(), schema, [...records({ startedAt, done: 0 })])
  })

  it('refuses records that end before those the load has committed', async () => {
    await assert.rejects(
      seedPostgres(storage, (start) => records(start, 700), { name: 'short', batchSize: 250 }),
      /the source broke/,
    )
    assert.equal(await done('short'), 500)
    const fewer = (start: PostgresSeedStart) => [...records(start)].slice(0, 300)
    await assert.rejects(
      seedPostgres(storage, fewer, { name: 'short', batchSize: 250 }),
      /the records end before the 500 the load "short" already has/,
    )
    assert.equal(await done('short'), 500)
  })
})
