import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { ClientRecord } from '../../core/ports/client-store.js'
import type { CurrentStorage } from './contract-harness.js'
import { SECOND, T0, clientRecord } from './storage-fixtures.js'

/** Registers every behaviour of `ClientStore` (D1). */
export function describeClientStoreContract(storage: CurrentStorage): void {
  const store = () => storage().clients

  describe('clients (D1)', () => {
    it('reads back every field of an inserted client', async () => {
      const client = clientRecord()
      await store().insert(client)
      assert.deepEqual(await store().get(client.id), client)
    })

    it('answers undefined for an unknown client id', async () => {
      await store().insert(clientRecord())
      assert.equal(await store().get('client-unknown'), undefined)
    })

    it('lists no clients at first', async () => {
      assert.deepEqual(await store().list(), [])
    })

    it('lists every client, oldest first, whatever the order of insertion', async () => {
      const newest = clientRecord({ id: 'client-c', created_at: T0 + 2 * SECOND, scopes: [] })
      const oldest = clientRecord({ id: 'client-a', created_at: T0, scopes: ['read'] })
      const middle = clientRecord({ id: 'client-b', created_at: T0 + SECOND })
      for (const client of [newest, oldest, middle]) await store().insert(client)
      assert.deepEqual(await store().list(), [oldest, middle, newest])
    })

    it('revokes a live client at the given time, and still returns it (D1)', async () => {
      await store().insert(clientRecord())
      assert.equal(await store().revoke('client-1', T0 + SECOND), true)
      const revoked = clientRecord({ revoked_at: T0 + SECOND })
      assert.deepEqual(await store().get('client-1'), revoked)
      assert.deepEqual(await store().list(), [revoked])
    })

    it('answers false when revoking a revoked client, keeping the first time (D1)', async () => {
      await store().insert(clientRecord())
      await store().revoke('client-1', T0 + SECOND)
      assert.equal(await store().revoke('client-1', T0 + 2 * SECOND), false)
      assert.equal((await store().get('client-1'))?.revoked_at, T0 + SECOND)
    })

    it('answers false when revoking an unknown client (D1)', async () => {
      await store().insert(clientRecord())
      assert.equal(await store().revoke('client-unknown', T0), false)
      assert.equal((await store().get('client-1'))?.revoked_at, null)
    })

    it('reads back a client inserted as already revoked', async () => {
      const client = clientRecord({ revoked_at: T0 + SECOND })
      await store().insert(client)
      assert.deepEqual(await store().get(client.id), client)
      assert.equal(await store().revoke(client.id, T0 + 2 * SECOND), false)
    })

    it('keeps what it stored when the caller later changes its input or a returned client', async () => {
      const client = structuredClone(clientRecord()) as ClientRecord
      await store().insert(client)
      Reflect.set(client, 'name', 'Changed')
      Reflect.set(client.scopes, 0, 'admin')
      const returned = (await store().get(client.id))!
      Reflect.set(returned, 'secret_hash', 'changed')
      Reflect.set(returned.scopes, 1, 'admin')
      assert.deepEqual(await store().get(client.id), clientRecord())
    })
  })
}
