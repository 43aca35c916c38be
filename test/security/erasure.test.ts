import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { randomInt } from 'node:crypto'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { after, describe, it } from 'node:test'
import pg from 'pg'
import type { CliIo } from '../../server/cli/cli-io.js'
import { runCli } from '../../server/cli/run-cli.js'
import { call, createClient, login } from '../faults/fault-support.js'
import { ServeChild } from '../faults/serve-child.js'
import { skipOn, TRANSPORTS } from '../support/transports.js'
import { fiscalCode } from '../hostile/codice-fiscale.js'
import {
  createTestDatabase,
  postgresSkip,
  type TestDatabase,
} from '../support/postgres-database.js'

// D27: a DELETE erases the record's personal values. These tests run the service as an operator
// does, put a marker in every field of a record (names, e-mail, phone, fiscal code, address,
// metadata keys and values, the status change's reason), update it, change its status, delete
// it, and then look for the markers in the bytes the database keeps: every file of the SQLite
// data folder and a backup taken after the delete; on PostgreSQL what docs/security-erasure.md
// promises there.

const WAL_DEADLINE_MS = 5_000
const VACUUM_DEADLINE_MS = 20_000

/** A record marked in every personal field, its update and its reason, and the needles. */
interface Marked {
  readonly create: Record<string, unknown>
  readonly update: Record<string, unknown>
  readonly reason: string
  /** Every marked value, as stored (phone compacted, fiscal code upper-cased). */
  readonly needles: readonly string[]
}

function letters(count: number): string {
  return Array.from({ length: count }, () => String.fromCharCode(97 + randomInt(26))).join('')
}

function digits(count: number): string {
  return Array.from({ length: count }, () => String(randomInt(10))).join('')
}

function marked(): Marked {
  // Each search word starts with a letter of its own (q, z, x), and no other record's word does,
  // so that FTS5 stores each whole rather than after a prefix it shares with its neighbour.
  const base = letters(10)
  const person = {
    surname: `Zb${base}`,
    name: `Qa${base}`,
    year: 1980 + randomInt(20),
    month: 1 + randomInt(12),
    day: 1 + randomInt(28),
    female: false,
    place: 'H501',
    omocodia: 0,
  }
  const code = fiscalCode(person)
  const phone = `+393${digits(9)}`
  const date = `${person.year}-${String(person.month).padStart(2, '0')}-${String(person.day).padStart(2, '0')}`
  const create = {
    first_name: person.name,
    last_name: person.surname,
    email: `${base}mail@example.org`,
    phone,
    date_of_birth: date,
    fiscal_code: code,
    address: {
      street: `Via ${base}street 1`,
      city: `${base}city`,
      postal_code: `P${base}`,
      country: 'IT',
    },
    metadata: { notes: `${base}notes`, [`${base}key`]: 'x', visits: 3 },
  }
  const update = {
    first_name: `Xc${base}`,
    email: `${base}other@example.org`,
    address: { ...create.address, street: `Via ${base}road 2` },
    metadata: { notes: `${base}notes2`, [`${base}key2`]: true },
  }
  return {
    create,
    update,
    reason: `${base}reason`,
    needles: [base, code, phone],
  }
}

/**
 * Where any needle occurs in `bytes`, ASCII case ignored, encoded as UTF-8, UTF-16LE or
 * UTF-16BE: `needle (encoding)` for each.
 */
function occurrences(bytes: Buffer, needles: readonly string[]): string[] {
  const lower = Buffer.from(bytes)
  for (let i = 0; i < lower.length; i++) {
    const byte = lower[i]!
    if (byte >= 0x41 && byte <= 0x5a) lower[i] = byte + 0x20
  }
  const found: string[] = []
  for (const needle of needles) {
    const text = needle.toLowerCase()
    const utf16be = Buffer.from(text, 'utf16le').swap16()
    for (const [encoding, pattern] of [
      ['utf-8', Buffer.from(text, 'utf8')],
      ['utf-16le', Buffer.from(text, 'utf16le')],
      ['utf-16be', utf16be],
    ] as const) {
      if (lower.includes(pattern)) found.push(`${needle} (${encoding})`)
    }
  }
  return found
}

/** Every needle found in every file under `folder`: `file: needle (encoding)`. */
function scanFolder(folder: string, needles: readonly string[]): string[] {
  const found: string[] = []
  for (const entry of readdirSync(folder, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue
    const path = join(entry.parentPath, entry.name)
    for (const hit of occurrences(readFileSync(path), needles)) found.push(`${path}: ${hit}`)
  }
  return found
}

/** Resolves once `test` holds, polling; rejects past `deadlineMs`. */
async function until(test: () => boolean, deadlineMs: number, what: string): Promise<void> {
  const end = performance.now() + deadlineMs
  while (!test()) {
    if (performance.now() > end) throw new Error(`${what}: not within ${deadlineMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size
  } catch {
    return 0
  }
}

/**
 * Creates the marked record (and a bystander that stays), updates it, changes its status with
 * the marked reason, then deletes it, through the API of the server at `base`. `beforeDelete`
 * runs while the record still lives.
 */
async function liveAndDelete(
  base: string,
  token: string,
  record: Marked,
  beforeDelete: () => Promise<void> | void,
): Promise<void> {
  const bystander = await call(base, 'POST', '/v3/beneficiaries', {
    token,
    body: { first_name: 'Mario', last_name: 'Rossi', email: 'mario.rossi@example.org' },
  })
  assert.equal(bystander.status, 201, bystander.body)
  const created = await call(base, 'POST', '/v3/beneficiaries', { token, body: record.create })
  assert.equal(created.status, 201, created.body)
  const path = `/v3/beneficiaries/${String(created.json!['id'])}`
  const updated = await call(base, 'PUT', path, { token, body: record.update })
  assert.equal(updated.status, 200, updated.body)
  const status = await call(base, 'POST', `${path}/status`, {
    token,
    body: { status: 'inactive', reason: record.reason },
  })
  assert.equal(status.status, 200, status.body)
  const history = await call(base, 'GET', `${path}/history`, { token })
  assert.ok(history.body.includes(record.reason), 'the history holds the reason while it lives')
  await beforeDelete()
  const deleted = await call(base, 'DELETE', path, { token })
  assert.equal(deleted.status, 204, deleted.body)
  assert.equal((await call(base, 'GET', `${path}/history`, { token })).status, 404)
}

function cliIo(): { io: CliIo; out: string[]; err: string[] } {
  const out: string[] = []
  const err: string[] = []
  const io: CliIo = {
    env: {},
    out: (text) => void out.push(text),
    err: (text) => void err.push(text),
    signals: { once: () => undefined },
  }
  return { io, out, err }
}

describe('erasure on SQLite (D27), with real processes', () => {
  const directories: string[] = []
  const servers: ServeChild[] = []
  after(async () => {
    for (const server of servers) await server.kill()
    for (const directory of directories) rmSync(directory, { recursive: true, force: true })
  })

  for (const transport of TRANSPORTS) {
    const title = `leaves no value of a deleted beneficiary in any file of the data folder, WAL and backup included (${transport})`
    it(title, { skip: skipOn(transport) }, async () => {
      const directory = mkdtempSync(join(tmpdir(), 'erasure-'))
      directories.push(directory)
      const folder = join(directory, 'data')
      mkdirSync(folder, { mode: 0o700 })
      const db = join(folder, 'beneficiaries.sqlite')
      const client = await createClient(db)
      const server = await ServeChild.start(db, { TRANSPORT: transport })
      servers.push(server)
      const token = await login(server.url, client)
      const record = marked()

      await liveAndDelete(server.url, token, record, () => {
        // The scan sees the values while the record lives: it would see what a delete left.
        assert.notDeepEqual(scanFolder(folder, record.needles), [])
      })

      // The WAL's earlier frames held the record: emptied within a bounded time.
      await until(() => sizeOf(`${db}-wal`) === 0, WAL_DEADLINE_MS, 'the WAL emptied')
      const backup = join(folder, 'after-delete.sqlite')
      const { io, err } = cliIo()
      const status = await runCli(['backup', '--db', db, '--to', backup], io)
      assert.equal(status, 0, err.join('\n'))
      assert.deepEqual(scanFolder(folder, record.needles), [], 'while the server runs')

      const exit = await server.kill('SIGTERM')
      assert.equal(exit.code, 0)
      assert.deepEqual(scanFolder(folder, record.needles), [], 'once it has stopped')
      assert.deepEqual(server.errors, [])
    })
  }
})

describe('erasure on PostgreSQL (D27), with real processes', async () => {
  const skip = await postgresSkip()
  let database: TestDatabase | undefined
  let server: ServeChild | undefined
  after(async () => {
    await server?.kill()
    await database?.drop()
  })

  it(
    'leaves no value of a deleted beneficiary in any row, in a dump taken after the delete, nor, once vacuumed in full, in any page of the database',
    { skip },
    async () => {
      database = await createTestDatabase('erasure')
      const client = await createClient(database.url)
      server = await ServeChild.start(database.url)
      const token = await login(server.url, client)
      const record = marked()
      await liveAndDelete(server.url, token, record, () => {})
      assert.equal((await server.kill('SIGTERM')).code, 0)

      const db = new pg.Client({ connectionString: database.url })
      await db.connect()
      try {
        // What SQL can read, every table of every schema of the service: nothing.
        assert.deepEqual(await rowsHolding(db, record.needles), [])
        // A logical backup taken after the delete: nothing.
        const { stdout } = await promisify(execFile)('pg_dump', ['--dbname', database.url], {
          maxBuffer: 64 * 1024 * 1024,
        })
        assert.deepEqual(occurrences(Buffer.from(stdout), record.needles), [], 'pg_dump')
        // The bytes of dead tuples stay in the pages until written over: VACUUM FULL rewrites
        // them, as the docs advise, and ANALYZE renews the statistics' samples. It keeps a
        // tuple that a transaction older than the delete could still see (another test file's,
        // while its connection starts): tried again until none is left.
        const deadline = performance.now() + VACUUM_DEADLINE_MS
        let left: string[]
        do {
          await db.query('VACUUM FULL')
          left = await pagesHolding(db, record.needles)
          if (left.length > 0) await new Promise((resolve) => setTimeout(resolve, 200))
        } while (left.length > 0 && performance.now() < deadline)
        assert.deepEqual(left, [])
        await db.query('ANALYZE')
        const statistics = await db.query<{ row: string }>(
          'SELECT s::text AS row FROM pg_statistic s',
        )
        const sampled = statistics.rows.flatMap(({ row }) =>
          occurrences(Buffer.from(row), record.needles),
        )
        assert.deepEqual(sampled, [], 'pg_statistic')
      } finally {
        await db.end()
      }
    },
  )
})

/** Every row of every table outside the catalogs that holds a needle: `table: needle`. */
async function rowsHolding(db: pg.Client, needles: readonly string[]): Promise<string[]> {
  const tables = await db.query<{ name: string }>(`
    SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables
    WHERE schemaname NOT IN ('pg_catalog', 'information_schema')`)
  assert.ok(tables.rows.length > 0)
  const found: string[] = []
  for (const { name } of tables.rows) {
    const rows = await db.query<{ row: string }>(`SELECT t::text AS row FROM ${name} t`)
    for (const { row } of rows.rows) {
      for (const hit of occurrences(Buffer.from(row), needles)) found.push(`${name}: ${hit}`)
    }
  }
  return found
}

/**
 * Every page of every table, index and TOAST relation outside the system catalogs (read with
 * pageinspect's `get_raw_page`) that holds a needle: `relation block: needle`.
 */
async function pagesHolding(db: pg.Client, needles: readonly string[]): Promise<string[]> {
  await db.query('CREATE EXTENSION IF NOT EXISTS pageinspect')
  const relations = await db.query<{ name: string; blocks: number }>(`
    SELECT c.oid::regclass::text AS name,
      (pg_relation_size(c.oid) / current_setting('block_size')::int)::int AS blocks
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE c.relkind IN ('r', 'i', 't', 'm') AND c.relpersistence = 'p'
      AND n.nspname NOT IN ('pg_catalog', 'information_schema')`)
  const found: string[] = []
  for (const { name, blocks } of relations.rows) {
    for (let block = 0; block < blocks; block++) {
      const page = await db.query<{ bytes: Buffer }>('SELECT get_raw_page($1, $2) AS bytes', [
        name,
        block,
      ])
      for (const hit of occurrences(page.rows[0]!.bytes, needles)) {
        found.push(`${name} ${block}: ${hit}`)
      }
    }
  }
  return found
}
