import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import {
  openPostgresStorage,
  seedPostgres,
  type PostgresStorage,
} from '../../../adapters/postgres/index.js'
import type { ListQuery } from '../../../core/ports/beneficiary-store.js'
import { searchTerms } from '../../../core/search-terms.js'
import { DAY_MS } from '../../../core/time.js'
import { fakeBeneficiaries } from '../../../server/cli/fake-beneficiaries.js'
import { postgresSkipReason, useTestSchema } from '../../support/postgres.js'
import { explain, RecordingPool } from './query-plans.js'

const skip = (await postgresSkipReason()) ?? false

/**
 * Enough rows that PostgreSQL, planning with real statistics, has a sequential scan to choose
 * and does not (at a few hundred rows every plan would read the whole table); nothing here
 * turns `enable_seqscan` off. `million-rows.ts` shows the same plans at a million rows.
 */
const ROWS = 20_000
const NOW = Date.UTC(2026, 0, 1)
const MIDDLE = Math.floor((NOW - 1.5 * 365.25 * DAY_MS) / DAY_MS) * DAY_MS

const list = (query: Partial<ListQuery>): ListQuery => ({
  offset: 0,
  limit: 20,
  sort: 'id',
  descending: false,
  ...query,
})
const MONTH = { createdFrom: MIDDLE - 29 * DAY_MS, createdBefore: MIDDLE + DAY_MS }

/** Every kind of list the bench and the API make: first pages, filters, sorts, deep pages. */
const LISTS: readonly (readonly [string, ListQuery])[] = [
  ['the first page', list({})],
  ['a search', list({ search: searchTerms('ros') })],
  [
    'a search of two words and a status',
    list({ search: searchTerms('mario ros'), status: 'active' }),
  ],
  ['a search within a month', list({ search: searchTerms('ros'), ...MONTH })],
  ['a search sorted by last name', list({ search: searchTerms('ros'), sort: 'last_name' })],
  ['a status and a month', list({ status: 'active', ...MONTH })],
  ['a month sorted by first name', list({ sort: 'first_name', ...MONTH })],
  ['the last page', list({ offset: ROWS - 20 })],
  ['a deep page by id', list({ offset: ROWS / 2, limit: 25 })],
  [
    'a deep page by id, descending, of a status',
    list({ offset: Math.floor(ROWS / 4), descending: true, status: 'active' }),
  ],
  ['a deep page by last name', list({ sort: 'last_name', offset: Math.floor(ROWS / 3) })],
  [
    'a deep page by first name of a status',
    list({ sort: 'first_name', status: 'pending', offset: 3_000 }),
  ],
  ['a deep page by created_at', list({ sort: 'created_at', offset: Math.floor(ROWS / 3) })],
  [
    'a deep page by updated_at, descending',
    list({ sort: 'updated_at', descending: true, offset: Math.floor(ROWS / 3) }),
  ],
  [
    'a deep page of a month',
    list({ offset: 2_000, createdFrom: MIDDLE - 400 * DAY_MS, createdBefore: MIDDLE }),
  ],
]

describe(
  'PostgreSQL list plans at 20,000 rows: no sequential scan of the records',
  { skip },
  () => {
    const database = useTestSchema('plans')
    let recording: RecordingPool
    let storage: PostgresStorage

    before(async () => {
      recording = new RecordingPool(database.pool())
      storage = await openPostgresStorage({ pool: recording, schema: database.schema })
      await seedPostgres(storage, fakeBeneficiaries({ count: ROWS, seed: 3, now: NOW }))
    })

    for (const [label, query] of LISTS) {
      it(`plans ${label} without reading the whole table`, async (t) => {
        // The second time, as the same list comes back: planned from the first one's totals.
        for (const round of ['first', 'second']) {
          recording.clear()
          await storage.beneficiaries.list(query)
          assert.ok(recording.statements.length > 0)
          for (const statement of recording.statements) {
            // A named statement is checked as PostgreSQL may plan it after five runs, too.
            if (statement.named) {
              const generic = await explain(database.pool(), statement, true)
              const scanned = generic.seqScans.filter((name) => name !== 'beneficiary_counts')
              assert.deepEqual(scanned, [], `generic plan:\n${generic.text}`)
            }
            const plan = await explain(database.pool(), statement)
            // The counters may be read whole (a deep page sums every day's); the records never.
            const scanned = plan.seqScans.filter((name) => name !== 'beneficiary_counts')
            assert.deepEqual(scanned, [], `${round} time:\n${plan.text}`)
            if (round === 'second')
              t.diagnostic(plan.nodes.filter((node) => / on /.test(node)).join('; '))
          }
        }
      })
    }
  },
)
