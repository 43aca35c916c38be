import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { MemoryStorage } from '../../adapters/memory/index.js'
import { createBeneficiaryService, FakeClock } from '../../core/index.js'
import { nodeSha256 } from '../../server/node-sha256.js'
import { credentials } from '../core/support.js'

describe('nodeSha256', () => {
  it('D1: a native sha256 passed in agrees with the Web Crypto default, so either can read the other’s clients', async () => {
    const clock = new FakeClock()
    const storage = new MemoryStorage()
    const webCrypto = await createBeneficiaryService({ storage, clock })
    const native = await createBeneficiaryService({ storage, clock, sha256: nodeSha256 })
    const client = await webCrypto.clients.create({ name: 'c', scopes: ['read'] })
    await native.login({ ip: '1' }, credentials(client))
    const other = await native.clients.create({ name: 'd', scopes: ['read'] })
    await webCrypto.login({ ip: '2' }, credentials(other))
    assert.equal(nodeSha256('é'), 'SplVfkAzw1Od4utlRyAXytX5VX96BiWgnxw_biumnEw')
  })
})
