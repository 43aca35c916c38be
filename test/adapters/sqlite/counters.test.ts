import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { openSqliteStorage } from '../../../adapters/sqlite/index.js'
import { DAY_MS } from '../../../core/time.js'
import type { BeneficiaryStatus } from '../../../core/beneficiary.js'
import { Random } from '../../support/random.js'
import { counters } from '../../support/sqlite-counters.js'
import {
  T0,
  createdEntry,
  createdRecord,
  fullBeneficiary,
  historyEntry,
  newBeneficiary,
  nextVersion,
} from '../../contracts/storage-fixtures.js'

const STATUSES: readonly BeneficiaryStatus[] = ['active', 'inactive', 'pending']
const NAMES = ['Rossi', 'Rosa', 'Bianchi', 'Bianca', 'Émile', 'Zoë', 'de Luca']

describe('SQLite list counters', () => {
  it('match a recount after updates that move only the update day, a name, the status, or nothing, and after deletes', async () => {
    const storage = await openSqliteStorage({ path: ':memory:' })
    const random = new Random(11)
    try {
      const ids: number[] = []
      for (let i = 0; i < 300; i++) {
        const createdAt = T0 + random.between(0, 20) * DAY_MS + random.between(0, DAY_MS - 1)
        const record = newBeneficiary({
          first_name: random.pick(NAMES),
          last_name: random.pick(NAMES),
          email: `c${i}@example.org`,
          status: random.pick(STATUSES),
          created_at: createdAt,
          updated_at: createdAt,
        })
        ids.push(createdRecord(await storage.beneficiaries.create(record, createdEntry(record))).id)
      }
      for (let i = 0; i < 600; i++) {
        const current = (await storage.beneficiaries.get(random.pick(ids)))!
        if (current === undefined) continue
        const change = random.between(0, 4)
        const at = current.updated_at + (change === 4 ? 1 : random.between(0, 3) * DAY_MS + 1)
        const next = nextVersion(
          current,
          change === 0
            ? { first_name: random.pick(NAMES) }
            : change === 1
              ? { last_name: random.pick(NAMES) }
              : change === 2
                ? { status: random.pick(STATUSES) }
                : { phone: `+3933312345${random.between(10, 99)}` },
          at,
        )
        const entry = historyEntry('updated', at)
        assert.equal(await storage.beneficiaries.update(current, next, entry), 'done')
      }
      for (let i = 0; i < 40; i++) {
        await storage.beneficiaries.remove(random.pick(ids), undefined, historyEntry('deleted', T0))
      }
      const { kept, recounted } = counters(storage)
      assert.deepEqual(kept, recounted)
    } finally {
      await storage.close()
    }
  })

  it('match a recount when each group of writes is counted at once, and a failed write is not', async () => {
    const storage = await openSqliteStorage({ path: ':memory:' })
    const random = new Random(12)
    const beneficiaries = storage.beneficiaries
    const at = (day: number) => T0 + day * DAY_MS + random.between(0, DAY_MS - 1)
    try {
      const taken = fullBeneficiary({ created_at: at(0), updated_at: at(0) })
      await beneficiaries.create(taken, createdEntry(taken))
      for (let round = 0; round < 8; round++) {
        const creates = Array.from({ length: 20 }, (_, i) => {
          const createdAt = at(round)
          const record =
            i === 7
              ? fullBeneficiary({
                  email: `dup${round}@example.org`,
                  created_at: createdAt,
                  updated_at: createdAt,
                })
              : newBeneficiary({
                  first_name: random.pick(NAMES),
                  last_name: random.pick(NAMES),
                  email: `g${round}.${i}@example.org`,
                  status: random.pick(STATUSES),
                  created_at: createdAt,
                  updated_at: createdAt,
                })
          return beneficiaries.create(record, createdEntry(record))
        })
        const created = await Promise.allSettled(creates)
        assert.equal(created.filter((o) => o.status === 'rejected').length, 1, 'the duplicate')
        const ids = created.flatMap((o) =>
          o.status === 'fulfilled' ? [createdRecord(o.value).id] : [],
        )
        const currents = await Promise.all(ids.map(async (id) => (await beneficiaries.get(id))!))
        const changes = currents.map((current, i) => {
          const later = at(round + 1 + (i % 3))
          if (i % 5 === 4) {
            return beneficiaries.remove(current.id, undefined, historyEntry('deleted', later))
          }
          const change =
            i % 5 === 0
              ? { status: random.pick(STATUSES) }
              : i % 5 === 1
                ? { last_name: random.pick(NAMES) }
                : i % 5 === 2
                  ? { fiscal_code: taken.fiscal_code }
                  : { phone: '+39 333 1234567' }
          const next = nextVersion(current, change, later)
          return beneficiaries.update(current, next, historyEntry('updated', later))
        })
        const changed = await Promise.allSettled(changes)
        assert.equal(changed.filter((o) => o.status === 'rejected').length, 4, 'fiscal codes taken')
      }
      const { kept, recounted } = counters(storage)
      assert.deepEqual(kept, recounted)
    } finally {
      await storage.close()
    }
  })
})
