import assert from 'node:assert/strict'
import type pg from 'pg'
import type { NewBeneficiary } from '../../core/ports/beneficiary-store.js'

/**
 * Asserts that the records of `schema` are `expected`, in id order and nothing else (so none
 * twice and none missing), each with its history (one `created` entry, and a `status_changed`
 * one unless pending), and that the counters the adapter keeps equal a count from scratch.
 */
export async function assertSeededExactly(
  pool: pg.Pool,
  schema: string,
  expected: readonly NewBeneficiary[],
): Promise<void> {
  const rows = await pool.query<{
    email: string
    fiscal_code: string | null
    created_at: string
    status: string
  }>(`SELECT email, fiscal_code, created_at, status FROM "${schema}".beneficiaries ORDER BY id`)
  assert.equal(rows.rows.length, expected.length, 'as many records as the seed has')
  rows.rows.forEach((row, i) => {
    const record = expected[i]!
    // Compared one by one: a failure names the first record out of place, never all of them.
    assert.ok(
      row.email === record.email &&
        row.fiscal_code === record.fiscal_code &&
        Number(row.created_at) === record.created_at &&
        row.status === record.status,
      `record ${i + 1} of the seed is in its place`,
    )
  })
  const codes = await pool.query<{ n: number; distinct: number }>(
    `SELECT count(fiscal_code)::int AS n, count(DISTINCT fiscal_code)::int AS distinct
     FROM "${schema}".beneficiaries`,
  )
  assert.equal(codes.rows[0]!.n, codes.rows[0]!.distinct, 'no fiscal code twice')

  const history = await pool.query<{ action: string; n: number; records: number }>(
    `SELECT action, count(*)::int AS n, count(DISTINCT beneficiary_id)::int AS records
     FROM "${schema}".beneficiary_history h
     WHERE EXISTS (SELECT 1 FROM "${schema}".beneficiaries b WHERE b.id = h.beneficiary_id)
     GROUP BY action ORDER BY action`,
  )
  const changed = expected.filter((record) => record.status !== 'pending').length
  assert.deepEqual(history.rows, [
    { action: 'created', n: expected.length, records: expected.length },
    { action: 'status_changed', n: changed, records: changed },
  ])
  const orphans = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM "${schema}".beneficiary_history h
     WHERE NOT EXISTS (SELECT 1 FROM "${schema}".beneficiaries b WHERE b.id = h.beneficiary_id)`,
  )
  assert.equal(orphans.rows[0]!.n, 0, 'no history entry of a record that is not there')
  await assertCountersRecounted(pool, schema, expected.length)
}

/**
 * Asserts that `beneficiary_counts` holds, summed over its shards, what counting the records
 * from scratch gives, and that the version of searches' totals counted every record written.
 */
export async function assertCountersRecounted(
  pool: pg.Pool,
  schema: string,
  writes: number,
): Promise<void> {
  const recount = await pool.query(`SELECT k.kind, k.status, k.key, k.prefix, count(*)::bigint AS n
    FROM "${schema}".beneficiaries b CROSS JOIN LATERAL "${schema}".beneficiary_count_keys(
      b.id, b.status, b.created_at, b.updated_at, b.sort_first, b.sort_last) k
    GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4`)
  const kept = await pool.query(`SELECT kind, status, key, prefix, sum(n)::bigint AS n
    FROM "${schema}".beneficiary_counts WHERE kind <> 'v' GROUP BY 1, 2, 3, 4 HAVING sum(n) <> 0
    ORDER BY 1, 2, 3, 4`)
  assert.ok(recount.rows.length > 0)
  assert.deepEqual(kept.rows, recount.rows, 'the counters equal a count from scratch')
  const version = await pool.query<{ n: number }>(
    `SELECT coalesce(sum(n), 0)::int AS n FROM "${schema}".beneficiary_counts WHERE kind = 'v'`,
  )
  assert.equal(version.rows[0]!.n, writes, 'the version of search totals counted every write')
}
