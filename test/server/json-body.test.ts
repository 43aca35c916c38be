import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { isJsonContentType, MAX_JSON_DEPTH, parseJsonBody } from '../../server/json-body.js'
import { parseQueryString } from '../../server/query-string.js'
import { isSaneRequestId } from '../../server/request-id.js'

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text)

describe('JSON bodies (D12)', () => {
  it('D12: recognises JSON media types, with or without a UTF-8 charset', () => {
    for (const type of [
      'application/json',
      'application/json;charset=utf-8',
      'APPLICATION/JSON; Charset="UTF-8"',
      'application/problem+json',
      'application/json; boundary=x',
    ]) {
      assert.equal(isJsonContentType(type), true, type)
    }
    for (const type of [
      undefined,
      '',
      'text/json',
      'text/plain',
      'application/jsonx',
      'application/json; charset=latin1',
      'multipart/form-data',
    ]) {
      assert.equal(isJsonContentType(type), false, String(type))
    }
  })

  it('D12: parses JSON and refuses invalid UTF-8, malformed text and deep nesting', () => {
    assert.deepEqual(parseJsonBody(bytes('{"a":[1,{"b":"}]"}]}')), {
      ok: true,
      value: { a: [1, { b: '}]' }] },
    })
    assert.equal(parseJsonBody(Uint8Array.from([0x22, 0xff, 0x22])).ok, false)
    assert.equal(parseJsonBody(bytes('{"a":')).ok, false)
    assert.equal(parseJsonBody(bytes('')).ok, false)
    const deep = (n: number): string => '['.repeat(n) + ']'.repeat(n)
    assert.equal(parseJsonBody(bytes(deep(MAX_JSON_DEPTH))).ok, true)
    assert.equal(parseJsonBody(bytes(deep(MAX_JSON_DEPTH + 1))).ok, false)
    assert.equal(parseJsonBody(bytes(deep(100_000))).ok, false)
  })

  it('D12: brackets inside strings and escaped quotes do not count as nesting', () => {
    const text = JSON.stringify({ s: '['.repeat(100) + '\\"[[[' })
    assert.equal(parseJsonBody(bytes(text)).ok, true)
  })

  it('D12: refuses a key given twice in one object, naming it by its path, escapes decoded', () => {
    const refused = (text: string): string => {
      const result = parseJsonBody(bytes(text))
      assert.equal(result.ok, false, text)
      return (result as { message: string }).message
    }
    assert.equal(
      refused('{"first_name":"A","first_name":"B"}'),
      'The request body has the key "first_name" twice.',
    )
    assert.match(refused('{"address":{"city":"A", "city" : "B"}}'), /"address\.city"/)
    assert.match(refused('{"a":[{"b":1},{"c":1,"c":2}]}'), /"a\.1\.c"/)
    assert.match(refused('{"metadata":{"a":1,"\\u0061":2}}'), /"metadata\.a"/)
    assert.match(refused('{"__proto__":1,"__proto__":2}'), /"__proto__"/)
    assert.match(refused(`{"${'k'.repeat(300)}":1,"${'k'.repeat(300)}":2}`), /k…" twice/)
    // The same key in different objects, or as a value, is no repeat.
    for (const text of [
      '{"a":{"a":{"a":1}},"b":{"a":2}}',
      '[{"a":1},{"a":2}]',
      '{"a":"a","b":["a","a"],"c":{"a":"a"}}',
      '{"a\\"b":1,"a\\\\":2,"x":"\\",","y":1}',
    ]) {
      assert.equal(parseJsonBody(bytes(text)).ok, true, text)
    }
    // Malformed text is reported as such, whatever it repeats.
    assert.equal(refused('{"a":1,"a":'), 'The request body is not valid JSON.')
  })

  it('D8: __proto__ stays an own property and never reaches a prototype', () => {
    const result = parseJsonBody(bytes('{"__proto__":{"polluted":1}}'))
    assert.equal(result.ok, true)
    const value = (result as { value: object }).value
    assert.ok(Object.hasOwn(value, '__proto__'))
    assert.equal(Object.getPrototypeOf(value), Object.prototype)
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined)
  })
})

describe('query strings', () => {
  it('decodes names and values, keeps the first of repeated names, and has no prototype', () => {
    const query = parseQueryString('search=mario+ros%C3%AC&page=2&page=3&flag&=x&__proto__=1')!
    assert.equal(query['search'], 'mario rosì')
    assert.equal(query['page'], '2')
    assert.equal(query['flag'], '')
    assert.equal(query['__proto__'], '1')
    assert.equal(Object.getPrototypeOf(query), null)
  })

  it('answers undefined for broken percent-encoding', () => {
    assert.equal(parseQueryString('a=%ZZ'), undefined)
    assert.equal(parseQueryString('%E0%A4%A=1'), undefined)
  })
})

describe('request ids (D24)', () => {
  it('D24: accepts 1–128 characters of A–Z a–z 0–9 . _ : - only', () => {
    assert.equal(isSaneRequestId('a'), true)
    assert.equal(isSaneRequestId('Req-1.2_3:4'), true)
    assert.equal(isSaneRequestId('x'.repeat(128)), true)
    for (const id of ['', 'x'.repeat(129), 'a b', 'a/b', 'a;b', 'é', 'a\r\nb'])
      assert.equal(isSaneRequestId(id), false, id)
  })
})
