import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import pg from 'pg'
import Database from 'better-sqlite3'
import { cli } from '../support/cli-in-process.js'
import { CLI } from '../support/cli-child.js'
import {
  createTestDatabase,
  postgresSkip,
  type TestDatabase,
} from '../support/postgres-database.js'

const ROWS = 40_000
/** Every hundredth row is refused (an e-mail without `@`). */
const BAD_EVERY = 100
const VALID = ROWS - Math.floor(ROWS / BAD_EVERY)

const dir = mkdtempSync(join(tmpdir(), 'import-crash-'))
after(() => rmSync(dir, { recursive: true, force: true }))

const file = join(dir, 'roster.ndjson')
writeFileSync(
  file,
  Array.from({ length: ROWS }, (_, i) =>
    JSON.stringify({
      first_name: 'Crash',
      last_name: `Row ${i + 1}`,
      email: (i + 1) % BAD_EVERY === 0 ? `row${i + 1}` : `row${i + 1}@example.org`,
    }),
  ).join('\n'),
)

/**
 * Runs `beneficiaries import` in a child process and kills it with SIGKILL once its report has
 * `killAfter` bytes (some batches committed, more in flight), then resolves.
 */
async function importKilled(target: string[], killAfter: number): Promise<void> {
  const report = join(dir, `killed-${Math.random().toString(36).slice(2)}.ndjson`)
  const child = spawn(
    process.execPath,
    [CLI, 'import', '--file', file, '--report', report, ...target],
    {
      stdio: 'ignore',
      env: { PATH: process.env['PATH'] ?? '' },
    },
  )
  const exited = new Promise((resolve) => child.once('exit', resolve))
  for (;;) {
    let size = 0
    try {
      size = statSync(report).size
    } catch {
      // Not created yet.
    }
    if (size >= killAfter) break
    if (child.exitCode !== null) assert.fail('the import ended before it was killed')
    await delay(5)
  }
  child.kill('SIGKILL')
  await exited
  assert.equal(child.signalCode, 'SIGKILL')
}

/** Resumes the import in this process and checks its report. */
async function resume(target: string[]): Promise<void> {
  const report = join(dir, `resumed-${Math.random().toString(36).slice(2)}.ndjson`)
  const run = await cli(['import', '--file', file, '--report', report, ...target])
  assert.equal(run.status, 0, run.err)
  const summary = JSON.parse(run.out) as Record<string, number>
  assert.equal(summary['rows'], ROWS)
  assert.equal(summary['refused'], ROWS - VALID)
  assert.equal(summary['created']! + summary['existing']!, VALID)
  assert.ok(summary['existing']! > 0, 'the killed run committed some rows')
  assert.ok(summary['created']! > 0, 'the killed run left some rows')
  const lines = readFileSync(report, 'utf8').trim().split('\n')
  assert.equal(lines.length, ROWS)
}

describe('an import killed with SIGKILL, then resumed (D39)', () => {
  it('leaves exactly one record per valid row on SQLite', async () => {
    const db = join(dir, 'crash.sqlite')
    const target = ['--db', db]
    await importKilled(target, 400_000)
    await resume(target)
    const sqlite = new Database(db, { readonly: true })
    try {
      const { n, d } = sqlite
        .prepare('SELECT count(*) AS n, count(DISTINCT email) AS d FROM beneficiaries')
        .get() as { n: number; d: number }
      assert.equal(n, VALID)
      assert.equal(d, VALID)
      const history = sqlite.prepare('SELECT count(*) AS n FROM beneficiary_history').get() as {
        n: number
      }
      assert.equal(history.n, VALID)
    } finally {
      sqlite.close()
    }
  })
})

describe('an import killed with SIGKILL, then resumed, on PostgreSQL (D39)', async () => {
  const skip = await postgresSkip()
  let database: TestDatabase | undefined
  after(async () => {
    await database?.drop()
  })

  it('leaves exactly one record per valid row', { skip }, async () => {
    database = await createTestDatabase('import_crash')
    const target = ['--database-url', database.url]
    await importKilled(target, 400_000)
    await resume(target)
    const client = new pg.Client({ connectionString: database.url })
    await client.connect()
    try {
      const result = await client.query(
        'SELECT count(*)::int AS n, count(DISTINCT email)::int AS d, (SELECT count(*)::int FROM beneficiary_history) AS h FROM beneficiaries',
      )
      const row = result.rows[0] as { n: number; d: number; h: number }
      assert.deepEqual(row, { n: VALID, d: VALID, h: VALID })
    } finally {
      await client.end()
    }
  })
})
