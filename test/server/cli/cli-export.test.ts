import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { MemoryStorage } from '../../../adapters/memory/index.js'
import { openPostgresStorage } from '../../../adapters/postgres/index.js'
import { openSqliteStorage } from '../../../adapters/sqlite/index.js'
import { WRITABLE_FIELDS, type BeneficiaryRecord } from '../../../core/beneficiary.js'
import type { Storage } from '../../../core/ports/storage.js'
import { EXPORT_HELP, IMPORT_HELP } from '../../../server/cli/bulk-help.js'
import { cli } from '../../support/cli-in-process.js'
import {
  createTestDatabase,
  postgresSkip,
  POSTGRES_URL,
  type TestDatabase,
} from '../../support/postgres-database.js'
import { testSchemaName } from '../../support/postgres.js'
import { MARIO } from '../server-fixtures.js'

const dir = mkdtempSync(join(tmpdir(), 'cli-export-'))
after(() => rmSync(dir, { recursive: true, force: true }))

/** The writable fields of each exported line (detail shape), sorted: what an import must keep. */
function writable(ndjson: string): string[] {
  return ndjson
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const detail = JSON.parse(line) as Record<string, unknown>
      return JSON.stringify(WRITABLE_FIELDS.map((field) => [field, detail[field]]))
    })
    .sort()
}

/** Export of `db` to a file, as text. */
async function exported(where: string[], format = 'ndjson', extra: string[] = []): Promise<string> {
  const out = join(dir, `${Math.random().toString(36).slice(2)}.${format}`)
  const run = await cli(['export', ...where, '--format', format, '--out', out, ...extra])
  assert.equal(run.status, 0, run.err)
  return readFileSync(out, 'utf8')
}

/** Seeds `source`, exports it in both formats, imports each into an empty database, compares. */
async function roundTrip(source: string[], empty: (name: string) => Promise<string[]>) {
  const seeded = await cli(['seed', '--count', '1200', ...source])
  assert.equal(seeded.status, 0, seeded.err)
  const original = await exported(source)
  assert.equal(writable(original).length, 1200)
  for (const format of ['ndjson', 'csv']) {
    const file = join(dir, `round-trip.${Math.random().toString(36).slice(2)}.${format}`)
    const run = await cli(['export', ...source, '--format', format, '--out', file])
    assert.equal(run.status, 0, run.err)
    const target = await empty(format)
    const taken = await cli([
      'import',
      '--file',
      file,
      '--ignore-assigned',
      '--report',
      join(dir, 'r.ndjson'),
      ...target,
    ])
    assert.equal(taken.status, 0, taken.err)
    const summary = JSON.parse(taken.out) as Record<string, number>
    assert.equal(
      summary['created'],
      1200,
      readFileSync(join(dir, 'r.ndjson'), 'utf8').slice(0, 2000),
    )
    assert.deepEqual(writable(await exported(target)), writable(original), format)
  }
}

/** Starts a snapshot, changes the storage meanwhile, and checks the snapshot did not see it. */
async function snapshotIsolation(storage: Storage): Promise<void> {
  const now = Date.UTC(2026, 0, 1)
  const entry = (action: 'created' | 'deleted') => ({
    at: now,
    action,
    client_id: 'test',
    request_id: 'test',
    changes: [],
  })
  const ids: number[] = []
  for (let i = 0; i < 25; i++) {
    const outcome = await storage.beneficiaries.create(
      {
        ...MARIO,
        fiscal_code: null,
        email: `s${i}@example.org`,
        status: 'pending',
        created_at: now,
        updated_at: now,
      },
      entry('created'),
    )
    assert.equal(outcome.kind, 'created')
    if (outcome.kind === 'created') ids.push(outcome.record.id)
  }
  const pages = storage.bulk!.snapshot({}, 10)[Symbol.asyncIterator]()
  const seen: BeneficiaryRecord[] = [...((await pages.next()).value as BeneficiaryRecord[])]
  // After the first page: a record deleted, one changed and one added, all committed.
  assert.equal(await storage.beneficiaries.remove(ids[20]!, undefined, entry('deleted')), 'done')
  const later = (await storage.beneficiaries.get(ids[21]!))!
  assert.equal(
    await storage.beneficiaries.update(
      later,
      { ...later, first_name: 'Changed', version: later.version + 1 },
      { ...entry('created'), action: 'updated' },
    ),
    'done',
  )
  await storage.beneficiaries.create(
    {
      ...MARIO,
      fiscal_code: null,
      email: 'new@example.org',
      status: 'pending',
      created_at: now,
      updated_at: now,
    },
    entry('created'),
  )
  for (;;) {
    const next = await pages.next()
    if (next.done === true) break
    seen.push(...next.value)
  }
  assert.deepEqual(
    seen.map((record) => record.id),
    ids,
  )
  assert.equal(seen[21]!.first_name, MARIO.first_name)
}

describe('beneficiaries export (D39)', () => {
  it('every option of import and export is in docs/configuration.md', () => {
    const page = readFileSync(new URL('../../../../docs/configuration.md', import.meta.url), 'utf8')
    for (const help of [IMPORT_HELP, EXPORT_HELP]) {
      for (const [, option] of help.matchAll(/(?<![\w-])--([a-z][a-z-]*)/g)) {
        if (option === 'help') continue
        assert.ok(page.includes(`--${option}`), `docs/configuration.md does not name --${option}`)
      }
    }
  })

  it('an export imported into an empty SQLite database gives the same records', async () => {
    await roundTrip(['--db', join(dir, 'source.sqlite')], async (name) => [
      '--db',
      join(dir, `copy-${name}.sqlite`),
    ])
  })

  it('filters as the list does, and refuses a bad filter naming it', async () => {
    const db = ['--db', join(dir, 'source.sqlite')]
    const active = writable(await exported(db, 'ndjson', ['--status', 'active']))
    const all = await exported(db)
    const expected = all
      .split('\n')
      .filter((line) => line !== '' && (JSON.parse(line) as { status: string }).status === 'active')
    assert.equal(active.length, expected.length)
    assert.ok(active.length > 0)
    const bad = await cli(['export', ...db, '--status', 'asleep'])
    assert.equal(bad.status, 2)
    assert.match(bad.err, /--status/)
  })

  it('reads one snapshot on SQLite and memory storage', async () => {
    const sqlite = await openSqliteStorage({ path: join(dir, 'snapshot.sqlite') })
    try {
      await snapshotIsolation(sqlite)
    } finally {
      await sqlite.close()
    }
    const memory = new MemoryStorage()
    await snapshotIsolation(memory)
  })
})

describe('beneficiaries export on PostgreSQL (D39)', async () => {
  const skip = await postgresSkip()
  const databases: TestDatabase[] = []
  after(async () => {
    await Promise.all(databases.map((database) => database.drop()))
  })

  it('reads one snapshot (REPEATABLE READ)', { skip }, async () => {
    const schema = testSchemaName('bulk_snapshot')
    const storage = await openPostgresStorage({ connectionString: POSTGRES_URL, schema })
    try {
      await snapshotIsolation(storage)
    } finally {
      await storage.pool.query({ text: `DROP SCHEMA "${schema}" CASCADE` })
      await storage.close()
    }
  })

  it('an export imported into an empty database gives the same records', { skip }, async () => {
    const source = await createTestDatabase('bulk_source')
    databases.push(source)
    await roundTrip(['--database-url', source.url], async () => {
      const copy = await createTestDatabase('bulk_copy')
      databases.push(copy)
      return ['--database-url', copy.url]
    })
  })
})
