import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { didYouMean, nearest } from '../../../server/cli/did-you-mean.js'

const SERVE = ['db', 'database-url', 'help', 'port', 'host', 'transport', 'rate-limit-write']

describe('nearest', () => {
  it('finds a name one typo away: a letter missing, added, changed, or two swapped', () => {
    assert.deepEqual(nearest('cout', ['count', 'seed']), ['count'])
    assert.deepEqual(nearest('portt', SERVE), ['port'])
    assert.deepEqual(nearest('hots', SERVE), ['host'])
    assert.deepEqual(nearest('prot', SERVE), ['port'])
    assert.deepEqual(nearest('Transprot', SERVE), ['transport'])
  })

  it('allows more typos in a longer name, and offers every name at the same distance', () => {
    assert.deepEqual(nearest('databse-ulr', SERVE), ['database-url'])
    assert.deepEqual(nearest('pst', ['port', 'post', 'host']), ['post'])
    assert.deepEqual(nearest('hst', ['port', 'post', 'host']), ['host'])
    assert.deepEqual(nearest('xost', ['post', 'host']), ['post', 'host'])
  })

  it('offers the names a shortened one begins', () => {
    assert.deepEqual(nearest('rate-limit', ['rate-limit-write', 'rate-limit-auth', 'port']), [
      'rate-limit-write',
      'rate-limit-auth',
    ])
  })

  it('offers nothing for a name that is not close to any', () => {
    assert.deepEqual(nearest('colour', SERVE), [])
    assert.deepEqual(nearest('launch', ['serve', 'clients', 'migrate', 'backup', 'seed']), [])
    assert.deepEqual(nearest('x', ['db']), [])
  })
})

describe('didYouMean', () => {
  it('asks about one name, two, or several, and says nothing for none', () => {
    assert.equal(didYouMean(['--count']), 'Did you mean --count?')
    assert.equal(didYouMean(['--a', '--b']), 'Did you mean --a or --b?')
    assert.equal(didYouMean(['--a', '--b', '--c']), 'Did you mean --a, --b or --c?')
    assert.equal(didYouMean([]), '')
  })
})
