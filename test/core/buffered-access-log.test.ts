import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { BufferedAccessLog } from '../../core/buffered-access-log.js'
import { StorageUnavailableError } from '../../core/errors.js'
import type { AccessLogEntry, AccessLogTable } from '../../core/ports/access-log-store.js'

function entry(n: number): AccessLogEntry {
  return {
    at: n,
    client_id: 'cl_a',
    request_id: `r${n}`,
    operation: 'get',
    beneficiary_ids: [n],
    purpose: null,
  }
}

/** A table that keeps what it is given, and fails every append while `down`. */
class FlakyTable implements AccessLogTable {
  readonly batches: AccessLogEntry[][] = []
  down = false

  async append(entries: readonly AccessLogEntry[]): Promise<void> {
    if (this.down) throw new StorageUnavailableError('disk_full')
    this.batches.push([...entries])
  }
  async forBeneficiary() {
    return { items: [], total: 0 }
  }
  async scan() {
    return []
  }
  async purge() {
    return 0
  }
}

describe('BufferedAccessLog (D35)', () => {
  it('writes a full batch at once, in order, and the rest on flush', async () => {
    const table = new FlakyTable()
    const log = new BufferedAccessLog(table, { batchSize: 3, flushMs: 60_000 })
    for (let n = 1; n <= 4; n++) assert.equal(log.record(entry(n)), undefined)
    await log.flush()
    assert.deepEqual(
      table.batches.map((batch) => batch.map((e) => e.at)),
      [[1, 2, 3], [4]],
    )
    assert.deepEqual(log.stats, { written: 4, pending: 0, failedFlushes: 0, waits: 0, refused: 0 })
    await log.close()
    assert.throws(() => log.record(entry(5)), /closed/)
  })

  it('keeps a failed batch for the next write, and bounds memory with back-pressure', async () => {
    const table = new FlakyTable()
    table.down = true
    const log = new BufferedAccessLog(table, {
      batchSize: 2,
      maxPending: 3,
      flushMs: 60_000,
      maxWaitMs: 30,
    })
    const failures: unknown[] = []
    log.observeFailures((error) => failures.push(error))
    for (let n = 1; n <= 3; n++) log.record(entry(n))
    await assert.rejects(log.flush(), StorageUnavailableError)
    assert.equal(log.stats.pending, 3)
    // Full, and the storage takes nothing: the request is refused with a 503 in time.
    const refused = log.record(entry(4))
    assert.ok(refused instanceof Promise)
    await assert.rejects(refused, StorageUnavailableError)
    assert.equal(log.stats.refused, 1)
    assert.equal(log.stats.pending, 3)

    // Full while the storage is back: the request waits for room, then its entry is queued.
    table.down = false
    const waiting = log.record(entry(5))
    assert.ok(waiting instanceof Promise)
    await waiting
    await log.flush()
    assert.deepEqual(
      table.batches.flat().map((e) => e.at),
      [1, 2, 3, 5],
    )
    assert.equal(log.stats.waits, 2)
    assert.ok(failures.length >= 1)
    await log.close()
  })

  it('refuses options that are not positive integers', () => {
    assert.throws(() => new BufferedAccessLog(new FlakyTable(), { batchSize: 0 }), TypeError)
    assert.throws(() => new BufferedAccessLog(new FlakyTable(), { maxWaitMs: 1.5 }), TypeError)
  })
})
