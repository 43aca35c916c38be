import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import pg from 'pg'
import { openPostgresStorage } from '../../../adapters/postgres/index.js'
import { fakeBeneficiaries } from '../../../server/cli/fake-beneficiaries.js'
import { listQuery } from '../../contracts/storage-fixtures.js'
import { CliChild } from '../../support/cli-child.js'
import {
  createTestDatabase,
  postgresSkip,
  type TestDatabase,
} from '../../support/postgres-database.js'
import { assertCountersRecounted, assertSeededExactly } from '../../support/postgres-seeded.js'

const COUNT = 20_000
const BATCH = 500

/** Records the seed has committed, from its row in `bulk_loads` (0 before there is one). */
async function committed(pool: pg.Pool): Promise<number> {
  const table = await pool.query("SELECT to_regclass('bulk_loads') IS NOT NULL AS made")
  if ((table.rows[0] as { made: boolean }).made !== true) return 0
  const result = await pool.query<{ done: number }>('SELECT done::int FROM bulk_loads')
  return result.rows[0]?.done ?? 0
}

/** Runs `seed` as a real process to its end: its exit status, its JSON line and standard error. */
async function seed(
  args: readonly string[],
): Promise<{ code: number | null; out: string[]; err: string }> {
  const out: string[] = []
  const child = new CliChild({ args, onLine: (line) => out.push(line) })
  const exit = await child.exited
  return { code: exit.code, out, err: child.stderr }
}

describe('seed on PostgreSQL, killed in the middle and run again', async () => {
  const skip = await postgresSkip()
  let database: TestDatabase | undefined
  let killed: CliChild | undefined
  let pool: pg.Pool | undefined
  after(async () => {
    await killed?.kill()
    await pool?.end()
    await database?.drop()
  })

  it(
    'resumes where the batches stopped: exactly its records, none twice, counters exact',
    { skip },
    async () => {
      database = await createTestDatabase('seed_resume')
      pool = new pg.Pool({ connectionString: database.url, max: 2 })
      const args = ['seed', '--count', String(COUNT), '--seed', '9', '--batch-size', String(BATCH)]
      args.push('--database-url', database.url)

      killed = new CliChild({ args, onLine: () => undefined })
      const deadline = Date.now() + 60_000
      while ((await committed(pool)) < 4 * BATCH) {
        assert.ok(killed.running, `seed ended before it could be killed: ${killed.stderr}`)
        if (Date.now() > deadline) assert.fail('no four batches committed within a minute')
        await delay(10)
      }
      const exit = await killed.stop('SIGKILL')
      assert.equal(exit.signal, 'SIGKILL')

      // What the killed process left: whole batches, each with its history and counters.
      const done = await committed(pool)
      assert.ok(done < COUNT, 'killed before the end')
      assert.equal(done % BATCH, 0, 'whole batches only')
      const rows = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM beneficiaries')
      assert.equal(rows.rows[0]!.n, done)
      await assertCountersRecounted(pool, 'public', done)

      const resumed = await seed(args)
      assert.equal(resumed.code, 0, resumed.err)
      assert.match(
        resumed.err,
        new RegExp(`resuming after the ${done.toLocaleString('en-US')} records`),
      )
      assert.deepEqual(JSON.parse(resumed.out.at(-1)!), {
        ...(JSON.parse(resumed.out.at(-1)!) as { seconds: number }),
        first_id: 1,
        count: COUNT,
        added: COUNT - done,
      })
      const load = await pool.query<{ started_at: string; finished_at: string | null }>(
        'SELECT started_at, finished_at FROM bulk_loads',
      )
      assert.notEqual(load.rows[0]!.finished_at, null, 'finished')
      const now = Number(load.rows[0]!.started_at)
      await assertSeededExactly(pool, 'public', [
        ...fakeBeneficiaries({ count: COUNT, seed: 9, now }),
      ])

      // The lists read the same totals as a count.
      const storage = await openPostgresStorage({ connectionString: database.url, migrate: false })
      try {
        const active = await pool.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM beneficiaries WHERE status = 'active'",
        )
        assert.equal((await storage.beneficiaries.list(listQuery())).total, COUNT)
        assert.equal(
          (await storage.beneficiaries.list(listQuery({ status: 'active' }))).total,
          active.rows[0]!.n,
        )
      } finally {
        await storage.close()
      }

      // Finished: the same command adds nothing.
      const again = await seed(args)
      assert.equal(again.code, 0, again.err)
      assert.equal((JSON.parse(again.out.at(-1)!) as { added: number }).added, 0)
      assert.match(again.err, /records of this seed are in already/)
    },
  )
})
