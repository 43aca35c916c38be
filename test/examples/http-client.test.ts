import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { MemoryStorage } from '../../adapters/memory/index.js'
import { createBeneficiaryService, FakeClock, type BeneficiaryService } from '../../core/index.js'
import { BeneficiaryClient } from '../../examples/http-client/beneficiary-client.js'
import { startServer, type RunningServer } from '../../server/index.js'

describe('the example HTTP client against a real server on a fake clock', () => {
  const clock = new FakeClock()
  let service: BeneficiaryService
  let server: RunningServer
  let credentials: { clientId: string; clientSecret: string }

  before(async () => {
    service = await createBeneficiaryService({
      storage: new MemoryStorage(),
      clock,
      clockSkewSeconds: 0,
      limits: { standard: 3, write: 100 },
    })
    const client = await service.clients.create({ name: 'example', scopes: ['read', 'write'] })
    credentials = { clientId: client.client_id, clientSecret: client.client_secret }
    server = await startServer({ service, transport: 'node', port: 0 })
  })
  after(() => server.close())

  it('refreshes on token_expired, waits out 429 by Retry-After, and follows links.next to the end', async () => {
    const client = new BeneficiaryClient({
      origin: server.url,
      ...credentials,
      sleep: async (ms) => clock.advance(ms),
    })
    for (let i = 0; i < 9; i++) {
      await client.create({ first_name: 'Ada', last_name: `L${i}`, email: `ada${i}@example.org` })
    }
    clock.advance(3600_000)
    const ids: number[] = []
    for await (const item of client.list({ per_page: '2' })) ids.push(item.id)
    assert.deepEqual(ids, [1, 2, 3, 4, 5, 6, 7, 8, 9])
    assert.equal(client.stats.refreshes, 1)
    assert.ok(client.stats.waits >= 2, `waits: ${client.stats.waits}`)
  })
})
