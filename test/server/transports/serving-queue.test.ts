import assert from 'node:assert/strict'
import { setImmediate as nextCheckPhase } from 'node:timers/promises'
import { describe, it } from 'node:test'
import { AnswerBatch } from '../../../server/transports/answer-batch.js'
import { ServingQueue } from '../../../server/transports/serving-queue.js'

/** A queue whose items cost `costMs` each on a clock of its own, and what it served, by slice. */
function queueCosting(costMs: (item: number) => number) {
  let clock = 0
  const slices: number[][] = []
  let writes = 0
  let current: number[] | undefined
  const answers = {
    writeNow: () => {
      writes++
      current = undefined
    },
  }
  const queue = new ServingQueue<number>(
    (item) => {
      if (current === undefined) slices.push((current = []))
      current.push(item)
      clock += costMs(item)
    },
    answers,
    () => clock,
  )
  return { queue, slices, writes: () => writes }
}

/** Lets the queue's slices run: each takes one check phase of the event loop. */
async function turns(count: number): Promise<void> {
  for (let turn = 0; turn < count; turn++) await nextCheckPhase()
}

describe('ServingQueue', () => {
  it('serves every item in the order it came, none during the turn it was added in', async () => {
    const { queue, slices } = queueCosting(() => 0.01)
    for (let item = 1; item <= 5; item++) queue.add(item)
    assert.deepEqual(slices, [], 'nothing is served before the check phase')
    await turns(3)
    assert.deepEqual(slices.flat(), [1, 2, 3, 4, 5])
  })

  it('serves what arrives meanwhile after what came before it, in a later slice', async () => {
    const { queue, slices } = queueCosting(() => 1)
    for (let item = 1; item <= 30; item++) queue.add(item)
    await nextCheckPhase()
    // 0.1 ms a request at first: a slice of 20 (2 ms).
    assert.deepEqual(slices, [Array.from({ length: 20 }, (_, i) => i + 1)])
    queue.add(31)
    await turns(20)
    assert.deepEqual(
      slices.flat(),
      Array.from({ length: 31 }, (_, i) => i + 1),
    )
  })

  it('sizes a slice from what the last ones cost an item, from 1 to 64', async () => {
    const dear = queueCosting(() => 5)
    for (let item = 1; item <= 40; item++) dear.queue.add(item)
    await turns(4)
    // 5 ms an item measured: the estimate passes 2 ms at once, so one item a slice.
    assert.deepEqual(
      dear.slices.map((slice) => slice.length),
      [20, 1, 1, 1],
    )

    // 1 µs an item: the slices grow as the estimate falls (30 % of the way each time), to 64.
    const cheap = queueCosting(() => 0.001)
    for (let item = 1; item <= 400; item++) cheap.queue.add(item)
    await turns(7)
    assert.deepEqual(
      cheap.slices.map((slice) => slice.length),
      [20, 28, 40, 57, 64, 64, 64],
    )
  })

  it('writes the answers held before each slice, and stops once the queue is empty', async () => {
    const { queue, slices, writes } = queueCosting(() => 1)
    for (let item = 1; item <= 21; item++) queue.add(item)
    await turns(6)
    assert.equal(slices.length, 2)
    // Before each of the two slices, and at the check that found none left.
    assert.equal(writes(), 3)
    queue.add(22)
    await turns(2)
    assert.deepEqual(slices.at(-1), [22])
    assert.equal(writes(), 5)
  })

  it('writes an AnswerBatch’s answers at the next slice rather than at the end of its turn', async () => {
    const batch = new AnswerBatch()
    const written: string[] = []
    const queue = new ServingQueue<string>((item) => {
      batch.add(() => written.push(item))
    }, batch)
    queue.add('a')
    await nextCheckPhase()
    assert.deepEqual(written, [], 'held while its slice runs')
    await nextCheckPhase()
    assert.deepEqual(written, ['a'])
  })
})
