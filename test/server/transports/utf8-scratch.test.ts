import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Utf8Scratch } from '../../../server/transports/utf8-scratch.js'

describe('Utf8Scratch', () => {
  it("gives a text's UTF-8 bytes, in any script and past the first buffer's size", () => {
    const scratch = new Utf8Scratch()
    for (const text of [
      '',
      '{"first_name":"Ada"}',
      'Łucja Zoë 李 Ødegård 😀',
      'ü'.repeat(40_000),
      '\ud800 a lone surrogate',
    ]) {
      assert.deepEqual(Buffer.from(scratch.encode(text)), Buffer.from(text, 'utf8'))
    }
  })

  it('reuses its buffer from call to call, and hands a text it could not hold back as it is', () => {
    const scratch = new Utf8Scratch()
    const first = scratch.encode('first')
    const second = scratch.encode('second')
    assert.equal((first as Uint8Array).buffer, (second as Uint8Array).buffer)
    const huge = 'x'.repeat(2 * 1024 * 1024)
    assert.equal(scratch.encode(huge), huge)
  })
})
