import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { describeAccessLogContract } from './access-log.contract.js'
import { describeBeneficiaryIdempotencyContract } from './beneficiary-idempotency.contract.js'
import { describeBeneficiaryListContract } from './beneficiary-list.contract.js'
import { describeBeneficiaryRecordsContract } from './beneficiary-records.contract.js'
import { describeChangeFeedContract } from './change-feed.contract.js'
import { describeClientStoreContract } from './client-store.contract.js'
import { type StorageContractOptions, useFreshStorage } from './contract-harness.js'
import { describeSessionStoreContract } from './session-store.contract.js'
import { describeSigningKeyStoreContract } from './signing-key-store.contract.js'
import { describeWebhookStoreContract } from './webhook-store.contract.js'
import { describeMatchStoreContract } from './match.contract.js'

export type { StorageContractOptions } from './contract-harness.js'

/**
 * Registers, with node:test, every behaviour the storage ports promise, run against a fresh
 * storage from `options.create()` for each test. Every adapter's test file calls it; the
 * adapter is done when the suite passes unchanged.
 *
 * @example
 * describeStorageContract({
 *   name: 'memory',
 *   create: async () => new MemoryStorage(),
 *   destroy: (storage) => storage.close(),
 * })
 */
export function describeStorageContract(options: StorageContractOptions): void {
  describe(`${options.name} storage contract`, () => {
    const storage = useFreshStorage(options)

    describeBeneficiaryRecordsContract(storage, options)
    describeBeneficiaryIdempotencyContract(storage)
    describeBeneficiaryListContract(storage)
    describeClientStoreContract(storage)
    describeSessionStoreContract(storage)
    describeSigningKeyStoreContract(storage)
    describeAccessLogContract(storage)
    describeChangeFeedContract(storage)
    describeWebhookStoreContract(storage)
    describeMatchStoreContract(storage)

    describe('storage', () => {
      it('resolves ping while open', async () => {
        await assert.doesNotReject(storage().ping())
      })
    })
  })
}
