import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { canonicalJson } from '../../core/canonical-json.js'

describe('canonicalJson', () => {
  it('sorts keys at every level, so that key order never changes the text', () => {
    const a = { b: 1, a: { d: [3, { z: true, y: null }], c: 'x' } }
    const b = { a: { c: 'x', d: [3, { y: null, z: true }] }, b: 1 }
    assert.equal(canonicalJson(a), '{"a":{"c":"x","d":[3,{"y":null,"z":true}]},"b":1}')
    assert.equal(canonicalJson(b), canonicalJson(a))
  })

  it('keeps array order, and reads back as the value it was made from', () => {
    const value = { list: [2, 1, [], {}], text: 'quote " back\\slash \n é 𝄞', n: -1.5e-7 }
    const text = canonicalJson(value)
    assert.equal(text.startsWith('{"list":[2,1,[],{}],'), true)
    assert.deepEqual(JSON.parse(text), value)
  })

  it('writes plain values as JSON does, and undefined as null', () => {
    assert.equal(canonicalJson('a'), '"a"')
    assert.equal(canonicalJson(null), 'null')
    assert.equal(canonicalJson(undefined), 'null')
    assert.equal(canonicalJson([undefined]), '[null]')
    assert.equal(canonicalJson({}), '{}')
  })
})
