import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { describe, it } from 'node:test'
import { importWithPeers, MissingPeerDependencyError, type PeerPackage } from '../../core/index.js'

// Names no one installs: the module loader's real "not found", not a simulated one.
const ABSENT_ESM = 'beneficiary-test-absent-driver'
const ABSENT_CJS = 'beneficiary-test-absent-helper'
const PEERS: readonly PeerPackage[] = [
  { name: ABSENT_ESM, range: '^2.1.0' },
  { name: ABSENT_CJS, range: '~0.3.0' },
]
const require = createRequire(import.meta.url)

describe('importWithPeers', () => {
  it('turns ESM "cannot find package" into an error naming every package and the command', async () => {
    const specifier = ABSENT_ESM
    const error = await importWithPeers('the test feature', PEERS, () => import(specifier)).then(
      () => assert.fail('the absent package loaded'),
      (thrown: unknown) => thrown,
    )
    assert.ok(error instanceof MissingPeerDependencyError)
    assert.equal(error.code, 'ERR_MISSING_PEER_DEPENDENCY')
    assert.equal(error.name, 'MissingPeerDependencyError')
    assert.equal(error.feature, 'the test feature')
    assert.deepEqual(error.missing, [ABSENT_ESM])
    assert.deepEqual(error.packages, PEERS)
    assert.equal((error.cause as { code?: string }).code, 'ERR_MODULE_NOT_FOUND')
    assert.equal(
      error.message,
      `the test feature needs ${ABSENT_ESM} and ${ABSENT_CJS}, which the application installs itself (${ABSENT_ESM} is missing): npm install "${ABSENT_ESM}@^2.1.0" "${ABSENT_CJS}@~0.3.0"`,
    )
  })

  it('recognises CommonJS "cannot find module" too (an installed package requiring another)', async () => {
    const error = await importWithPeers(
      'the test feature',
      PEERS,
      async () => require(ABSENT_CJS) as unknown,
      'or do without it.',
    ).catch((thrown: unknown) => thrown)
    assert.ok(error instanceof MissingPeerDependencyError)
    assert.deepEqual(error.missing, [ABSENT_CJS])
    assert.ok(error.message.endsWith(`"${ABSENT_CJS}@~0.3.0" or do without it.`), error.message)
    assert.ok(error.message.includes(`(${ABSENT_CJS} is missing)`))
  })

  it('rethrows any other failure as it is: another missing package, or an error inside one', async () => {
    const other = 'beneficiary-test-unlisted-package'
    const unlisted = await importWithPeers('the test feature', PEERS, () => import(other)).catch(
      (thrown: unknown) => thrown,
    )
    assert.ok(!(unlisted instanceof MissingPeerDependencyError))
    assert.equal((unlisted as { code?: string }).code, 'ERR_MODULE_NOT_FOUND')
    const inside = new Error(`Cannot find package '${ABSENT_ESM}'`)
    assert.equal(
      await importWithPeers('the test feature', PEERS, () => Promise.reject(inside)).catch(
        (thrown: unknown) => thrown,
      ),
      inside,
      'a message alone, without the loader code, is not a missing package',
    )
    assert.equal(
      await importWithPeers('the test feature', PEERS, () => Promise.reject('text')).catch(
        (thrown: unknown) => thrown,
      ),
      'text',
    )
  })

  it('resolves with what the import gives when the packages are there', async () => {
    const loaded = await importWithPeers('the test feature', PEERS, () => import('node:path'))
    assert.equal(typeof loaded.join, 'function')
  })

  it('names one package, and several missing ones, in plain words', () => {
    const one = new MissingPeerDependencyError('x', [{ name: 'pg', range: '^8' }], ['pg'])
    assert.equal(
      one.message,
      'x needs pg, which the application installs itself (pg is missing): npm install "pg@^8"',
    )
    const three = new MissingPeerDependencyError(
      'y',
      [
        { name: 'a', range: '1' },
        { name: 'b', range: '2' },
        { name: 'c', range: '3' },
      ],
      ['a', 'c'],
    )
    assert.match(three.message, /^y needs a, b and c, .* \(a and c are missing\): /)
    assert.ok(Object.isFrozen(three.packages) && Object.isFrozen(three.missing))
  })
})
