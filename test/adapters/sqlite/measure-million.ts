/**
 * Seeds 1,000,000 beneficiaries into a temporary SQLite file and prints the median time of the
 * storage-layer queries the benchmark issue names, each with its exact total. Not a test: run
 * it by hand after building, e.g.
 * `node dist-sqlite/test/adapters/sqlite/measure-million.js [count] [existing.db]`; with a
 * database file made by an earlier run's seed (seed 42, same count), it skips the seeding.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ListQuery } from '../../../core/ports/beneficiary-store.js'
import { openSqliteStorage, seedBeneficiaries } from '../../../adapters/sqlite/index.js'
import { DAY_MS } from '../../../core/time.js'
import { fakeBeneficiaries } from '../../../server/cli/fake-beneficiaries.js'

const COUNT = Number(process.argv[2] ?? 1_000_000)
const EXISTING = process.argv[3]
const NOW = Date.UTC(2025, 5, 1)
const RUNS = 101

const dir = await mkdtemp(join(tmpdir(), 'sqlite-measure-'))
try {
  const path = EXISTING ?? join(dir, 'million.db')
  if (EXISTING === undefined) {
    const seeding = await openSqliteStorage({ path })
    const started = performance.now()
    await seedBeneficiaries(seeding, fakeBeneficiaries({ count: COUNT, seed: 42, now: NOW }))
    console.log(`seeded ${COUNT} rows in ${((performance.now() - started) / 1000).toFixed(1)} s`)
    await seeding.close()
  }

  const storage = await openSqliteStorage({ path })
  const store = storage.beneficiaries

  const measure = async (label: string, run: (i: number) => Promise<unknown>): Promise<void> => {
    let result: unknown
    for (let i = 0; i < 5; i++) result = await run(i)
    const times: number[] = []
    for (let i = 0; i < RUNS; i++) {
      const begun = performance.now()
      result = await run(i)
      times.push(performance.now() - begun)
    }
    times.sort((a, b) => a - b)
    const median = times[Math.floor(RUNS / 2)] ?? NaN
    const p95 = times[Math.floor(RUNS * 0.95)] ?? NaN
    const total =
      typeof result === 'object' && result !== null && 'total' in result
        ? `total ${String(result.total)}`
        : ''
    console.log(
      `${label.padEnd(58)} median ${median.toFixed(3).padStart(8)} ms  p95 ${p95.toFixed(3).padStart(8)} ms  ${total}`,
    )
  }
  const list = (query: Partial<ListQuery>) => () =>
    store.list({ offset: 0, limit: 25, sort: 'id', descending: false, ...query })

  const from = Date.UTC(2024, 0, 1)
  const before = Date.UTC(2024, 6, 1)
  const recentFrom = NOW - 30 * DAY_MS - (NOW % DAY_MS)
  const last = COUNT - 25

  console.log('--- the benchmark cases')
  await measure('get by id (random ids)', (i) => store.get(1 + ((i * 7919) % COUNT)))
  await measure('first page (sort id)', list({}))
  await measure("search 'ros' (common surname prefix), first page", list({ search: ['ros'] }))
  await measure("status 'active', first page", list({ status: 'active' }))
  await measure(
    'created 2024-01-01..2024-06-30, first page',
    list({ createdFrom: from, createdBefore: before }),
  )
  await measure('page 40,000 of 25 (offset 999,975)', list({ offset: last }))

  console.log('--- more shapes')
  await measure('page 40,000 of 25, sort -id', list({ offset: last, descending: true }))
  await measure('page 20,000 of 25 (middle)', list({ offset: COUNT / 2 }))
  await measure(
    "status 'pending', deep page (offset 150,000)",
    list({ status: 'pending', offset: 150_000 }),
  )
  await measure(
    "status 'active', sort -id, deep (offset 500,000)",
    list({ status: 'active', offset: 500_000, descending: true }),
  )
  await measure('last 30 days, first page', list({ createdFrom: recentFrom }))
  await measure(
    'created 2024 H1, deep page (offset 150,000)',
    list({ createdFrom: from, createdBefore: before, offset: 150_000 }),
  )
  await measure(
    "created 2024 H1 + status 'inactive', first page",
    list({ createdFrom: from, createdBefore: before, status: 'inactive' }),
  )
  await measure('one day, first page', list({ createdFrom: from, createdBefore: from + DAY_MS }))
  await measure('sort created_at, deepest page', list({ sort: 'created_at', offset: last }))
  await measure(
    'sort -created_at, deepest page',
    list({ sort: 'created_at', descending: true, offset: last }),
  )
  await measure(
    "sort created_at, status 'active', deep (offset 400,000)",
    list({ sort: 'created_at', status: 'active', offset: 400_000 }),
  )
  await measure('sort updated_at, first page', list({ sort: 'updated_at' }))
  await measure(
    'sort -updated_at, deepest page',
    list({ sort: 'updated_at', descending: true, offset: last }),
  )
  await measure('sort last_name, first page', list({ sort: 'last_name' }))
  await measure('sort -last_name, first page', list({ sort: 'last_name', descending: true }))
  await measure('sort last_name, deepest page', list({ sort: 'last_name', offset: last }))
  await measure('sort first_name, page 20,000', list({ sort: 'first_name', offset: COUNT / 2 }))
  await measure(
    "sort first_name, status 'pending', first page",
    list({ sort: 'first_name', status: 'pending' }),
  )
  await measure(
    'sort last_name, 2024 H1, first page',
    list({ sort: 'last_name', createdFrom: from, createdBefore: before }),
  )
  await measure(
    "search 'ros', sort -id, page 100",
    list({ search: ['ros'], descending: true, offset: 2_475 }),
  )
  await measure("search 'mario rossi', first page", list({ search: ['mario', 'rossi'] }))
  await measure("search 'r' (one letter), first page", list({ search: ['r'] }))
  await measure("search 'nguyen', sort last_name", list({ search: ['nguyen'], sort: 'last_name' }))
  await measure(
    "search 'ros' + status 'active', first page",
    list({ search: ['ros'], status: 'active' }),
  )
  await measure(
    "search 'ros', sort last_name, first page",
    list({ search: ['ros'], sort: 'last_name' }),
  )
  await measure("search 'zzzz' (no match)", list({ search: ['zzzz'] }))
  await measure('history of one record', (i) => store.history(1 + ((i * 7919) % COUNT), 0, 25))
  await storage.close()
} finally {
  await rm(dir, { recursive: true, force: true })
}
