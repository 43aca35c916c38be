import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { BENEFICIARY_STATUSES } from '../../core/beneficiary-fields.js'
import type { BeneficiarySummary } from '../../core/beneficiary.js'
import { JsonBytes } from '../../core/json-bytes.js'
import { listItemOf, writeListItems } from '../../core/representation.js'

const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes)

/** Texts with what JSON escapes, what UTF-8 writes in 2, 3 and 4 bytes, and lone surrogates. */
const awkwardText = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  fc.string({ unit: 'binary' }),
  fc.constantFrom('"', '\\', '\u0000', '\n', '\u001f', '\u007f', '\u2028', 'Łucja', '😀', '\ud800'),
)

const instant = fc.oneof(
  fc.integer({ min: 0, max: 4_102_444_800_000 }),
  // Years outside 1000–9999 take `Date#toISOString`'s own form.
  fc.constantFrom(-62_198_755_200_001, 253_402_300_800_000, -1),
)

const summary: fc.Arbitrary<BeneficiarySummary> = fc.record({
  id: fc.oneof(fc.integer({ min: 1, max: 2 ** 31 }), fc.constantFrom(9, 10, 99, 100, 1e15)),
  first_name: awkwardText,
  last_name: awkwardText,
  email: awkwardText,
  phone: fc.option(awkwardText),
  status: fc.constantFrom(...BENEFICIARY_STATUSES),
  created_at: instant,
  updated_at: instant,
})

describe('JsonBytes', () => {
  it('writes a page of list items as the UTF-8 of JSON.stringify of their objects', () => {
    const out = new JsonBytes(8)
    fc.assert(
      fc.property(fc.array(summary, { maxLength: 12 }), (summaries) => {
        writeListItems(out, summaries)
        const expected = JSON.stringify(summaries.map(listItemOf))
        assert.equal(decode(out.take()), expected)
        assert.equal(out.length, 0, 'take empties the writer')
      }),
      { numRuns: 2_000 },
    )
  })

  it('writes numbers as JSON.stringify does, at every count of digits', () => {
    const out = new JsonBytes(1)
    const numbers = [0, 1, 9, 10, 11, 99, 100, 999, 1000, 123456789, 2 ** 53 - 1, -1, 0.5, 1e21]
    for (let power = 1; power < 1e16; power *= 10) numbers.push(power - 1, power, power + 1)
    for (const value of numbers) {
      out.number(value)
      assert.equal(decode(out.take()), JSON.stringify(value), String(value))
    }
  })

  it('starts clean after a text that failed midway, once reset', () => {
    const out = new JsonBytes()
    const broken = { ...fc.sample(summary, { numRuns: 1, seed: 3 })[0]!, created_at: NaN }
    assert.throws(() => writeListItems(out, [broken]), RangeError)
    assert.ok(out.length > 0, 'the failed text is still there')
    out.reset()
    writeListItems(out, [])
    assert.equal(decode(out.take()), '[]')
  })

  it('keeps what it wrote when it grows, and text made elsewhere as it is', () => {
    const out = new JsonBytes(2)
    out.char(0x5b)
    out.string('x'.repeat(100))
    out.text(',{"ü":null}]')
    assert.equal(decode(out.take()), `["${'x'.repeat(100)}",{"ü":null}]`)
  })
})
