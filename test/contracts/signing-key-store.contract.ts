import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { CurrentStorage } from './contract-harness.js'
import { SECOND, T0, signingKey } from './storage-fixtures.js'

/** Registers every behaviour of `SigningKeyStore` (D3). */
export function describeSigningKeyStoreContract(storage: CurrentStorage): void {
  const store = () => storage().signingKeys

  describe('signing keys (D3)', () => {
    it('lists no keys at first (D3)', async () => {
      assert.deepEqual(await store().list(), [])
    })

    it('lists every key, oldest first, whatever the order of insertion (D3)', async () => {
      const newest = signingKey({ kid: 'kid-c', created_at: T0 + 2 * SECOND })
      const oldest = signingKey({ kid: 'kid-a', created_at: T0 })
      const middle = signingKey({ kid: 'kid-b', created_at: T0 + SECOND })
      for (const key of [newest, oldest, middle]) await store().insert(key)
      assert.deepEqual(await store().list(), [oldest, middle, newest])
    })

    it('ignores a key whose kid exists, keeping the first one (D3)', async () => {
      const first = signingKey()
      await store().insert(first)
      await store().insert(signingKey({ secret: 'another-secret', created_at: T0 + SECOND }))
      assert.deepEqual(await store().list(), [first])
    })

    it('keeps one key when two processes insert the same kid at once (D3)', async () => {
      await Promise.all([
        store().insert(signingKey()),
        store().insert(signingKey({ secret: 'another-secret' })),
      ])
      const keys = await store().list()
      assert.equal(keys.length, 1)
      assert.equal(keys[0]?.kid, 'kid-1')
    })
  })
}
