import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { openPostgresStorage, type PostgresStorage } from '../../../adapters/postgres/index.js'
import {
  claim,
  clientRecord,
  createdEntry,
  newBeneficiary,
  SECOND,
  sessionRecord,
  T0,
} from '../../contracts/storage-fixtures.js'
import { postgresSkipReason, useTestSchema } from '../../support/postgres.js'
import { explain, RecordingPool } from './query-plans.js'

const skip = (await postgresSkipReason()) ?? false

/** Live rows in each table the purges look into: a day of claims at a few per second. */
const ROWS = 50_000

describe(
  'PostgreSQL purges of expired claims and token ids: never a scan of the table',
  { skip },
  () => {
    const database = useTestSchema('purge_plans')
    let recording: RecordingPool
    let storage: PostgresStorage

    before(async () => {
      recording = new RecordingPool(database.pool())
      storage = await openPostgresStorage({ pool: recording, schema: database.schema })
      await storage.clients.insert(clientRecord())
      const pool = database.pool()
      const table = (name: string): string => `"${database.schema}".${name}`
      // Claims and revoked ids that are all still live: a purge finds nothing to delete. Their
      // expiries are shuffled against the order of the rows, as purges and reused space leave
      // them in time: an index scan then costs more per row, and only the ORDER BY keeps it.
      await pool.query(
        `INSERT INTO ${table('idempotency_keys')}
        (client_id, key, fingerprint, beneficiary_id, created_at, expires_at)
       SELECT 'client-1', 'k' || n, 'f', n, $1::bigint, $1::bigint + 86400000 + (n * 7919) % ${ROWS}
       FROM generate_series(1, ${ROWS}) n`,
        [T0],
      )
      await pool.query(
        `INSERT INTO ${table('revoked_tokens')} (jti, expires_at)
       SELECT 'j' || n, $1::bigint + 3600000 + (n * 7919) % ${ROWS} FROM generate_series(1, ${ROWS}) n`,
        [T0],
      )
      await pool.query(`ANALYZE ${table('idempotency_keys')}`)
      await pool.query(`ANALYZE ${table('revoked_tokens')}`)
    })

    /** Asserts that the recorded statement matching `pattern` reads `relation` only by index. */
    async function assertIndexed(pattern: RegExp, relation: string): Promise<void> {
      const statement = recording.statements.find((recorded) => pattern.test(recorded.text))
      assert.ok(statement !== undefined, `a statement matching ${pattern}`)
      for (const generic of [true, false]) {
        const plan = await explain(database.pool(), statement, generic)
        assert.ok(
          plan.nodes.some((node) => node.includes(relation)),
          `the plan reads ${relation}:\n${plan.text}`,
        )
        assert.deepEqual(plan.seqScans, [], `${generic ? 'generic' : 'custom'} plan:\n${plan.text}`)
      }
    }

    it('deletes expired claims along the expires_at index, as every 32nd create does', async () => {
      recording.clear()
      // Every 32nd create with a claim purges; the storage waits for the purge on close only,
      // so the test creates, then looks for the DELETE among what was sent.
      for (let i = 0; i < 32; i++) {
        const record = newBeneficiary({ email: `purge${i}@example.org` })
        await storage.beneficiaries.create(
          record,
          createdEntry(record),
          claim({ key: `purge-${i}`, now: T0 + i * SECOND }),
        )
      }
      for (let waited = 0; waited < 100 && !recording.statements.some(isPurge); waited++) {
        await new Promise((resolve) => setImmediate(resolve))
      }
      await assertIndexed(/DELETE FROM .*idempotency_keys/s, 'idempotency_keys')
    })

    it('forgets expired token ids along the expires_at index, as every revocation does', async () => {
      await storage.sessions.insert(sessionRecord())
      recording.clear()
      await storage.sessions.revoke('session-1', T0, { jti: 'now', expiresAt: T0 + 60 * SECOND })
      await assertIndexed(/revoked_tokens/, 'revoked_tokens')
    })
  },
)

function isPurge(statement: { readonly text: string }): boolean {
  return /DELETE FROM .*idempotency_keys/s.test(statement.text)
}
