import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { MemoryStorage } from '../../adapters/memory/index.js'
import { BeneficiaryClient } from '../../client/index.js'
import { createBeneficiaryService, FakeClock, type BeneficiaryService } from '../../core/index.js'
import { pageThrough } from '../../examples/http-client/page-through.js'
import { startServer, type RunningServer } from '../../server/index.js'

describe('the http-client example against a real server on a fake clock', () => {
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

  it('refreshes a token the server refuses, waits out 429 by Retry-After, and follows links.next to the end', async () => {
    const writer = new BeneficiaryClient({ baseUrl: `${server.url}/v3`, credentials })
    for (let i = 0; i < 9; i++) {
      await writer.create({ first_name: 'Ada', last_name: `L${i}`, email: `ada${i}@example.org` })
    }
    // The client's own clock stays behind: only the server sees an hour pass, while the first
    // page is printed, so the next page's token is refused as expired and renewed.
    const clientClock = new FakeClock(clock.now())
    const lines: string[] = []
    const report = await pageThrough(
      {
        baseUrl: `${server.url}/v3`,
        credentials,
        now: () => clientClock.now(),
        sleep: async (ms) => clock.advance(ms),
      },
      { per_page: 2 },
      (line) => {
        lines.push(line)
        clock.advance(3600_000)
      },
    )
    assert.deepEqual(lines, ['  #1 L0, Ada'])
    assert.equal(report.count, 9)
    assert.equal(report.refreshes, 1)
    assert.ok(report.waits >= 1, `waits: ${report.waits}`)
  })
})
