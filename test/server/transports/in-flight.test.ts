import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { InFlight } from '../../../server/transports/in-flight.js'

const item = (name: string): { name: string } => ({ name })

describe('InFlight', () => {
  it('holds what was added until it is released, and counts it', () => {
    const inFlight = new InFlight<{ name: string }>()
    const a = item('a')
    const b = item('b')
    const slotA = inFlight.add(a)
    const slotB = inFlight.add(b)
    assert.equal(inFlight.size, 2)
    assert.deepEqual(inFlight.entries(), [
      [slotA, a],
      [slotB, b],
    ])
    inFlight.release(slotA, a)
    assert.equal(inFlight.size, 1)
    assert.deepEqual(inFlight.entries(), [[slotB, b]])
  })

  it('gives a released slot to the next item instead of growing', () => {
    const inFlight = new InFlight<{ name: string }>()
    const a = item('a')
    const slot = inFlight.add(a)
    inFlight.release(slot, a)
    const b = item('b')
    assert.equal(inFlight.add(b), slot)
    assert.deepEqual(inFlight.entries(), [[slot, b]])
  })

  it('ignores a second release, even once the slot holds another item', () => {
    const inFlight = new InFlight<{ name: string }>()
    const a = item('a')
    const slot = inFlight.add(a)
    inFlight.release(slot, a)
    inFlight.release(slot, a)
    assert.equal(inFlight.size, 0)
    const b = item('b')
    inFlight.add(b)
    inFlight.release(slot, a)
    assert.equal(inFlight.size, 1, 'the late release of a did not drop b')
    assert.deepEqual(inFlight.entries(), [[slot, b]])
    const c = item('c')
    assert.notEqual(inFlight.add(c), slot, 'the slot was not handed out twice')
  })

  it('lets the caller release while going through what entries returned', () => {
    const inFlight = new InFlight<{ name: string }>()
    for (const name of ['a', 'b', 'c']) inFlight.add(item(name))
    for (const [slot, held] of inFlight.entries()) inFlight.release(slot, held)
    assert.equal(inFlight.size, 0)
    assert.deepEqual(inFlight.entries(), [])
  })
})
