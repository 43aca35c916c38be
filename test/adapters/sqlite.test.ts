import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SqliteStorage, openSqliteStorage } from '../../adapters/sqlite/index.js'
import type { Storage } from '../../core/ports/storage.js'
import { describeStorageContract } from '../contracts/storage.contract.js'

function sqliteStorage(storage: Storage): SqliteStorage {
  assert.ok(storage instanceof SqliteStorage)
  return storage
}

const directories = new WeakMap<Storage, string>()

describeStorageContract({
  name: 'sqlite (file)',
  create: async () => {
    const directory = await mkdtemp(join(tmpdir(), 'sqlite-contract-'))
    const storage = await openSqliteStorage({ path: join(directory, 'contract.db') })
    directories.set(storage, directory)
    return storage
  },
  destroy: async (storage) => {
    await storage.close()
    const directory = directories.get(storage)
    if (directory !== undefined) await rm(directory, { recursive: true, force: true })
  },
  retainedHistory: (storage, id) => sqliteStorage(storage).beneficiaries.retainedHistory(id),
})

describeStorageContract({
  name: 'sqlite (:memory:)',
  create: () => openSqliteStorage({ path: ':memory:' }),
  destroy: (storage) => storage.close(),
  retainedHistory: (storage, id) => sqliteStorage(storage).beneficiaries.retainedHistory(id),
})
