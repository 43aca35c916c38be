import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { isCanonicalCompactJws } from '../../core/compact-jws.js'

describe('canonical compact JWS spelling (D3)', () => {
  it('takes three segments of unpadded base64url, the last one possibly empty', () => {
    for (const token of ['eyJh.eyJi.c2ln', 'AA.AAA.AAAA', 'eyJh.eyJi.', 'a-_Q.Zg.Zm8']) {
      assert.equal(isCanonicalCompactJws(token), true, token)
    }
  })

  it('refuses padding, foreign characters, a length one over, set unused bits and other shapes', () => {
    for (const token of [
      'eyJh.eyJi.c2ln=',
      'eyJh.eyJi.Zg==',
      'eyJh.eyJi.a+/Q',
      'eyJh.eyJi.c2l n',
      'eyJh.eyJi.c2lé',
      'eyJh.eyJi.c2lnA',
      'eyJh.eyJi.Zh',
      'eyJh.eyJi.Zm9',
      'eyJh.eyJi',
      'eyJh.eyJi.c2ln.c2ln',
      '',
    ]) {
      assert.equal(isCanonicalCompactJws(token), false, token)
    }
  })
})
