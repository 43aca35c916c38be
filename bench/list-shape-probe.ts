/**
 * Times every shape class of list request at the storage layer, in-process, on a seeded SQLite
 * database: many random calls per class drawn by a seeded generator (terms from the data's own
 * names, pages spread over each result's whole range, `per_page` 1–100, every sort), and the
 * p50, p99, max and mean microseconds of each class, the worst class first. A scratch probe for
 * comparing the adapter's list plans before and after a change; the HTTP benchmark is
 * `npm run bench`.
 *
 * node dist/bench/list-shape-probe.js --db bench/.data/service-1000000.db [--calls 1500]
 *   [--seed 1] [--class search-long]
 *
 * The database is opened with migrations (an older schema is upgraded in place: probe a copy).
 * Totals, to spread the pages, come from a second connection, so the timed one starts cold.
 */
import { parseArgs } from 'node:util'
import Database from 'better-sqlite3'
import { openSqliteStorage } from '../adapters/sqlite/index.js'
import { BENEFICIARY_STATUSES, type SortField } from '../core/beneficiary.js'
import type { ListQuery } from '../core/ports/beneficiary-store.js'
import { searchTerms } from '../core/search-terms.js'
import { DAY_MS } from '../core/time.js'
import { SORT_FIELDS } from '../core/validation/query-schemas.js'
import { SeededRandom } from './seeded-random.js'

const { values: options } = parseArgs({
  options: {
    db: { type: 'string' },
    calls: { type: 'string', default: '1500' },
    seed: { type: 'string', default: '1' },
    class: { type: 'string', multiple: true },
  },
})
if (options.db === undefined) throw new Error('--db <path> is required')

const SORTS: readonly SortField[] = SORT_FIELDS
const STATUSES = BENEFICIARY_STATUSES

const seeded = new SeededRandom(Number(options.seed))
const random = (): number => seeded.next()
const int = (below: number): number => Math.floor(random() * below)
const pick = <T>(items: readonly T[]): T => items[int(items.length)]!

/** Names with their frequencies, read from the data itself. */
interface Names {
  readonly byRecord: readonly string[]
  readonly distinct: readonly string[]
}
const reader = new Database(options.db, { readonly: true })
function names(column: 'first_name' | 'last_name'): Names {
  const rows = reader
    .prepare<[], { name: string; n: number }>(
      `SELECT ${column} AS name, count(*) AS n FROM beneficiaries GROUP BY 1`,
    )
    .all()
  const total = rows.reduce((sum, row) => sum + row.n, 0)
  // 10,000 draws weighted by frequency: a common name comes up as often as in the data.
  const byRecord: string[] = []
  for (const row of rows) {
    for (let i = 0; i < Math.round((row.n / total) * 10_000); i++) byRecord.push(row.name)
  }
  return { byRecord, distinct: rows.map((row) => row.name) }
}
const first = names('first_name')
const last = names('last_name')
const bounds = reader
  .prepare<[], { lo: number; hi: number }>(
    'SELECT min(created_at) AS lo, max(created_at) AS hi FROM beneficiaries',
  )
  .get()!
reader.close()
const accented = [...first.distinct, ...last.distinct].filter((name) => /[^A-Za-z ]/.test(name))

/** A prefix of `min`–`max` characters of a word of `name`, as a user types it (accents kept). */
function prefixOf(name: string, min: number, max: number): string {
  const words = name.split(/[\s']+/).filter((word) => word.length > 0)
  const word = pick(words)
  const length = Math.min(word.length, min + int(max - min + 1))
  return [...word].slice(0, length).join('')
}
/** The search terms the core makes of a prefix typed by a user. */
const termsOf = (text: string): string[] => searchTerms(text)
const anyName = (names: Names): string => pick(random() < 0.5 ? names.byRecord : names.distinct)
const commonName = (): string => pick(random() < 0.5 ? first.byRecord : last.byRecord)

function sort(): Pick<ListQuery, 'sort' | 'descending'> {
  return { sort: random() < 0.2 ? 'id' : pick(SORTS), descending: random() < 0.5 }
}
function dates(): Pick<ListQuery, 'createdFrom' | 'createdBefore'> {
  const days = random() < 0.5 ? 30 : 30 + int(700)
  const firstDay = Math.floor(bounds.lo / DAY_MS)
  const lastDay = Math.floor(bounds.hi / DAY_MS)
  const from = firstDay + int(Math.max(1, lastDay - firstDay - days))
  return { createdFrom: from * DAY_MS, createdBefore: (from + days) * DAY_MS }
}

type Draft = Omit<ListQuery, 'offset' | 'limit'>
const CLASSES: Readonly<Record<string, () => Draft>> = {
  page: () => sort(),
  'search-short': () => ({
    sort: 'id',
    descending: false,
    search: termsOf(prefixOf(anyName(last), 1, 3)),
  }),
  'search-long': () => ({
    sort: 'id',
    descending: false,
    search: termsOf(prefixOf(commonName(), 4, 8)),
  }),
  'search-rare': () => ({
    sort: 'id',
    descending: false,
    search: searchTerms(prefixOf(pick(random() < 0.5 ? first.distinct : last.distinct), 3, 12)),
  }),
  'search-two-words': () => ({
    sort: 'id',
    descending: false,
    search: [
      ...searchTerms(prefixOf(anyName(first), 2, 8)),
      ...searchTerms(prefixOf(anyName(last), 1, 8)),
    ],
  }),
  'search-accented': () => ({
    sort: 'id',
    descending: false,
    search: searchTerms(random() < 0.5 ? pick(accented) : prefixOf(pick(accented), 2, 8)),
  }),
  'search-sorted': () => ({ ...sort(), search: searchTerms(prefixOf(anyName(last), 1, 8)) }),
  status: () => ({ ...sort(), status: pick(STATUSES) }),
  dates: () => ({ ...sort(), ...dates() }),
  'status-dates': () => ({ ...sort(), status: pick(STATUSES), ...dates() }),
  'status-search': () => ({
    ...sort(),
    status: pick(STATUSES),
    search: searchTerms(prefixOf(anyName(last), 1, 8)),
  }),
  'dates-search': () => ({
    ...sort(),
    ...dates(),
    search: searchTerms(prefixOf(anyName(last), 1, 8)),
  }),
  'status-dates-search': () => ({
    ...sort(),
    status: pick(STATUSES),
    ...dates(),
    search: searchTerms(prefixOf(anyName(first), 1, 8)),
  }),
}

const oracle = await openSqliteStorage({ path: options.db })
const storage = await openSqliteStorage({ path: options.db })
const calls = Number(options.calls)
const chosen = options.class ?? Object.keys(CLASSES)

interface Row {
  readonly name: string
  readonly p50: number
  readonly p99: number
  readonly max: number
  readonly mean: number
  readonly slowest: string
}
const rows: Row[] = []
for (const name of chosen) {
  const draw = CLASSES[name]
  if (draw === undefined) throw new Error(`no class ${name}: ${Object.keys(CLASSES).join(', ')}`)
  const queries: ListQuery[] = []
  for (let i = 0; i < calls; i++) {
    const draft = draw()
    const limit = 1 + int(100)
    const { total } = await oracle.beneficiaries.list({ ...draft, offset: 0, limit: 1 })
    const pages = Math.max(1, Math.ceil(total / limit))
    queries.push({ ...draft, limit, offset: int(pages) * limit })
  }
  const times: number[] = []
  let slowest = ''
  let worst = 0
  for (const query of queries) {
    const begun = process.hrtime.bigint()
    await storage.beneficiaries.list(query)
    const micros = Number(process.hrtime.bigint() - begun) / 1000
    times.push(micros)
    if (micros > worst) {
      worst = micros
      slowest = JSON.stringify(query)
    }
  }
  times.sort((a, b) => a - b)
  const at = (q: number): number => times[Math.min(times.length - 1, Math.floor(times.length * q))]!
  rows.push({
    name,
    p50: at(0.5),
    p99: at(0.99),
    max: times.at(-1)!,
    mean: times.reduce((sum, time) => sum + time, 0) / times.length,
    slowest,
  })
}
await storage.close()
await oracle.close()

rows.sort((a, b) => b.mean - a.mean)
const cell = (value: number): string => value.toFixed(0).padStart(8)
console.log(`${calls} calls per class, seed ${options.seed}, µs per list() call`)
console.log(
  `${'class'.padEnd(22)}${'p50'.padStart(8)}${'p99'.padStart(8)}${'max'.padStart(8)}${'mean'.padStart(8)}`,
)
for (const row of rows) {
  console.log(
    `${row.name.padEnd(22)}${cell(row.p50)}${cell(row.p99)}${cell(row.max)}${cell(row.mean)}`,
  )
}
console.log('\nslowest call of each class:')
for (const row of rows) console.log(`  ${row.name}: ${row.slowest}`)
