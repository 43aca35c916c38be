import assert from 'node:assert/strict'
import { setImmediate as nextCheckPhase } from 'node:timers/promises'
import { describe, it } from 'node:test'
import { AnswerBatch } from '../../../server/transports/answer-batch.js'

describe('AnswerBatch', () => {
  it('holds the answers of one turn and writes them together, in order, after it', async () => {
    const batch = new AnswerBatch()
    const written: string[] = []
    batch.add(() => written.push('a'))
    await Promise.resolve()
    batch.add(() => written.push('b'))
    assert.deepEqual(written, [], 'nothing is written during the turn')
    await nextCheckPhase()
    assert.deepEqual(written, ['a', 'b'])
  })

  it('writes an answer added while a burst is written in the next one, without losing it', async () => {
    const batch = new AnswerBatch()
    const written: string[] = []
    batch.add(() => {
      written.push('first')
      batch.add(() => written.push('late'))
    })
    await nextCheckPhase()
    assert.deepEqual(written, ['first'])
    await nextCheckPhase()
    assert.deepEqual(written, ['first', 'late'])
  })

  it('starts a new burst in each turn', async () => {
    const batch = new AnswerBatch()
    let writes = 0
    for (let turn = 1; turn <= 3; turn++) {
      batch.add(() => writes++)
      await nextCheckPhase()
      assert.equal(writes, turn)
    }
  })
})
