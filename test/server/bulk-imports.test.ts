import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { MemoryStorage } from '../../adapters/memory/index.js'
import { openPostgresStorage } from '../../adapters/postgres/index.js'
import { openSqliteStorage } from '../../adapters/sqlite/index.js'
import { createBeneficiaryService, FakeClock, StorageUnavailableError } from '../../core/index.js'
import type { ImportJobStore } from '../../core/ports/import-job-store.js'
import type { Storage } from '../../core/ports/storage.js'
import { ImportWorker } from '../../server/bulk/import-worker.js'
import { createHandler, type ApiHandler } from '../../server/handler.js'
import { postgresSkip, POSTGRES_URL } from '../support/postgres-database.js'
import { testSchemaName } from '../support/postgres.js'
import { login, MARIO, send } from './server-fixtures.js'

const dir = mkdtempSync(join(tmpdir(), 'bulk-imports-'))
after(() => rmSync(dir, { recursive: true, force: true }))

const ROWS = 120
/** Every tenth row is refused: an e-mail without `@`, and row 60 repeats row 1's fiscal code. */
const FILE = Array.from({ length: ROWS }, (_, i) => {
  const row = i + 1
  if (row === 1) return JSON.stringify(MARIO)
  if (row === 60) return JSON.stringify({ ...MARIO, email: 'again@example.org' })
  return JSON.stringify({
    first_name: 'Job',
    last_name: `Row ${row}`,
    email: row % 10 === 0 ? 'not-an-address' : `job${row}@example.org`,
  })
}).join('\n')
const REFUSED = ROWS / 10
const VALID = ROWS - REFUSED

interface Job {
  id: string
  state: string
  rows: number
  created: number
  existing: number
  refused: number
  report: { data: { row: number; outcome: string }[]; meta: { total_count: number } }
}

async function world(storage: Storage, clock: FakeClock, maxImportRows?: number) {
  const service = await createBeneficiaryService({
    storage,
    clock,
    limits: { auth: 100, bulk: 2 },
    ...(maxImportRows !== undefined && { maxImportRows }),
  })
  const client = await service.clients.create({ name: 'roster', scopes: ['read', 'write'] })
  const handler = createHandler(service)
  const { access } = await login(handler, client)
  return { service, handler, access }
}

async function start(
  handler: ApiHandler,
  token: string,
  file = FILE,
  type = 'application/x-ndjson',
) {
  return send(handler, 'POST', '/v3/imports', {
    token,
    raw: new TextEncoder().encode(file),
    contentType: type,
  })
}

async function job(handler: ApiHandler, token: string, id: string, query = 'per_page=100') {
  const answer = await send(handler, 'GET', `/v3/imports/${id}`, { token, query })
  assert.equal(answer.status, 200, answer.body)
  return answer.json as unknown as Job
}

async function count(storage: Storage): Promise<number> {
  const page = await storage.beneficiaries.list({
    offset: 0,
    limit: 1,
    sort: 'id',
    descending: false,
  })
  return page.total
}

/** The contract of POST /v3/imports on one storage; `reopen` gives the same database anew. */
function importJobs(
  name: string,
  openNamed: (db: string) => Promise<Storage>,
  skip: () => string | false,
) {
  describe(`import jobs on ${name} (D39)`, () => {
    it(
      'answers 202 with the job, runs it, and reports every row by page',
      { skip: skip() },
      async () => {
        const storage = await openNamed('runs')
        try {
          const clock = new FakeClock(Date.UTC(2026, 5, 1))
          const { handler, access } = await world(storage, clock)
          const started = await start(handler, access)
          assert.equal(started.status, 202, started.body)
          const id = String(started.json!['id'])
          assert.equal(started.headers['location'], `/v3/imports/${id}`)
          assert.equal(started.json!['state'], 'queued')
          assert.equal((await job(handler, access, id)).rows, 0)
          const worker = new ImportWorker({ storage, clock, batchSize: 25 })
          assert.equal(await worker.runOnce(), true)
          assert.equal(await worker.runOnce(), false)
          const ended = await job(handler, access, id)
          assert.deepEqual(
            [ended.state, ended.rows, ended.created, ended.existing, ended.refused],
            ['done', ROWS, VALID, 0, REFUSED],
          )
          assert.equal(ended.report.meta.total_count, ROWS)
          assert.deepEqual(
            ended.report.data.map((outcome) => outcome.row),
            Array.from({ length: 100 }, (_, i) => i + 1),
          )
          assert.equal(ended.report.data[59]!.outcome, 'refused')
          const last = await job(handler, access, id, 'page=2&per_page=100')
          assert.equal(last.report.data.length, ROWS - 100)
          assert.equal(await count(storage), VALID)
        } finally {
          await storage.close()
        }
      },
    )

    it(
      'refuses JSON, too many rows and another client, and limits jobs by the bulk class',
      { skip: skip() },
      async () => {
        const storage = await openNamed('refuses')
        try {
          const clock = new FakeClock(Date.UTC(2026, 5, 1))
          const { service, handler, access } = await world(storage, clock, 50)
          const json = await start(handler, access, '{}', 'application/json')
          assert.equal(json.status, 415)
          const many = await start(handler, access)
          assert.equal(many.status, 422)
          assert.deepEqual(many.json!['details'], [
            { field: 'body', message: 'must have at most 50 rows' },
          ])
          const small = await start(
            handler,
            access,
            'first_name;last_name;email\nA;B;a@example.org\n',
            'text/csv',
          )
          assert.equal(small.status, 202)
          assert.equal((await start(handler, access, '')).status, 429)
          const other = await service.clients.create({ name: 'other', scopes: ['read', 'write'] })
          const { access: theirs } = await login(handler, other)
          const id = String(small.json!['id'])
          assert.equal(
            (await send(handler, 'GET', `/v3/imports/${id}`, { token: theirs })).status,
            404,
          )
          assert.equal(
            (await send(handler, 'GET', '/v3/imports/imp_missing', { token: access })).status,
            404,
          )
        } finally {
          await storage.close()
        }
      },
    )

    it(
      'resumes a job whose instance stopped midway, creating no row twice',
      { skip: skip() },
      async () => {
        const clock = new FakeClock(Date.UTC(2026, 5, 1))
        const first = await openNamed('resumes')
        let id: string
        try {
          const { handler, access } = await world(first, clock)
          id = String((await start(handler, access)).json!['id'])
          // An instance that stops after its second batch: its lease is left to run out.
          let batches = 0
          const imports = first.imports!
          const dying: ImportJobStore = {
            create: (job) => imports.create(job),
            get: (job) => imports.get(job),
            outcomes: (job, offset, limit) => imports.outcomes(job, offset, limit),
            lease: (owner, now, ms) => imports.lease(owner, now, ms),
            finish: (job, owner, state, error, now) =>
              imports.finish(job, owner, state, error, now),
            progress: async (...args) => {
              // The instance dies: nothing of the job is written after this.
              if (++batches > 2) throw new StorageUnavailableError('cannot_open')
              return imports.progress(...args)
            },
          }
          const stopped: Storage = {
            beneficiaries: first.beneficiaries,
            clients: first.clients,
            sessions: first.sessions,
            signingKeys: first.signingKeys,
            imports: dying,
            ping: () => first.ping(),
            close: () => first.close(),
          }
          const worker = new ImportWorker({
            storage: stopped,
            clock,
            batchSize: 25,
            leaseMs: 30_000,
          })
          await worker.runOnce()
          // While the lease holds, no other instance takes the job.
          const other = new ImportWorker({ storage: first, clock, batchSize: 25 })
          assert.equal(await other.runOnce(), false)
        } finally {
          await first.close()
        }
        clock.advance(31_000)
        const second = await openNamed('resumes')
        try {
          const worker = new ImportWorker({ storage: second, clock, batchSize: 25 })
          assert.equal(await worker.runOnce(), true)
          const ended = await second.imports!.get(id)
          assert.equal(ended?.state, 'done')
          assert.equal(ended?.counts.rows, ROWS)
          assert.equal(ended?.counts.created + ended!.counts.existing, VALID)
          assert.equal((await second.imports!.outcomes(id, 0, 1000)).total, ROWS)
          assert.equal(await count(second), VALID)
        } finally {
          await second.close()
        }
      },
    )

    it('gives a job to one instance of several asking at once', { skip: skip() }, async () => {
      const clock = new FakeClock(Date.UTC(2026, 5, 1))
      const storages = [
        await openNamed('leases'),
        await openNamed('leases'),
        await openNamed('leases'),
      ]
      try {
        const { handler, access } = await world(storages[0]!, clock)
        assert.equal((await start(handler, access)).status, 202)
        const leases = await Promise.all(
          storages.map((storage, i) =>
            storage.imports!.lease(`instance-${i}`, clock.now(), 30_000),
          ),
        )
        assert.equal(leases.filter((lease) => lease !== undefined).length, 1)
      } finally {
        await Promise.all(storages.map((storage) => storage.close()))
      }
    })
  })
}

importJobs(
  'SQLite',
  (db) => openSqliteStorage({ path: join(dir, `${db}.sqlite`) }),
  () => false,
)

const memory = new MemoryStorage()
describe('import jobs on memory storage (D39)', () => {
  it('runs a job to its end', async () => {
    const clock = new FakeClock(Date.UTC(2026, 5, 1))
    const { handler, access } = await world(memory, clock)
    const id = String((await start(handler, access)).json!['id'])
    await new ImportWorker({ storage: memory, clock }).runOnce()
    const ended = await job(handler, access, id)
    assert.deepEqual([ended.state, ended.rows], ['done', ROWS])
  })
})

const pgSkip = await postgresSkip()
const schemas = new Map<string, string>()
importJobs(
  'PostgreSQL',
  (db) => {
    if (!schemas.has(db)) schemas.set(db, testSchemaName(`bulk_imports_${db}`))
    return openPostgresStorage({ connectionString: POSTGRES_URL, schema: schemas.get(db)! })
  },
  () => pgSkip,
)
after(async () => {
  if (pgSkip !== false || schemas.size === 0) return
  const storage = await openPostgresStorage({
    connectionString: POSTGRES_URL,
    schema: [...schemas.values()][0]!,
  })
  for (const schema of schemas.values()) {
    await storage.pool.query({ text: `DROP SCHEMA IF EXISTS "${schema}" CASCADE` })
  }
  await storage.close()
})
