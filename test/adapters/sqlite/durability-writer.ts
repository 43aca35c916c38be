/**
 * Child process of the durability test: creates beneficiaries in a loop through
 * `SqliteStorage` (synchronous=FULL), eight at a time so that they share a group commit, and
 * prints each id on its own line once its create has resolved, i.e. once the write is
 * acknowledged. The parent kills it with SIGKILL. With `thread`, the writes run on the
 * storage's writer thread (`writer: 'thread'`).
 *
 * Usage: node durability-writer.js <database path> [inline|thread]
 */
import { openSqliteStorage } from '../../../adapters/sqlite/index.js'

const path = process.argv[2]
if (path === undefined) throw new TypeError('usage: durability-writer.js <database path>')

const writer = process.argv[3] === 'thread' ? 'thread' : 'inline'
const storage = await openSqliteStorage({ path, writer })
const GROUP = 8
const start = Date.UTC(2024, 0, 1)

async function write(i: number): Promise<void> {
  const at = start + i * 1000
  const record = {
    first_name: `Writer${i}`,
    last_name: i % 2 === 0 ? 'Rossi' : 'Nguyễn',
    email: `writer${i}@example.org`,
    phone: null,
    date_of_birth: null,
    fiscal_code: null,
    address: null,
    metadata: { loop: i },
    status: 'pending' as const,
    created_at: at,
    updated_at: at,
  }
  const entry = {
    at,
    action: 'created' as const,
    client_id: 'writer',
    request_id: `r${i}`,
    changes: [],
  }
  const outcome = await storage.beneficiaries.create(record, entry)
  // Writes to a pipe are synchronous on Linux: the line is out before the next create starts.
  if (outcome.kind === 'created') process.stdout.write(`${outcome.record.id}\n`)
}

for (let i = 0; ; i += GROUP) {
  await Promise.all(Array.from({ length: GROUP }, (_, k) => write(i + k)))
}
