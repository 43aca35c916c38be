/**
 * What erasure (D27) costs the writes: CPU microseconds per create, per update (of the phone,
 * of the status, of the first name) and per delete, through the SQLite storage port with its
 * group commit (25 writes in flight, inline writer, background checkpointer), on a temporary
 * file of `--rows` records. Run it from two builds, before and after a change, and compare.
 *
 * node dist/bench/erasure-cost-probe.js [--rows 20000] [--writes 1000]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { openSqliteStorage } from '../adapters/sqlite/index.js'
import type { BeneficiaryRecord, HistoryEntry } from '../core/beneficiary.js'
import type { NewBeneficiary } from '../core/ports/beneficiary-store.js'

const { values: options } = parseArgs({
  options: {
    rows: { type: 'string', default: '20000' },
    writes: { type: 'string', default: '1000' },
  },
})
const rows = Number(options.rows)
const writes = Number(options.writes)
const IN_FLIGHT = 25
const T0 = Date.UTC(2026, 0, 1)

const directory = mkdtempSync(join(tmpdir(), 'erasure-cost-'))
const storage = await openSqliteStorage({
  path: join(directory, 'probe.db'),
  writer: 'inline',
  checkpoint: 'background',
})

function record(i: number, name: string): NewBeneficiary {
  return {
    first_name: `${name}${i}`,
    last_name: `Name${i % 997}`,
    email: `${name.toLowerCase()}${i}@example.org`,
    phone: '+393331234567',
    date_of_birth: '1985-12-10',
    fiscal_code: null,
    address: { street: 'Via Roma 1', city: 'Pisa', postal_code: '56100', country: 'IT' },
    metadata: { source: 'probe', notes: 'first contact by phone' },
    status: 'pending',
    created_at: T0,
    updated_at: T0,
  }
}

function entry(action: HistoryEntry['action'], at: number): HistoryEntry {
  return { at, action, client_id: 'probe', request_id: `probe-${at}`, changes: [] }
}

async function inGroups(count: number, write: (i: number) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < count; i += IN_FLIGHT) {
    const group = Array.from({ length: Math.min(IN_FLIGHT, count - i) }, (_, k) => write(i + k))
    await Promise.all(group)
  }
}

function cpuMs(): number {
  const usage = process.cpuUsage()
  return (usage.user + usage.system) / 1000
}

const costs: Record<string, number> = {}
async function timed(label: string, write: (i: number) => Promise<unknown>): Promise<void> {
  const started = cpuMs()
  await inGroups(writes, write)
  costs[label] = Math.round(((cpuMs() - started) * 1000) / writes)
}

try {
  await inGroups(rows, (i) => {
    const base = record(i, 'Base')
    return storage.beneficiaries.create(base, entry('created', T0))
  })
  const records: BeneficiaryRecord[] = []
  await timed('create', async (i) => {
    const created = await storage.beneficiaries.create(record(i, 'Probe'), entry('created', T0))
    if (created.kind === 'created') records[i] = created.record
  })
  const update = (label: string, change: (i: number) => Partial<BeneficiaryRecord>) =>
    timed(label, async (i) => {
      const previous = records[i]!
      const at = previous.updated_at + 1
      const next = { ...previous, ...change(i), updated_at: at, version: previous.version + 1 }
      await storage.beneficiaries.update(previous, next, entry('updated', at))
      records[i] = next
    })
  await update('update of the phone', (i) => ({ phone: `+39333${String(i).padStart(7, '0')}` }))
  await update('update of the status', () => ({ status: 'active' }))
  await update('update of the first name', (i) => ({ first_name: `Renamed${i}` }))
  await timed('delete', (i) =>
    storage.beneficiaries.remove(records[i]!.id, undefined, entry('deleted', T0 + 10)),
  )
  console.log(JSON.stringify({ rows, writes, cpu_us_per_write: costs }))
} finally {
  await storage.close()
  rmSync(directory, { recursive: true, force: true })
}
