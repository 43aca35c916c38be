import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { AccessLogEntry, AccessLogStore } from '../../core/ports/access-log-store.js'
import type { CurrentStorage } from './contract-harness.js'
import {
  SECOND,
  T0,
  historyEntry,
  insertBeneficiary,
  newBeneficiary,
  nextVersion,
} from './storage-fixtures.js'

function entry(overrides: Partial<AccessLogEntry> = {}): AccessLogEntry {
  return {
    at: T0,
    client_id: 'cl_reader',
    request_id: 'req-1',
    operation: 'get',
    beneficiary_ids: [1],
    purpose: null,
    ...overrides,
  }
}

/** The stored entries without the ids the store gave them. */
function bare(entries: readonly (AccessLogEntry & { id: number })[]): AccessLogEntry[] {
  return entries.map(({ id: _id, ...rest }) => ({
    ...rest,
    beneficiary_ids: [...rest.beneficiary_ids],
  }))
}

/** Registers the behaviour of the access log (D35, D37) every storage promises. */
export function describeAccessLogContract(storage: CurrentStorage): void {
  const log = (): AccessLogStore => {
    const found = storage().accessLog
    assert.ok(found !== undefined, 'the storage has an access log')
    return found
  }

  describe('access log (D35)', () => {
    it('keeps what was recorded once flushed: ids, client, request, operation and purpose', async () => {
      const first = entry({ purpose: 'eligibility review' })
      const second = entry({
        at: T0 + SECOND,
        request_id: 'req-2',
        operation: 'list',
        beneficiary_ids: [3, 1, 2],
      })
      assert.equal(log().record(first), undefined)
      assert.equal(log().record(second), undefined)
      await log().flush()
      const page = await log().forBeneficiary(1, 0, 10)
      assert.equal(page.total, 2)
      assert.deepEqual(bare(page.items), [first, second])
      assert.equal(log().stats.pending, 0)
      assert.ok(log().stats.written >= 2)
    })

    it("pages one record's entries oldest first, by time then by arrival", async () => {
      for (let i = 0; i < 5; i++) {
        log().record(entry({ at: T0 + (4 - i) * SECOND, request_id: `r${4 - i}` }))
      }
      log().record(entry({ at: T0, request_id: 'other', beneficiary_ids: [2] }))
      await log().flush()
      const first = await log().forBeneficiary(1, 0, 2)
      const second = await log().forBeneficiary(1, 2, 2)
      const last = await log().forBeneficiary(1, 4, 2)
      assert.deepEqual(
        [...first.items, ...second.items, ...last.items].map((e) => e.request_id),
        ['r0', 'r1', 'r2', 'r3', 'r4'],
      )
      assert.equal(first.total, 5)
      assert.deepEqual((await log().forBeneficiary(2, 0, 10)).total, 1)
      assert.deepEqual(await log().forBeneficiary(99, 0, 10), { items: [], total: 0 })
    })

    it('scans by client, by record and by period, resuming after a cursor', async () => {
      const entries = [
        entry({ at: T0, client_id: 'a', beneficiary_ids: [1, 2] }),
        entry({ at: T0 + SECOND, client_id: 'b', beneficiary_ids: [2] }),
        entry({ at: T0 + 2 * SECOND, client_id: 'a', beneficiary_ids: [3] }),
        entry({ at: T0 + 3 * SECOND, client_id: 'a', beneficiary_ids: [2] }),
      ]
      for (const e of entries) log().record(e)
      await log().flush()
      assert.deepEqual(bare(await log().scan({ limit: 10 })), entries)
      assert.deepEqual(bare(await log().scan({ clientId: 'a', limit: 10 })), [
        entries[0],
        entries[2],
        entries[3],
      ])
      assert.deepEqual(bare(await log().scan({ beneficiaryId: 2, limit: 10 })), [
        entries[0],
        entries[1],
        entries[3],
      ])
      assert.deepEqual(
        bare(await log().scan({ from: T0 + SECOND, before: T0 + 3 * SECOND, limit: 10 })),
        [entries[1], entries[2]],
      )
      const [head] = await log().scan({ beneficiaryId: 2, clientId: 'a', limit: 1 })
      assert.ok(head !== undefined)
      const rest = await log().scan({
        beneficiaryId: 2,
        clientId: 'a',
        after: { at: head.at, id: head.id },
        limit: 10,
      })
      assert.deepEqual(bare(rest), [entries[3]])
    })

    it('writes a large burst in batches and loses none of it', async () => {
      const waits: Promise<void>[] = []
      for (let i = 0; i < 1200; i++) {
        const wait = log().record(entry({ at: T0 + i, request_id: `b${i}` }))
        if (wait !== undefined) waits.push(wait)
      }
      await Promise.all(waits)
      await log().flush()
      assert.equal((await log().forBeneficiary(1, 0, 1)).total, 1200)
    })

    it('purges the oldest entries before a time, at most a batch at a time (D37)', async () => {
      for (let i = 0; i < 6; i++) log().record(entry({ at: T0 + i * SECOND, request_id: `p${i}` }))
      await log().flush()
      assert.equal(await log().purge(T0 + 4 * SECOND, 3), 3)
      assert.equal(await log().purge(T0 + 4 * SECOND, 3), 1)
      assert.equal(await log().purge(T0 + 4 * SECOND, 3), 0)
      const left = await log().forBeneficiary(1, 0, 10)
      assert.deepEqual(
        left.items.map((e) => e.request_id),
        ['p4', 'p5'],
      )
      assert.equal(left.total, 2)
      assert.deepEqual(await log().scan({ before: T0 + 4 * SECOND, limit: 10 }), [])
    })
  })

  describe('history retention (D37)', () => {
    it('purges the history entries older than a time, of every record, a batch at a time', async () => {
      const purge = storage().historyRetention
      assert.ok(purge !== undefined, 'the storage purges history')
      const store = storage().beneficiaries
      const first = await insertBeneficiary(storage(), newBeneficiary({ email: 'a@example.org' }))
      const second = await insertBeneficiary(
        storage(),
        newBeneficiary({ email: 'b@example.org', created_at: T0 + SECOND }),
      )
      const later = T0 + 10 * SECOND
      const updated = nextVersion(first, { phone: '+390612345678' }, later)
      assert.equal(
        await store.update(
          first,
          updated,
          historyEntry('updated', later, [{ field: 'phone', old: null, new: '+390612345678' }]),
        ),
        'done',
      )
      assert.equal(await purge.purge(T0 + 5 * SECOND, 1), 1)
      assert.equal(await purge.purge(T0 + 5 * SECOND, 10), 1)
      assert.equal(await purge.purge(T0 + 5 * SECOND, 10), 0)
      const kept = await store.history(first.id, 0, 10)
      assert.deepEqual(
        kept?.items.map((entry) => entry.action),
        ['updated'],
      )
      assert.equal(kept?.total, 1)
      assert.deepEqual(await store.history(second.id, 0, 10), { items: [], total: 0 })
      // The record itself is untouched.
      assert.equal((await store.get(first.id))?.phone, '+390612345678')
    })
  })
}
