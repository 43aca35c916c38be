import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { nameSortKey, searchTerms } from '../../core/search-terms.js'

describe('search terms (D16)', () => {
  it('strips accents, lower-cases and splits at anything but letters and digits', () => {
    assert.deepEqual(searchTerms("D'Angelo Nguyễn"), ['d', 'angelo', 'nguyen'])
    assert.deepEqual(searchTerms('Thi\u0323  Nguye\u0302\u0303n-2'), ['thi', 'nguyen', '2'])
  })

  it('folds letters whose mark does not decompose, and ligatures, to plain letters', () => {
    assert.deepEqual(searchTerms('Łódź Søren Đorđe Þór'), ['lodz', 'soren', 'dorde', 'thor'])
    assert.deepEqual(searchTerms('Straße STRASSE ẞ'), ['strasse', 'strasse', 'ss'])
    assert.deepEqual(searchTerms('Æsa Œlund Ħal Ŧ Diyarbakır Ĳssel Paŀla Ŋ'), [
      'aesa',
      'oelund',
      'hal',
      't',
      'diyarbakir',
      'ijssel',
      'palla',
      'n',
    ])
    assert.equal(nameSortKey('Łucja'), nameSortKey('lucja'))
  })

  it('treats other scripts alike: marks stripped, lower case', () => {
    assert.deepEqual(searchTerms('Ωμέγα Дмитрий 王'), ['ωμεγα', 'дмитрии', '王'])
  })
})
