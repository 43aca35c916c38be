import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { PostgresBatcher } from '../../../adapters/postgres/postgres-batcher.js'
import { StorageUnavailableError } from '../../../core/errors.js'

/** A `run` that records its batches and answers each only when the test says so. */
function recorder<T>() {
  const batches: T[][] = []
  const release: (() => void)[] = []
  const run = (items: readonly T[]): Promise<readonly string[]> => {
    batches.push([...items])
    return new Promise((resolve) => release.push(() => resolve(items.map((i) => `r${String(i)}`))))
  }
  return { batches, release, run }
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))
/** Two turns: a batch that ended sends the next one in the turn after it settles. */
const turns = async (): Promise<void> => {
  await turn()
  await turn()
}

describe('PostgresBatcher', () => {
  it('sends calls made in one turn as one batch, each answered by its own result', async () => {
    const r = recorder<number>()
    const batcher = new PostgresBatcher(r.run, { inFlight: 2, size: 64, maxWaitMs: 60_000 })
    const calls = [1, 2, 3].map((i) => batcher.submit(i))
    await turn()
    assert.deepEqual(r.batches, [[1, 2, 3]])
    r.release.shift()!()
    assert.deepEqual(await Promise.all(calls), ['r1', 'r2', 'r3'])
  })

  it('sends a lone call of an idle batcher alone, in the next turn, and says so', async () => {
    const r = recorder<number>()
    const sizes: number[] = []
    const batcher = new PostgresBatcher(
      r.run,
      { inFlight: 1, size: 64, maxWaitMs: 60_000 },
      { onSend: (size) => sizes.push(size) },
    )
    const call = batcher.submit(7)
    await turn()
    assert.deepEqual(r.batches, [[7]])
    assert.deepEqual(sizes, [1])
    r.release.shift()!()
    assert.equal(await call, 'r7')
  })

  it('holds calls while inFlight batches run, then sends those waiting together', async () => {
    const r = recorder<number>()
    const batcher = new PostgresBatcher(r.run, { inFlight: 1, size: 64, maxWaitMs: 60_000 })
    const first = batcher.submit(1)
    await turn()
    const waiting = [2, 3, 4].map((i) => batcher.submit(i))
    await turn()
    await turn()
    assert.deepEqual(r.batches, [[1]], 'nothing more is sent while one batch runs')
    r.release.shift()!()
    assert.equal(await first, 'r1')
    await turns()
    assert.deepEqual(r.batches, [[1], [2, 3, 4]])
    r.release.shift()!()
    assert.deepEqual(await Promise.all(waiting), ['r2', 'r3', 'r4'])
  })

  it('cuts batches at size, and runs up to inFlight of them at once', async () => {
    const r = recorder<number>()
    const batcher = new PostgresBatcher(r.run, { inFlight: 2, size: 2, maxWaitMs: 60_000 })
    const calls = [1, 2, 3, 4, 5].map((i) => batcher.submit(i))
    await turn()
    assert.deepEqual(r.batches, [
      [1, 2],
      [3, 4],
    ])
    r.release.shift()!()
    await turns()
    assert.deepEqual(r.batches.at(-1), [5])
    r.release.shift()!()
    r.release.shift()!()
    assert.deepEqual(await Promise.all(calls), ['r1', 'r2', 'r3', 'r4', 'r5'])
  })

  it('fails a call that waited maxWaitMs while every batch ran, as a busy pool does', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] })
    let now = 1000
    const r = recorder<number>()
    const batcher = new PostgresBatcher(
      r.run,
      { inFlight: 1, size: 8, maxWaitMs: 5000 },
      { now: () => now },
    )
    const stuck = batcher.submit(1)
    await turn()
    const early = batcher.submit(2)
    now += 3000
    const late = batcher.submit(3)
    const failed = assert.rejects(early, (error: unknown) => {
      assert.ok(error instanceof StorageUnavailableError)
      assert.equal(error.reason, 'busy')
      return true
    })
    now += 2000
    t.mock.timers.tick(5000)
    await failed
    assert.deepEqual(r.batches, [[1]], 'the expired call was never sent')
    r.release.shift()!()
    assert.equal(await stuck, 'r1')
    await turns()
    assert.deepEqual(r.batches, [[1], [3]], 'the call still within its wait is sent')
    r.release.shift()!()
    assert.equal(await late, 'r3')
  })

  it('fails every call of a batch whose run throws, and goes on with the next', async () => {
    let fail = true
    const batcher = new PostgresBatcher(
      (items: readonly number[]) =>
        fail ? Promise.reject(new Error('down')) : Promise.resolve(items.map((i) => i * 2)),
      { inFlight: 1, size: 8, maxWaitMs: 60_000 },
    )
    const failed = await Promise.allSettled([batcher.submit(1), batcher.submit(2)])
    assert.deepEqual(
      failed.map((s) => (s.status === 'rejected' ? (s.reason as Error).message : s.value)),
      ['down', 'down'],
    )
    fail = false
    assert.deepEqual(await Promise.all([batcher.submit(3), batcher.submit(4)]), [6, 8])
  })

  it('fails the calls of a batch answered with the wrong number of results', async () => {
    const batcher = new PostgresBatcher(() => Promise.resolve([1]), {
      inFlight: 1,
      size: 8,
      maxWaitMs: 60_000,
    })
    await assert.rejects(
      Promise.all([batcher.submit('a'), batcher.submit('b')]),
      /a batch of 2 answered 1/,
    )
  })

  it('refuses limits below one', () => {
    const run = (): Promise<never[]> => Promise.resolve([])
    for (const limits of [
      { inFlight: 0, size: 1, maxWaitMs: 1 },
      { inFlight: 1, size: 0, maxWaitMs: 1 },
      { inFlight: 1, size: 1, maxWaitMs: 0 },
    ]) {
      assert.throws(() => new PostgresBatcher(run, limits), TypeError)
    }
  })
})
