import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { HistoryAction } from '../../core/beneficiary.js'
import type { EventPage, EventStore, StoredEvent } from '../../core/ports/event-store.js'
import type { CurrentStorage } from './contract-harness.js'
import {
  SECOND,
  T0,
  createdRecord,
  historyEntry,
  insertBeneficiary,
  newBeneficiary,
  nextVersion,
} from './storage-fixtures.js'

/** How long the concurrency test writes, and with how many writers and consumers. */
const RUN_MS = Number(process.env['FEED_CONTRACT_MS'] ?? 3000)
const WRITERS = 10
const CONSUMERS = 3

function feed(storage: CurrentStorage): EventStore {
  const events = storage().events
  assert.ok(events !== undefined, 'the storage keeps a change feed')
  return events
}

async function page(
  store: EventStore,
  after: string | undefined,
  limit: number,
): Promise<EventPage> {
  const read = await store.read(after, limit)
  assert.ok(typeof read === 'object', `read(${String(after)}) answered ${String(read)}`)
  return read
}

/** Every event after `after`, in pages of `limit`, and the position after the last. */
async function drain(
  store: EventStore,
  after: string | undefined,
  limit = 3,
): Promise<{ events: StoredEvent[]; next: string }> {
  const events: StoredEvent[] = []
  let position = after
  for (;;) {
    const answer = await page(store, position, limit)
    events.push(...answer.events)
    position = answer.next
    if (answer.events.length === 0) return { events, next: answer.next }
  }
}

/**
 * Reads from `after` until `count` events came (a storage may hand an event out some time after
 * its commit: PostgreSQL waits for older transactions of the cluster to end), or 20 s passed.
 */
async function collect(
  store: EventStore,
  after: string | undefined,
  count: number,
  limit = 3,
): Promise<{ events: StoredEvent[]; next: string }> {
  const events: StoredEvent[] = []
  let position = after
  const deadline = Date.now() + 20_000
  for (;;) {
    const answer = await page(store, position, limit)
    events.push(...answer.events)
    position = answer.next
    if (events.length >= count || Date.now() > deadline) return { events, next: answer.next }
    if (answer.events.length === 0) await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/**
 * The change feed (D33): every change a `BeneficiaryStore` writes has its event, written in the
 * same transaction, and a consumer that resumes from each `next` sees every committed change
 * once, each record's in the order of its changes, however many writers run at once.
 */
export function describeChangeFeedContract(storage: CurrentStorage): void {
  describe('change feed', () => {
    it('reports a create, an update, a status change and a delete, with names and no values', async () => {
      const store = feed(storage)
      const start = (await drain(store, undefined)).next
      const record = await insertBeneficiary(storage(), newBeneficiary({ email: 'a@example.org' }))
      const updated = nextVersion(record, { phone: '+390612345678' }, T0 + SECOND)
      const entry = historyEntry('updated', T0 + SECOND, [
        { field: 'phone', old: null, new: '+390612345678' },
      ])
      assert.equal(await storage().beneficiaries.update(record, updated, entry), 'done')
      const activated = nextVersion(updated, { status: 'active' }, T0 + 2 * SECOND)
      const status = historyEntry('status_changed', T0 + 2 * SECOND, [
        { field: 'status', old: 'pending', new: 'active' },
        { field: 'reason', old: null, new: 'checked' },
      ])
      assert.equal(await storage().beneficiaries.update(updated, activated, status), 'done')
      const removed = historyEntry('deleted', T0 + 3 * SECOND)
      assert.equal(await storage().beneficiaries.remove(record.id, undefined, removed), 'done')

      const { events, next } = await collect(store, start, 4, 2)
      assert.deepEqual(
        events.map(({ position: _p, ...event }) => event),
        [
          {
            action: 'created',
            beneficiaryId: record.id,
            at: T0,
            clientId: 'client-1',
            requestId: `req-created-${T0}`,
            changedFields: ['first_name', 'last_name'],
          },
          {
            action: 'updated',
            beneficiaryId: record.id,
            at: T0 + SECOND,
            clientId: 'client-1',
            requestId: `req-updated-${T0 + SECOND}`,
            changedFields: ['phone'],
          },
          {
            action: 'status_changed',
            beneficiaryId: record.id,
            at: T0 + 2 * SECOND,
            clientId: 'client-1',
            requestId: `req-status_changed-${T0 + 2 * SECOND}`,
            changedFields: ['status', 'reason'],
          },
          {
            action: 'deleted',
            beneficiaryId: record.id,
            at: T0 + 3 * SECOND,
            clientId: 'client-1',
            requestId: `req-deleted-${T0 + 3 * SECOND}`,
            changedFields: [],
          },
        ],
      )
      const text = JSON.stringify(events)
      for (const value of ['Mario', 'Rossi', 'a@example.org', '+390612345678', 'checked']) {
        assert.ok(!text.includes(value), `an event carries ${value}`)
      }
      // Each event's position resumes right after it; an empty answer keeps the position.
      assert.deepEqual((await page(store, events[1]!.position, 1)).events[0], events[2])
      assert.deepEqual((await page(store, next, 10)).events, [])
    })

    it('writes no event for a change that does not happen', async () => {
      const store = feed(storage)
      const record = await insertBeneficiary(storage())
      const start = (await collect(store, undefined, 1)).next
      const stale = { ...record, version: record.version + 5 }
      const next = nextVersion(stale, { phone: '+390612345678' }, T0 + SECOND)
      const entry = historyEntry('updated', T0 + SECOND)
      assert.equal(await storage().beneficiaries.update(stale, next, entry), 'conflict')
      const removed = historyEntry('deleted', T0 + SECOND)
      assert.equal(await storage().beneficiaries.remove(record.id, 99, removed), 'conflict')
      assert.equal(
        await storage().beneficiaries.remove(record.id + 1000, undefined, removed),
        'missing',
      )
      // A change after them: once its event is read, any event of theirs would have been too.
      const marker = await insertBeneficiary(storage())
      const { events } = await collect(store, start, 1)
      assert.deepEqual(
        events.map((event) => [event.action, event.beneficiaryId]),
        [['created', marker.id]],
      )
      assert.deepEqual((await page(store, events[0]!.position, 10)).events, [])
    })

    it('starts a new follower at the end: only later changes come after it', async () => {
      const store = feed(storage)
      await insertBeneficiary(storage())
      await collect(store, undefined, 1)
      const end = await store.end()
      const later = await insertBeneficiary(storage(), newBeneficiary({ email: 'b@example.org' }))
      const { events } = await collect(store, end, 1)
      assert.deepEqual(
        events.map((event) => event.beneficiaryId),
        [later.id],
      )
    })

    it('answers invalid for a position it never hands out', async () => {
      const store = feed(storage)
      for (const position of ['x', '1.2.3.4.5', '-1', '']) {
        assert.equal(await store.read(position, 10), 'invalid', position)
      }
    })

    it('expires a position older than the events kept, and purges in batches', async () => {
      const store = feed(storage)
      const start = (await drain(store, undefined)).next
      for (let i = 0; i < 5; i++) {
        await insertBeneficiary(
          storage(),
          newBeneficiary({ created_at: T0 + i, updated_at: T0 + i }),
        )
      }
      const first = (await collect(store, start, 1, 1)).events[0]!
      assert.equal(await store.purge(T0 + 2, 1), 1)
      assert.equal(await store.purge(T0 + 2, 10), 1)
      assert.equal(await store.purge(T0 + 2, 10), 0)
      assert.equal(await store.read(start, 10), 'expired')
      assert.equal(await store.read(first.position, 10), 'expired')
      const kept = await collect(store, undefined, 3)
      assert.deepEqual(
        kept.events.map((event) => event.at),
        [T0 + 2, T0 + 3, T0 + 4],
      )
    })

    it(`gives ${CONSUMERS} consumers every change of ${WRITERS} concurrent writers once, in each record's order`, async (t) => {
      const store = feed(storage)
      const start = (await drain(store, undefined)).next
      /** Request ids of the acknowledged changes, by record, in the order they were made. */
      const acknowledged = new Map<number, string[]>()
      let stop = false
      let serial = 0
      const ack = (id: number, requestId: string): void => {
        const list = acknowledged.get(id) ?? []
        list.push(requestId)
        acknowledged.set(id, list)
      }
      const entry = (action: HistoryAction, writer: number) => ({
        ...historyEntry(action, T0 + serial, []),
        request_id: `w${writer}-${++serial}`,
      })

      async function writer(n: number): Promise<void> {
        const ids: number[] = []
        while (!stop) {
          // A storage that answers without I/O (memory) would never let the timer fire.
          await new Promise((resolve) => setImmediate(resolve))
          const roll = serial % 7
          if (ids.length === 0 || roll === 0) {
            const created = entry('created', n)
            const record = createdRecord(
              await storage().beneficiaries.create(newBeneficiary({ last_name: `W${n}` }), created),
            )
            ack(record.id, created.request_id)
            ids.push(record.id)
            continue
          }
          // Writers share records: two of them may race for one, and one loses its version.
          const id = ids[serial % ids.length]!
          const current = await storage().beneficiaries.get(id)
          if (current === undefined) continue
          if (roll === 6) {
            const removed = entry('deleted', n)
            if ((await storage().beneficiaries.remove(id, current.version, removed)) === 'done') {
              ack(id, removed.request_id)
            }
            continue
          }
          const changed = entry('updated', n)
          const next = nextVersion(current, { phone: `+39${serial}` }, T0 + serial)
          if ((await storage().beneficiaries.update(current, next, changed)) === 'done') {
            ack(id, changed.request_id)
          }
        }
      }

      async function consumer(): Promise<StoredEvent[]> {
        const seen: StoredEvent[] = []
        let position = start
        let quiet = 0
        // Reads until the writers stop and two reads in a row find nothing more.
        while (!stop || quiet < 2) {
          await new Promise((resolve) => setImmediate(resolve))
          const answer = await page(store, position, 17)
          seen.push(...answer.events)
          position = answer.next
          quiet = stop && answer.events.length === 0 ? quiet + 1 : 0
          await new Promise((resolve) => setTimeout(resolve, answer.events.length === 0 ? 5 : 1))
        }
        return seen
      }

      const consumers = Array.from({ length: CONSUMERS }, () => consumer())
      const writers = Array.from({ length: WRITERS }, (_, n) => writer(n))
      await new Promise((resolve) => setTimeout(resolve, RUN_MS))
      stop = true
      await Promise.all(writers)
      const seenByEach = await Promise.all(consumers)

      const total = [...acknowledged.values()].reduce((sum, list) => sum + list.length, 0)
      t.diagnostic(`${total} changes acknowledged in ${RUN_MS} ms`)
      assert.ok(total >= 30, `only ${total} changes in ${RUN_MS} ms`)
      for (const seen of seenByEach) {
        const byRecord = new Map<number, string[]>()
        const once = new Map<string, string>()
        for (const event of seen) {
          const before = once.get(event.requestId)
          assert.equal(
            before,
            undefined,
            `event ${event.requestId} seen twice: ${before}, ${event.position}`,
          )
          once.set(event.requestId, event.position)
          const list = byRecord.get(event.beneficiaryId) ?? []
          list.push(event.requestId)
          byRecord.set(event.beneficiaryId, list)
        }
        assert.equal(seen.length, total, 'every acknowledged change seen, and nothing else')
        assert.deepEqual(byRecord, acknowledged)
      }
    })
  })
}
