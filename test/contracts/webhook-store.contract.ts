import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  newEndpointState,
  type WebhookEndpoint,
  type WebhookStore,
} from '../../core/ports/webhook-store.js'
import type { CurrentStorage } from './contract-harness.js'
import { T0 } from './storage-fixtures.js'

function endpoint(id: string, createdAt = T0): WebhookEndpoint {
  return {
    id,
    url: `https://hooks.example.org/${id}`,
    secret: 'whsec_c2VjcmV0',
    types: ['beneficiary.created'],
    createdAt,
    state: newEndpointState('0'),
  }
}

function store(storage: CurrentStorage): WebhookStore {
  const webhooks = storage().webhooks
  assert.ok(webhooks !== undefined, 'the storage keeps webhooks')
  return webhooks
}

/** Webhook endpoints (D34): kept, listed oldest first, leased to one instance at a time. */
export function describeWebhookStoreContract(storage: CurrentStorage): void {
  describe('webhook store', () => {
    it('adds, lists oldest first and removes endpoints', async () => {
      const webhooks = store(storage)
      await webhooks.add(endpoint('wh_b', T0 + 1))
      await webhooks.add(endpoint('wh_a', T0))
      assert.deepEqual(await webhooks.list(), [endpoint('wh_a', T0), endpoint('wh_b', T0 + 1)])
      assert.equal(await webhooks.remove('wh_a'), true)
      assert.equal(await webhooks.remove('wh_a'), false)
      assert.deepEqual(
        (await webhooks.list()).map((found) => found.id),
        ['wh_b'],
      )
    })

    it('leases an endpoint to one owner until the lease runs out; only the owner saves', async () => {
      const webhooks = store(storage)
      await webhooks.add(endpoint('wh_a'))
      const [one, two] = await Promise.all([
        webhooks.lease('wh_a', 'one', T0, T0 + 60_000),
        webhooks.lease('wh_a', 'two', T0, T0 + 60_000),
      ])
      assert.equal(Number(one) + Number(two), 1)
      const [holder, other] = one ? ['one', 'two'] : ['two', 'one']
      const state = { ...endpoint('wh_a').state, cursor: '7', delivered: 1 }
      assert.equal(await webhooks.save('wh_a', other, state), false)
      assert.equal(await webhooks.save('wh_a', holder, state), true)
      assert.deepEqual((await webhooks.list())[0]!.state, state)
      assert.equal(await webhooks.lease('wh_a', holder, T0 + 1, T0 + 60_001), true)
      assert.equal(await webhooks.lease('wh_a', other, T0 + 60_000, T0 + 120_000), false)
      assert.equal(await webhooks.lease('wh_a', other, T0 + 60_001, T0 + 120_000), true)
      assert.equal(await webhooks.save('wh_a', holder, state), false)
      assert.equal(await webhooks.lease('wh_missing', holder, T0, T0 + 1), false)
    })
  })
}
