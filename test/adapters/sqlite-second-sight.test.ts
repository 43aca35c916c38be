import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { SecondSight } from '../../adapters/sqlite/sqlite-second-sight.js'

describe('SecondSight', () => {
  it('tells a key asked for again from one asked for the first time', () => {
    const asked = new SecondSight()
    assert.equal(asked.again('ros\u0000active'), false)
    assert.equal(asked.again('ros\u0000active'), true)
    assert.equal(asked.again('ros\u0000active'), true)
    assert.equal(asked.again('ros\u0000pending'), false)
    assert.equal(asked.again(''), false)
    assert.equal(asked.again(''), true)
  })

  it('remembers a key through thousands of others, and takes few of them for seen', () => {
    const asked = new SecondSight()
    assert.equal(asked.again('mario ros'), false)
    let seen = 0
    for (let i = 0; i < 5_000; i++) if (asked.again(`k${i}\u0000${i * 7}`)) seen++
    // 5,000 keys in 65,536 slots: a few may share a slot with one before, none its hash.
    assert.equal(seen, 0)
    assert.equal(asked.again('mario ros'), true)
  })
})
