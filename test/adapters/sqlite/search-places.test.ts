import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { openSqliteStorage, type SqliteStorage } from '../../../adapters/sqlite/index.js'
import type { BeneficiaryStatus } from '../../../core/beneficiary.js'
import type { ListQuery } from '../../../core/ports/beneficiary-store.js'
import { searchTerms } from '../../../core/search-terms.js'
import { createdEntry, historyEntry, newBeneficiary } from '../../contracts/storage-fixtures.js'
import { Random } from '../../support/random.js'

const FIRST = ['Mario', 'Maria', 'Marco', 'Anna', 'Luca', 'Zoë']
const LAST = ['Rossi', 'Rosa', 'Marini', 'Bianchi', 'De Luca']
const STATUSES: readonly BeneficiaryStatus[] = ['active', 'inactive', 'pending']

/** The ids of a page of a search sorted by id, as a plain FTS5 query with OFFSET gives them. */
function expectedIds(storage: SqliteStorage, query: ListQuery): number[] {
  const terms = (query.search ?? []).map((term) => `words : "${term}"*`)
  if (query.status !== undefined) terms.push(`status : "${query.status}"`)
  return storage.database
    .prepare<[string, number, number], number>(
      `SELECT rowid FROM beneficiary_search WHERE beneficiary_search MATCH ?
        ORDER BY rowid ${query.descending ? 'DESC' : 'ASC'} LIMIT ? OFFSET ?`,
    )
    .pluck()
    .all(terms.join(' AND '), query.limit, query.offset)
}

async function assertPages(storage: SqliteStorage, random: Random, count: number): Promise<void> {
  for (const text of ['m', 'mar', 'ros', 'mari ros', 'luca']) {
    const status = random.next() < 0.3 ? random.pick(STATUSES) : undefined
    const base = { sort: 'id' as const, search: searchTerms(text), ...(status && { status }) }
    const { total } = await storage.beneficiaries.list({
      ...base,
      descending: false,
      offset: 0,
      limit: 1,
    })
    for (let i = 0; i < count; i++) {
      const query: ListQuery = {
        ...base,
        descending: random.next() < 0.5,
        offset: random.between(0, total),
        limit: random.between(1, 60),
      }
      const page = await storage.beneficiaries.list(query)
      assert.equal(page.total, total)
      assert.deepEqual(
        page.items.map((item) => item.id),
        expectedIds(storage, query),
        JSON.stringify(query),
      )
    }
  }
}

describe('SQLite search pages from known places among the matches', () => {
  it('gives the pages a plain OFFSET gives, in both directions, as places are learnt, and after writes', async () => {
    const storage = await openSqliteStorage({ path: ':memory:' })
    const random = new Random(31)
    try {
      const create = async (i: number) => {
        const record = newBeneficiary({
          first_name: random.pick(FIRST),
          last_name: random.pick(LAST),
          email: `s${i}@example.org`,
          status: random.pick(STATUSES),
        })
        return (await storage.beneficiaries.create(record, createdEntry(record))) as {
          record: { id: number }
        }
      }
      const created = await Promise.all(Array.from({ length: 3_000 }, (_, i) => create(i)))
      await assertPages(storage, random, 80)

      // Writes change the matches: what was learnt before is forgotten.
      for (const { record } of created.slice(0, 400)) {
        await storage.beneficiaries.remove(
          record.id,
          undefined,
          historyEntry('deleted', Date.now()),
        )
      }
      await Promise.all(Array.from({ length: 300 }, (_, i) => create(3_000 + i)))
      await assertPages(storage, random, 80)
    } finally {
      await storage.close()
    }
  })
})
