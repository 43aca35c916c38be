import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { MemoryStorage } from '../../adapters/memory/index.js'
import { openSqliteStorage } from '../../adapters/sqlite/index.js'
import { AccessLogRetention } from '../../core/access-log-retention.js'
import { FakeClock } from '../../core/fake-clock.js'
import type { AccessLogStore } from '../../core/ports/access-log-store.js'
import { DAY_MS } from '../../core/time.js'

const T0 = Date.UTC(2026, 0, 1)

async function fill(log: AccessLogStore, count: number, at: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const wait = log.record({
      at: at + i,
      client_id: 'cl_a',
      request_id: `r${i}`,
      operation: 'get',
      beneficiary_ids: [1 + (i % 7)],
      purpose: null,
    })
    if (wait !== undefined) await wait
  }
  await log.flush()
}

for (const [name, open] of [
  ['memory', async () => new MemoryStorage()],
  ['sqlite', () => openSqliteStorage({ path: ':memory:' })],
] as const) {
  describe(`access-log retention on ${name} (D37)`, () => {
    it('purges only what is older than the retention, a batch at a time, as the clock moves', async () => {
      const storage = await open()
      try {
        const log = storage.accessLog
        const clock = new FakeClock(T0)
        await fill(log, 25, T0)
        await fill(log, 5, T0 + 10 * DAY_MS)
        const retention = new AccessLogRetention(log, clock, { days: 400, batchSize: 10 })
        assert.equal(await retention.purgeBatch(), 0)
        clock.advance(400 * DAY_MS + 25)
        assert.deepEqual([await retention.purgeBatch(), await retention.purgeBatch()], [10, 10])
        assert.equal(await retention.purgeBatch(), 5)
        assert.equal(await retention.purgeBatch(), 0)
        assert.equal(retention.purged, 25)
        assert.equal((await log.scan({ limit: 100 })).length, 5)
        clock.advance(10 * DAY_MS)
        assert.equal(await retention.purgeBatch(), 5)
        assert.deepEqual(await log.scan({ limit: 100 }), [])
      } finally {
        await storage.close()
      }
    })

    it('runs by itself once started and stops cleanly', async () => {
      const storage = await open()
      try {
        const clock = new FakeClock(T0 + 500 * DAY_MS)
        await fill(storage.accessLog, 30, T0)
        const retention = new AccessLogRetention(storage.accessLog, clock, {
          batchSize: 10,
          pauseMs: 10,
        })
        retention.start()
        // Real time passes here only for the timers that pace the batches (10 ms apart).
        while (retention.purged < 30) await new Promise((resolve) => setTimeout(resolve, 5))
        await retention.stop()
        assert.deepEqual(await storage.accessLog.scan({ limit: 100 }), [])
      } finally {
        await storage.close()
      }
    })

    it('purges history only when a maximum age is set, by the same clock', async () => {
      const storage = await open()
      try {
        const clock = new FakeClock(T0)
        const record = {
          first_name: 'Anna',
          last_name: 'Rossi',
          email: 'anna@example.org',
          phone: null,
          date_of_birth: null,
          fiscal_code: null,
          address: null,
          metadata: {},
          status: 'pending' as const,
          created_at: T0,
          updated_at: T0,
        }
        const created = await storage.beneficiaries.create(record, {
          at: T0,
          action: 'created',
          client_id: 'cl_a',
          request_id: 'r1',
          changes: [],
        })
        assert.equal(created.kind, 'created')
        const id = created.kind === 'created' ? created.record.id : 0
        clock.advance(1000 * DAY_MS)
        const keeping = new AccessLogRetention(
          storage.accessLog,
          clock,
          {},
          storage.historyRetention,
        )
        await keeping.purgeBatch()
        assert.equal((await storage.beneficiaries.history(id, 0, 10))?.total, 1)
        const ageing = new AccessLogRetention(
          storage.accessLog,
          clock,
          { historyDays: 999 },
          storage.historyRetention,
        )
        assert.equal(await ageing.purgeBatch(), 1)
        assert.equal(ageing.purgedHistory, 1)
        assert.equal((await storage.beneficiaries.history(id, 0, 10))?.total, 0)
      } finally {
        await storage.close()
      }
    })

    it('refuses options that are not positive integers', () => {
      const log = new MemoryStorage().accessLog
      assert.throws(() => new AccessLogRetention(log, new FakeClock(T0), { days: 0 }), TypeError)
      assert.throws(
        () => new AccessLogRetention(log, new FakeClock(T0), { batchSize: 1.5 }),
        TypeError,
      )
    })
  })
}
