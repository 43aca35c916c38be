import assert from 'node:assert/strict'
import { createServer, type AddressInfo, type Socket } from 'node:net'
import { after, describe, it } from 'node:test'
import type pg from 'pg'
import { openPostgresStorage, PostgresStorage } from '../../adapters/postgres/index.js'
import { StorageUnavailableError, isDomainError } from '../../core/errors.js'
import { FakeClock } from '../../core/fake-clock.js'
import type { Storage } from '../../core/ports/storage.js'
import { loadSigningKeys } from '../../core/signing-keys.js'
import { describeStorageContract } from '../contracts/storage.contract.js'
import {
  T0,
  claim,
  createdEntry,
  historyEntry,
  insertBeneficiary,
  listQuery,
  newBeneficiary,
  nextVersion,
} from '../contracts/storage-fixtures.js'
import { RecordingPool } from './postgres/query-plans.js'
import {
  TEST_DATABASE_URL,
  postgresSkipReason,
  testSchemaName,
  useTestSchema,
} from '../support/postgres.js'

const skip = (await postgresSkipReason()) ?? false

function postgresStorage(storage: Storage): PostgresStorage {
  assert.ok(storage instanceof PostgresStorage)
  return storage
}

const TABLES = [
  'beneficiary_counts',
  'beneficiary_history',
  'idempotency_keys',
  'beneficiaries',
  'revoked_tokens',
  'sessions',
  'clients',
  'signing_keys',
  'access_log_records',
  'access_log',
  'beneficiary_events',
  'webhook_endpoints',
]

describe('PostgreSQL storage', { skip }, () => {
  const database = useTestSchema('contract')
  const { schema } = database
  let migrated = false

  // One schema for the file, migrated once; each test starts from empty tables.
  describeStorageContract({
    name: 'postgres',
    create: async () => {
      const pool = database.pool()
      if (!migrated) {
        await openPostgresStorage({ pool, schema }).then((storage) => storage.close())
        migrated = true
      }
      await pool.query(TABLES.map((name) => `DELETE FROM "${schema}".${name};`).join('\n'))
      await pool.query(
        `UPDATE "${schema}".beneficiary_event_purge SET through_id = 0, through_xid = '0'`,
      )
      return openPostgresStorage({ pool, schema, migrate: false })
    },
    destroy: (storage) => storage.close(),
    retainedHistory: (storage, id) => postgresStorage(storage).beneficiaries.retainedHistory(id),
  })

  describe('PostgresStorage beyond the contract', () => {
    const fresh: string[] = []
    after(async () => {
      const pool = database.pool()
      for (const name of fresh) await pool.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`)
    })

    it('folds the sort keys of records stored before ł, ø and ß were folded, with their counters', async () => {
      const name = testSchemaName('folded')
      fresh.push(name)
      const pool = database.newPool(2)
      const first = await openPostgresStorage({ pool, schema: name })
      for (const [first_name, last_name] of [
        ['Łucja', 'Wałęsa'],
        ['Lucia', 'Straße'],
        ['Mario', 'Rossi'],
      ] as const) {
        await insertBeneficiary(first, newBeneficiary({ first_name, last_name }))
      }
      await first.close()
      // As the keys were before (marks stripped, ł and ß kept), counted again from scratch, and
      // the migration that folds them (and those after it) not applied.
      const counts = `"${name}".beneficiary_counts`
      const recount = `SELECT k.kind, k.status, k.key, k.prefix, count(*)::bigint AS n
        FROM "${name}".beneficiaries b CROSS JOIN LATERAL "${name}".beneficiary_count_keys(
          b.id, b.status, b.created_at, b.updated_at, b.sort_first, b.sort_last) k
        GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4`
      await pool.query(`
        UPDATE "${name}".beneficiaries SET sort_first = 'łucja', sort_last = 'wałesa'
          WHERE first_name = 'Łucja';
        UPDATE "${name}".beneficiaries SET sort_last = 'straße' WHERE last_name = 'Straße';
        DELETE FROM ${counts} WHERE kind <> 'v';
        INSERT INTO ${counts} (kind, status, key, prefix, shard, n, min_id, max_id)
          SELECT kind, status, key, prefix, 0, n, 0, 0 FROM (${recount}) c;
        DROP TABLE "${name}".bulk_loads;
        DROP TABLE "${name}".access_log, "${name}".access_log_records;
        DROP INDEX "${name}".beneficiary_history_at;
        DROP FUNCTION "${name}".beneficiary_history_events() CASCADE;
        DROP TABLE "${name}".beneficiary_events, "${name}".beneficiary_event_purge;
        DROP TABLE "${name}".webhook_endpoints;
        DROP FUNCTION "${name}".match_phone(text) CASCADE;
        DROP INDEX "${name}".beneficiaries_match_email, "${name}".beneficiaries_match_birth,
          "${name}".beneficiaries_match_name;
        DROP TABLE "${name}".import_job_outcomes, "${name}".import_jobs;
        DELETE FROM "${name}".kysely_migration WHERE name >= '0002_name_keys_folded';`)

      const storage = await openPostgresStorage({ pool, schema: name })
      try {
        assert.deepEqual(storage.migrationsApplied, [
          '0002_name_keys_folded',
          '0003_bulk_loads',
          '0004_events',
          '0005_access_log',
          '0006_match_keys',
          '0007_bulk_jobs',
          '0008_webhooks',
        ])
        const ids = async (query: Parameters<typeof listQuery>[0]) =>
          (await storage.beneficiaries.list(listQuery(query))).items.map((item) => item.id)
        const [lucja, lucia, mario] = await ids({ sort: 'id' })
        assert.deepEqual(await ids({ search: ['lucja', 'walesa'] }), [lucja])
        assert.deepEqual(await ids({ search: ['strasse'] }), [lucia])
        assert.deepEqual(await ids({ search: ['luc'] }), [lucja, lucia])
        assert.deepEqual(await ids({ sort: 'first_name' }), [lucia, lucja, mario])
        assert.deepEqual(await ids({ sort: 'last_name' }), [mario, lucia, lucja])
        const kept = await pool.query(`SELECT kind, status, key, prefix, sum(n)::bigint AS n
          FROM ${counts} WHERE kind <> 'v' GROUP BY 1, 2, 3, 4 HAVING sum(n) <> 0
          ORDER BY 1, 2, 3, 4`)
        assert.deepEqual(kept.rows, (await pool.query(recount)).rows)
      } finally {
        await storage.close()
      }
    })

    it('brings up two instances at once on an empty database: one schema, one signing key (D3, D30)', async () => {
      const name = testSchemaName('twins')
      fresh.push(name)
      const [first, second] = await Promise.all([
        openPostgresStorage({ pool: database.newPool(2), schema: name }),
        openPostgresStorage({ pool: database.newPool(2), schema: name }),
      ])
      try {
        assert.deepEqual(
          [...first.migrationsApplied, ...second.migrationsApplied],
          [
            '0001_core_schema',
            '0002_name_keys_folded',
            '0003_bulk_loads',
            '0004_events',
            '0005_access_log',
            '0006_match_keys',
            '0007_bulk_jobs',
            '0008_webhooks',
          ],
        )
        const clock = new FakeClock(T0)
        const [a, b] = await Promise.all([
          loadSigningKeys(first.signingKeys, clock),
          loadSigningKeys(second.signingKeys, clock),
        ])
        assert.deepEqual(a, b)
        assert.equal(a.length, 1)
        const keys = await database
          .pool()
          .query(`SELECT count(*)::int AS n FROM "${name}".signing_keys`)
        assert.equal(keys.rows[0].n, 1)
        const migrations = await database
          .pool()
          .query(`SELECT name FROM "${name}".kysely_migration`)
        assert.deepEqual(migrations.rows, [
          { name: '0001_core_schema' },
          { name: '0002_name_keys_folded' },
          { name: '0003_bulk_loads' },
          { name: '0004_events' },
          { name: '0005_access_log' },
          { name: '0006_match_keys' },
          { name: '0007_bulk_jobs' },
          { name: '0008_webhooks' },
        ])
      } finally {
        await Promise.all([first.close(), second.close()])
      }
    })

    it('creates one record for ten concurrent creates with one key across two pools (D22, D30)', async () => {
      const pool = database.pool()
      await pool.query(TABLES.map((table) => `DELETE FROM "${schema}".${table};`).join('\n'))
      const storages = await Promise.all([
        openPostgresStorage({ pool: database.newPool(5), schema, migrate: false }),
        openPostgresStorage({ pool: database.newPool(5), schema, migrate: false }),
      ])
      try {
        const input = newBeneficiary()
        const outcomes = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            storages[i % 2]!.beneficiaries.create(input, createdEntry(input), claim()),
          ),
        )
        const created = outcomes.filter((outcome) => outcome.kind === 'created')
        assert.equal(created.length, 1)
        const id = created[0]!.kind === 'created' ? created[0]!.record.id : 0
        for (const outcome of outcomes) {
          if (outcome.kind === 'claimed') assert.equal(outcome.beneficiaryId, id)
        }
        assert.equal((await storages[0]!.beneficiaries.list(listQuery())).total, 1)
        const rows = await pool.query(`SELECT count(*)::int AS n FROM "${schema}".beneficiaries`)
        assert.equal(rows.rows[0].n, 1)
      } finally {
        await Promise.all(storages.map((storage) => storage.close()))
      }
    })

    it('keeps a search total exact across writes by another instance (D16, D30)', async () => {
      const pool = database.pool()
      await pool.query(TABLES.map((table) => `DELETE FROM "${schema}".${table};`).join('\n'))
      const reader = await openPostgresStorage({ pool, schema, migrate: false })
      const writer = await openPostgresStorage({
        pool: database.newPool(2),
        schema,
        migrate: false,
      })
      try {
        const search = ['ros']
        await insertBeneficiary(writer)
        assert.equal((await reader.beneficiaries.list(listQuery({ search }))).total, 1)
        assert.equal((await reader.beneficiaries.list(listQuery({ search }))).total, 1)
        const second = await insertBeneficiary(writer)
        assert.equal((await reader.beneficiaries.list(listQuery({ search }))).total, 2)
        const renamed = nextVersion(second, { last_name: 'Verdi' }, T0 + 1000)
        await writer.beneficiaries.update(second, renamed, historyEntry('updated', T0 + 1000))
        assert.equal((await reader.beneficiaries.list(listQuery({ search }))).total, 1)
        assert.equal((await reader.beneficiaries.list(listQuery({ search: ['verdi'] }))).total, 1)
      } finally {
        await Promise.all([reader.close(), writer.close()])
      }
    })

    it('counts a search once for concurrent lists with the same filters, then again after a write', async () => {
      const pool = database.pool()
      await pool.query(TABLES.map((table) => `DELETE FROM "${schema}".${table};`).join('\n'))
      const recording = new RecordingPool(pool)
      const storage = await openPostgresStorage({ pool: recording, schema, migrate: false })
      try {
        await insertBeneficiary(storage)
        const query = listQuery({ search: ['ros'] })
        const counted = () =>
          recording.statements.filter((statement) => /AS unfiltered/.test(statement.text)).length
        const pages = await Promise.all(
          Array.from({ length: 20 }, () => storage.beneficiaries.list(query)),
        )
        assert.ok(pages.every((page) => page.total === 1))
        assert.equal(counted(), 1)
        await insertBeneficiary(storage)
        recording.clear()
        const again = await Promise.all(
          Array.from({ length: 20 }, () => storage.beneficiaries.list(query)),
        )
        assert.ok(again.every((page) => page.total === 2))
        // One list passes the old version and recounts; the others wait for it, and pass the new.
        const passed = new Map<string, number>()
        for (const { values } of recording.statements) {
          const key = JSON.stringify(values)
          passed.set(key, (passed.get(key) ?? 0) + 1)
        }
        assert.deepEqual(
          [...passed.values()].sort((a, b) => a - b),
          [1, 19],
        )
      } finally {
        await storage.close()
      }
    })

    it('answers StorageUnavailableError when no connection frees up in time, and never hangs', async () => {
      const storage = await openPostgresStorage({
        connectionString: TEST_DATABASE_URL,
        schema,
        migrate: false,
        poolSize: 1,
        connectionTimeoutMs: 200,
      })
      const held = await storage.pool.connect()
      try {
        const started = performance.now()
        await assert.rejects(storage.beneficiaries.get(1), (error) => {
          assert.ok(error instanceof StorageUnavailableError)
          assert.equal(error.reason, 'busy')
          return true
        })
        assert.ok(performance.now() - started < 2000)
      } finally {
        held.release()
        await storage.close()
      }
    })

    it('answers StorageUnavailableError when a statement outlasts statement_timeout', async () => {
      const storage = await openPostgresStorage({
        connectionString: TEST_DATABASE_URL,
        schema,
        migrate: false,
        statementTimeoutMs: 100,
      })
      const locker = await database.pool().connect()
      try {
        const record = await insertBeneficiary(storage)
        await locker.query('BEGIN')
        await locker.query(`SELECT 1 FROM "${schema}".beneficiaries WHERE id = $1 FOR UPDATE`, [
          record.id,
        ])
        const next = nextVersion(record, { first_name: 'Luigi' }, T0 + 1000)
        await assert.rejects(
          storage.beneficiaries.update(record, next, historyEntry('updated', T0 + 1000)),
          (error) => error instanceof StorageUnavailableError && error.reason === 'busy',
        )
      } finally {
        await locker.query('ROLLBACK')
        locker.release()
        await storage.close()
      }
    })

    it('answers StorageUnavailableError when the server cannot be reached', async () => {
      await assert.rejects(
        openPostgresStorage({ connectionString: 'postgres://postgres@127.0.0.1:1/test', schema }),
        (error) => error instanceof StorageUnavailableError && error.reason === 'cannot_open',
      )
    })

    it('answers StorageUnavailableError, and never hangs, when the server accepts but never answers', async () => {
      const sockets = new Set<Socket>()
      const silent = createServer((socket) => void sockets.add(socket))
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
      const { port } = silent.address() as AddressInfo
      try {
        const started = performance.now()
        await assert.rejects(
          openPostgresStorage({
            connectionString: `postgres://postgres@127.0.0.1:${port}/test`,
            schema,
            connectionTimeoutMs: 300,
          }),
          StorageUnavailableError,
        )
        assert.ok(performance.now() - started < 3000)
      } finally {
        for (const socket of sockets) socket.destroy()
        await new Promise((resolve) => silent.close(resolve))
      }
    })

    it('refuses a schema that is not migrated when told not to migrate', async () => {
      await assert.rejects(
        openPostgresStorage({
          pool: database.pool(),
          schema: testSchemaName('none'),
          migrate: false,
        }),
        TypeError,
      )
    })

    it('refuses options that are not one of a connection string or a pool', async () => {
      await assert.rejects(openPostgresStorage({}), TypeError)
      await assert.rejects(
        openPostgresStorage({ connectionString: TEST_DATABASE_URL, pool: database.pool() }),
        TypeError,
      )
      await assert.rejects(
        openPostgresStorage({ pool: database.pool(), schema: 'Bad-Name' }),
        TypeError,
      )
    })

    it('rejects every call, ping included, once closed; leaves a pool passed in open', async () => {
      const pool = database.pool()
      const storage = await openPostgresStorage({ pool, schema, migrate: false })
      await storage.close()
      await storage.close()
      const closed = (error: unknown) => error instanceof Error && !isDomainError(error)
      await assert.rejects(storage.ping(), closed)
      await assert.rejects(storage.beneficiaries.get(1), closed)
      await assert.rejects(storage.beneficiaries.list(listQuery()), closed)
      await assert.rejects(storage.sessions.isTokenActive('session-1', 'jti-1', 'client-1'), closed)
      await assert.rejects(storage.signingKeys.list(), closed)
      assert.equal((await pool.query('SELECT 1 AS one')).rows[0].one, 1)
    })

    it('accepts a pg.Pool as it comes, typed by the slice the adapter uses', async () => {
      const pool: pg.Pool = database.pool()
      const storage = await openPostgresStorage({ pool, schema, migrate: false })
      await storage.ping()
      await storage.close()
    })
  })
})
