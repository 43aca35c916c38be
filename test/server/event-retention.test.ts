import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { MemoryStorage } from '../../adapters/memory/index.js'
import { FakeClock } from '../../core/index.js'
import {
  EVENT_PURGE_BATCH,
  EventRetention,
  purgeExpiredEvents,
} from '../../server/event-retention.js'
import { createdEntry, newBeneficiary } from '../contracts/storage-fixtures.js'

const DAY_MS = 86_400_000

async function writeEvents(storage: MemoryStorage, count: number, at: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const record = newBeneficiary({ created_at: at, updated_at: at })
    await storage.beneficiaries.create(record, createdEntry(record))
  }
}

describe('the retention of the change feed (D33)', () => {
  it('purges every event past the retention, in batches, and keeps the rest', async () => {
    const storage = new MemoryStorage()
    const clock = new FakeClock()
    await writeEvents(storage, 2 * EVENT_PURGE_BATCH + 7, clock.now())
    clock.advance(10 * DAY_MS)
    await writeEvents(storage, 3, clock.now())
    clock.advance(25 * DAY_MS)
    assert.equal(await purgeExpiredEvents(storage.events, clock, 30), 2 * EVENT_PURGE_BATCH + 7)
    assert.equal(await purgeExpiredEvents(storage.events, clock, 30), 0)
    const kept = await storage.events.read(undefined, 100)
    assert.ok(typeof kept === 'object')
    assert.equal(kept.events.length, 3)
    assert.equal(await storage.events.read('1', 10), 'expired')
  })

  it('runs at start, and stops with the server; a failed purge is reported, not thrown', async () => {
    const storage = new MemoryStorage()
    const clock = new FakeClock()
    await writeEvents(storage, 4, clock.now())
    clock.advance(31 * DAY_MS)
    const errors: unknown[] = []
    const retention = new EventRetention(storage.events, clock, 30, (error) => errors.push(error))
    retention.start()
    await retention.stop()
    const left = await storage.events.read(undefined, 10)
    assert.ok(typeof left === 'object')
    assert.deepEqual(left.events, [])
    await storage.close()
    const failing = new EventRetention(storage.events, clock, 30, (error) => errors.push(error))
    failing.start()
    await failing.stop()
    assert.equal(errors.length, 1)
  })
})
