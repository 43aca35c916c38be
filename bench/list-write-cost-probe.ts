/**
 * What the list indexes and tables cost the writes: CPU microseconds per create and per update
 * (a new phone number, as the benchmark's updates), through the storage port with its group
 * commit (25 writes in flight), on a copy of a seeded database. Run it on two copies that differ
 * only in the structure under test, e.g. the index definitions before and after a migration.
 *
 * node dist/bench/list-write-cost-probe.js --db <copy.db> [--writes 5000] [--old-indexes]
 *
 * `--old-indexes` first puts back the list indexes of migrations 0001–0003 (the file is
 * changed: pass a copy), to measure the writes without migration 0004's covering columns.
 */
import { parseArgs } from 'node:util'
import { openSqliteStorage } from '../adapters/sqlite/index.js'
import type { BeneficiaryRecord, HistoryEntry } from '../core/beneficiary.js'
import type { NewBeneficiary } from '../core/ports/beneficiary-store.js'

const { values: options } = parseArgs({
  options: {
    db: { type: 'string' },
    writes: { type: 'string', default: '5000' },
    'old-indexes': { type: 'boolean', default: false },
  },
})
if (options.db === undefined) throw new Error('--db <path> is required')
const writes = Number(options.writes)
const IN_FLIGHT = 25

const storage = await openSqliteStorage({ path: options.db, checkpoint: 'background' })
const db = storage.database
if (options['old-indexes']) {
  const old: readonly [string, string][] = [
    ['beneficiaries_status', 'status'],
    ['beneficiaries_created_at', 'created_at'],
    ['beneficiaries_updated_at', 'updated_at'],
    ['beneficiaries_last_name', 'sort_last, last_name'],
    ['beneficiaries_first_name', 'sort_first, first_name'],
  ]
  for (const [name, columns] of old) {
    db.exec(`DROP INDEX ${name}; CREATE INDEX ${name} ON beneficiaries (${columns})`)
  }
}
const store = storage.beneficiaries
const maxId = db.prepare<[], number>('SELECT max(id) FROM beneficiaries').pluck().get()!

const entry = (action: HistoryEntry['action'], at: number): HistoryEntry => ({
  at,
  action,
  client_id: 'probe',
  request_id: `probe-${at}`,
  changes: [],
})
const now = Date.now()
const newRecord = (i: number): NewBeneficiary => ({
  first_name: ['Mario', 'Giulia', 'Nguyễn', "D'Angelo"][i % 4]!,
  last_name: ['Rossi', 'Bianchi', 'Esposito', 'Ferrari', 'De Luca'][i % 5]!,
  email: `probe${i}@example.org`,
  phone: null,
  date_of_birth: null,
  fiscal_code: null,
  address: null,
  metadata: {},
  status: 'active',
  created_at: now + i,
  updated_at: now + i,
})

async function timed(label: string, write: (i: number) => Promise<unknown>): Promise<void> {
  const started = process.cpuUsage()
  const begun = performance.now()
  for (let i = 0; i < writes; i += IN_FLIGHT) {
    const batch: Promise<unknown>[] = []
    for (let j = i; j < Math.min(writes, i + IN_FLIGHT); j++) batch.push(write(j))
    await Promise.all(batch)
  }
  const cpu = process.cpuUsage(started)
  const seconds = (performance.now() - begun) / 1000
  console.log(
    `${label.padEnd(8)} ${((cpu.user + cpu.system) / writes).toFixed(1).padStart(7)} µs CPU each, ${(writes / seconds).toFixed(0)} per second`,
  )
}

await timed('create', (i) => store.create(newRecord(i), entry('created', now + i)))
await timed('update', async (i) => {
  const id = 1 + ((i * 7919) % maxId)
  const current = (await store.get(id)) as BeneficiaryRecord
  const next = { ...current, phone: `+39 3${i}`, updated_at: now + i, version: current.version + 1 }
  return store.update(current, next, entry('updated', now + i))
})
await storage.close()
