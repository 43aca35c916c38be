/**
 * Child process of the concurrency test. Opens the database, prints `open`, waits for `go` on
 * stdin, checks that another connection holds the write lock (prints the probe's error code,
 * `SQLITE_BUSY`, or `free`), then creates one beneficiary and prints `created <id>`, or
 * `failed <code>` when the write fails.
 *
 * Usage: node contended-writer.js <database path> <busy timeout in ms>
 */
import Database from 'better-sqlite3'
import { createInterface } from 'node:readline'
import { openSqliteStorage } from '../../../adapters/sqlite/index.js'

const [path, timeout] = process.argv.slice(2)
if (path === undefined || timeout === undefined) {
  throw new TypeError('usage: contended-writer.js <database path> <busy timeout in ms>')
}

const storage = await openSqliteStorage({ path, busyTimeoutMs: Number(timeout) })
process.stdout.write('open\n')
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]()
await lines.next()

const probe = new Database(path, { timeout: 0 })
try {
  probe.exec('BEGIN IMMEDIATE')
  probe.exec('ROLLBACK')
  process.stdout.write('free\n')
} catch (error) {
  process.stdout.write(`${(error as { code?: string }).code ?? 'error'}\n`)
} finally {
  probe.close()
}

const at = Date.UTC(2024, 0, 1)
const record = {
  first_name: 'Second',
  last_name: 'Writer',
  email: 'second@example.org',
  phone: null,
  date_of_birth: null,
  fiscal_code: null,
  address: null,
  metadata: {},
  status: 'pending' as const,
  created_at: at,
  updated_at: at,
}
try {
  const outcome = await storage.beneficiaries.create(record, {
    at,
    action: 'created',
    client_id: 'second',
    request_id: 'second',
    changes: [],
  })
  process.stdout.write(outcome.kind === 'created' ? `created ${outcome.record.id}\n` : 'claimed\n')
} catch (error) {
  process.stdout.write(`failed ${(error as { code?: string }).code ?? 'error'}\n`)
}
await storage.close()
process.exit(0)
