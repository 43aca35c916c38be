/**
 * The PostgreSQL adapter at a million beneficiaries: seeds them (`seedPostgres`, timed) into a
 * schema of their own, times each kind of call one at a time, and prints how PostgreSQL plans
 * every list query. Not part of `npm test` (it takes minutes); its figures go in the adapter's
 * README.
 *
 *   node dist/test/adapters/postgres/million-rows.js [--count 1000000] [--reuse] [--drop]
 *
 * `--reuse` keeps an existing `million_<count>` schema instead of seeding it again; `--drop`
 * drops it at the end.
 */
import { parseArgs } from 'node:util'
import pg from 'pg'
import { openPostgresStorage, seedPostgres } from '../../../adapters/postgres/index.js'
import type { ListQuery } from '../../../core/ports/beneficiary-store.js'
import { searchTerms } from '../../../core/search-terms.js'
import { DAY_MS } from '../../../core/time.js'
import { fakeBeneficiaries } from '../../../server/cli/fake-beneficiaries.js'
import { createdEntry, historyEntry, newBeneficiary } from '../../contracts/storage-fixtures.js'
import { TEST_DATABASE_URL } from '../../support/postgres.js'
import { explain, RecordingPool } from './query-plans.js'

const { values: args } = parseArgs({
  options: {
    count: { type: 'string', default: '1000000' },
    reuse: { type: 'boolean', default: false },
    drop: { type: 'boolean', default: false },
    runs: { type: 'string', default: '200' },
  },
})
const count = Number(args.count)
const runs = Number(args.runs)
const schema = `million_${count}`
const NOW = Date.UTC(2026, 10, 1)

const admin = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 4 })
const exists = await admin.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema])
if (exists.rowCount === 1 && !args.reuse) await admin.query(`DROP SCHEMA "${schema}" CASCADE`)

const recording = new RecordingPool(new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 10 }))
const storage = await openPostgresStorage({ pool: recording, schema })
if (exists.rowCount !== 1 || !args.reuse) {
  const started = performance.now()
  let last = started
  const result = await seedPostgres(storage, fakeBeneficiaries({ count, seed: 42, now: NOW }), {
    onProgress: (n) => {
      const now = performance.now()
      if (now - last > 10_000) {
        console.log(
          `  seeded ${n.toLocaleString('en-US')} in ${((now - started) / 1000).toFixed(1)} s`,
        )
        last = now
      }
    },
  })
  const seconds = (performance.now() - started) / 1000
  console.log(`seed: ${result.count.toLocaleString('en-US')} rows in ${seconds.toFixed(1)} s`)
}

const ids = await admin.query(
  `SELECT min(id)::int AS lo, max(id)::int AS hi FROM "${schema}".beneficiaries`,
)
const { lo, hi } = ids.rows[0] as { lo: number; hi: number }
const middle = Math.floor((NOW - 1.5 * 365.25 * DAY_MS) / DAY_MS) * DAY_MS
const list = (query: Partial<ListQuery>): ListQuery => ({
  offset: 0,
  limit: 20,
  sort: 'id',
  descending: false,
  ...query,
})

const LISTS: readonly (readonly [string, ListQuery])[] = [
  ['first page', list({})],
  ['search "ros"', list({ search: searchTerms('ros') })],
  [
    'filter: active, 30 days',
    list({ status: 'active', createdFrom: middle - 29 * DAY_MS, createdBefore: middle + DAY_MS }),
  ],
  ['deep: page 40000 of 25', list({ offset: 39_999 * 25, limit: 25 })],
  ['middle: page 20000 of 25', list({ offset: 19_999 * 25, limit: 25 })],
  ['middle, -id, active', list({ offset: 250_000, limit: 25, descending: true, status: 'active' })],
  ['sort last_name, page 1', list({ sort: 'last_name' })],
  ['sort last_name, offset 400k', list({ sort: 'last_name', offset: 400_000 })],
  [
    'sort -first_name, pending, offset 50k',
    list({ sort: 'first_name', descending: true, status: 'pending', offset: 50_000 }),
  ],
  ['sort created_at, offset 300k', list({ sort: 'created_at', offset: 300_000 })],
  [
    'sort -updated_at, offset 300k',
    list({ sort: 'updated_at', descending: true, offset: 300_000 }),
  ],
  [
    'filter 30 days, sort last_name',
    list({ sort: 'last_name', createdFrom: middle - 29 * DAY_MS, createdBefore: middle + DAY_MS }),
  ],
  [
    'filter 30 days, offset 10k',
    list({ offset: 10_000, createdFrom: middle - 29 * DAY_MS, createdBefore: middle + DAY_MS }),
  ],
  ['search "ros", sort last_name', list({ search: searchTerms('ros'), sort: 'last_name' })],
  ['search "mario ros", active', list({ search: searchTerms('mario ros'), status: 'active' })],
  ['search "nguyen", page 5', list({ search: searchTerms('nguyen'), offset: 80 })],
  [
    'search "okaf", 30 days',
    list({
      search: searchTerms('okaf'),
      createdFrom: middle - 29 * DAY_MS,
      createdBefore: middle + DAY_MS,
    }),
  ],
  ['search "zzz" (nothing)', list({ search: searchTerms('zzz') })],
]

function summary(times: number[]): string {
  times.sort((a, b) => a - b)
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!
  return `median ${at(0.5).toFixed(2)} ms, p99 ${at(0.99).toFixed(2)} ms`
}

async function time(label: string, call: (i: number) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < 10; i++) await call(i)
  const times: number[] = []
  for (let i = 0; i < runs; i++) {
    const started = performance.now()
    await call(i)
    times.push(performance.now() - started)
  }
  console.log(`${label.padEnd(40)} ${summary(times)}`)
}

const random = (i: number) => lo + ((i * 7_919 + 13) % (hi - lo + 1))
console.log(`\none at a time, ${runs} runs each after 10 to warm up:`)
await time('get', (i) => storage.beneficiaries.get(random(i)))
for (const [label, query] of LISTS)
  await time(`list: ${label}`, () => storage.beneficiaries.list(query))
await storage.clients
  .insert({
    id: 'million-client',
    name: 'm',
    secret_hash: 'x',
    scopes: ['read'],
    created_at: NOW,
    revoked_at: null,
  })
  .catch(() => undefined)
await storage.sessions
  .insert({
    id: 'million-session',
    client_id: 'million-client',
    refresh_token_hash: `h${Date.now()}`,
    scopes: ['read'],
    created_at: NOW,
    expires_at: NOW + DAY_MS,
    revoked_at: null,
  })
  .catch(() => undefined)
await time('isTokenActive', (i) =>
  storage.sessions.isTokenActive('million-session', `jti-${i}`, 'million-client'),
)
const stamp = Date.now()
await time('create (with an Idempotency-Key)', async (i) => {
  const record = newBeneficiary({ created_at: NOW, updated_at: NOW, email: `m${i}@example.org` })
  await storage.beneficiaries.create(record, createdEntry(record), {
    clientId: 'million-client',
    key: `k-${stamp}-${i}`,
    fingerprint: 'f',
    expiresAt: NOW + DAY_MS,
    now: NOW,
  })
})
await time('update (a new phone)', async (i) => {
  const record = await storage.beneficiaries.get(random(i + 500))
  if (record === undefined) return
  const next = {
    ...record,
    phone: `+39333${String(i).padStart(7, '0')}`,
    updated_at: NOW,
    version: record.version + 1,
  }
  await storage.beneficiaries.update(record, next, historyEntry('updated', NOW))
})

/** `concurrency` loops calling `call` for `seconds`: calls per second and their p99. */
async function load(label: string, call: (i: number) => Promise<unknown>): Promise<void> {
  const times: number[] = []
  const end = performance.now() + 3000
  let next = 0
  await Promise.all(
    Array.from({ length: 50 }, async () => {
      while (performance.now() < end) {
        const started = performance.now()
        await call(next++)
        times.push(performance.now() - started)
      }
    }),
  )
  times.sort((a, b) => a - b)
  const p99 = times[Math.floor(0.99 * times.length)]!
  console.log(`${label.padEnd(40)} ${Math.round(times.length / 3)}/s, p99 ${p99.toFixed(1)} ms`)
}

console.log('\n50 at a time on a pool of 10 (storage calls, no HTTP), 3 s each:')
await load('get', (i) => storage.beneficiaries.get(random(i)))
for (const [label, query] of LISTS.slice(0, 4)) {
  await load(`list: ${label}`, () => storage.beneficiaries.list(query))
}
await load('isTokenActive', (i) =>
  storage.sessions.isTokenActive('million-session', `jti-${i}`, 'million-client'),
)

console.log('\nplans (with the values of the second run of each list):')
let seqScans = 0
let genericSeqScans = 0
for (const [label, query] of LISTS) {
  await storage.beneficiaries.list(query)
  recording.clear()
  await storage.beneficiaries.list(query)
  console.log(`\n# ${label}`)
  for (const statement of recording.statements) {
    const plan = await explain(admin, statement)
    seqScans += plan.seqScans.filter((name) => name === 'beneficiaries').length
    console.log(plan.text)
    if (statement.named) {
      const generic = await explain(admin, statement, true)
      genericSeqScans += generic.seqScans.filter((name) => name === 'beneficiaries').length
      console.log(
        `(named; its generic plan: ${generic.nodes.filter((node) => / on /.test(node)).join('; ')})`,
      )
    }
  }
}
console.log(
  `\nsequential scans of beneficiaries in list plans: ${seqScans} (generic plans: ${genericSeqScans})`,
)

await storage.close()
if (args.drop) await admin.query(`DROP SCHEMA "${schema}" CASCADE`)
await admin.end()
