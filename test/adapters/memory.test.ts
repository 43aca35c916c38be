import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { MemoryStorage } from '../../adapters/memory/index.js'
import { isDomainError } from '../../core/errors.js'
import { describeStorageContract } from '../contracts/storage.contract.js'
import {
  T0,
  clientRecord,
  createdEntry,
  fullBeneficiary,
  insertBeneficiary,
  listQuery,
  sessionRecord,
} from '../contracts/storage-fixtures.js'

function memoryStorage(storage: unknown): MemoryStorage {
  assert.ok(storage instanceof MemoryStorage)
  return storage
}

describeStorageContract({
  name: 'memory',
  create: async () => new MemoryStorage(),
  destroy: (storage) => storage.close(),
  retainedHistory: async (storage, id) => memoryStorage(storage).beneficiaries.retainedHistory(id),
})

describe('MemoryStorage beyond the contract', () => {
  it('hands out frozen records, summaries, history entries and clients', async () => {
    const storage = new MemoryStorage()
    const record = await insertBeneficiary(storage, fullBeneficiary())
    const read = (await storage.beneficiaries.get(record.id))!
    assert.ok(Object.isFrozen(record) && Object.isFrozen(read))
    assert.ok(Object.isFrozen(read.address) && Object.isFrozen(read.metadata))
    assert.ok(Object.isFrozen((await storage.beneficiaries.list(listQuery())).items[0]))
    const entry = (await storage.beneficiaries.history(record.id, 0, 1))!.items[0]!
    assert.ok(Object.isFrozen(entry) && Object.isFrozen(entry.changes[0]))
    await storage.clients.insert(clientRecord())
    const client = (await storage.clients.get('client-1'))!
    assert.ok(Object.isFrozen(client) && Object.isFrozen(client.scopes))
  })

  it('keeps no property a caller adds beyond the record’s fields', async () => {
    const storage = new MemoryStorage()
    const input = { ...fullBeneficiary(), password: 'not a field' }
    const outcome = await storage.beneficiaries.create(input, createdEntry(input))
    assert.equal(outcome.kind, 'created')
    assert.equal(outcome.kind === 'created' && 'password' in outcome.record, false)
  })

  it('gives ids from 1 upwards', async () => {
    const storage = new MemoryStorage()
    assert.equal((await insertBeneficiary(storage)).id, 1)
    assert.equal((await insertBeneficiary(storage)).id, 2)
  })

  it('answers undefined for the retained history of an id never used', async () => {
    const storage = new MemoryStorage()
    assert.equal(storage.beneficiaries.retainedHistory(1), undefined)
  })

  it('answers false for a token whose session’s client does not exist', async () => {
    const storage = new MemoryStorage()
    await storage.sessions.insert(sessionRecord({ client_id: 'client-unknown' }))
    assert.equal(
      await storage.sessions.isTokenActive('session-1', 'jti-1', 'client-unknown'),
      false,
    )
  })

  it('refuses a second client or session with an id already stored', async () => {
    const storage = new MemoryStorage()
    await storage.clients.insert(clientRecord())
    await assert.rejects(storage.clients.insert(clientRecord({ name: 'Other' })), Error)
    await storage.sessions.insert(sessionRecord())
    await assert.rejects(
      storage.sessions.insert(sessionRecord({ refresh_token_hash: 'another-hash' })),
      Error,
    )
    await assert.rejects(storage.sessions.insert(sessionRecord({ id: 'session-2' })), Error)
    assert.equal((await storage.clients.get('client-1'))?.name, clientRecord().name)
  })

  it('rejects every call, ping included, once closed; closing twice is harmless', async () => {
    const storage = new MemoryStorage()
    await storage.close()
    await storage.close()
    // A plain Error, not a DomainError: a closed storage is the host's bug, not a request's.
    const closed = (error: unknown) => error instanceof Error && !isDomainError(error)
    await assert.rejects(storage.ping(), closed)
    await assert.rejects(storage.beneficiaries.get(1), closed)
    await assert.rejects(storage.beneficiaries.list(listQuery()), closed)
    await assert.rejects(storage.clients.list(), closed)
    await assert.rejects(storage.sessions.isTokenActive('session-1', 'jti-1', 'client-1'), closed)
    await assert.rejects(storage.signingKeys.list(), closed)
    assert.throws(() => storage.beneficiaries.retainedHistory(1), closed)
  })

  it('keeps separate data in separate instances', async () => {
    const first = new MemoryStorage()
    const second = new MemoryStorage()
    await insertBeneficiary(first)
    await first.clients.insert(clientRecord({ created_at: T0 }))
    assert.equal((await second.beneficiaries.list(listQuery())).total, 0)
    assert.deepEqual(await second.clients.list(), [])
  })
})
