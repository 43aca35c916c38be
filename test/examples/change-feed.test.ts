import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { MemoryStorage } from '../../adapters/memory/index.js'
import { BeneficiaryClient, type ChangeEvent } from '../../client/index.js'
import { createBeneficiaryService, FakeClock, type BeneficiaryService } from '../../core/index.js'
import { followFeed } from '../../examples/change-feed/follow-feed.js'
import { startServer, type RunningServer } from '../../server/index.js'

describe('the change-feed example against a real server', () => {
  const clock = new FakeClock()
  let service: BeneficiaryService
  let server: RunningServer
  let credentials: { clientId: string; clientSecret: string }

  before(async () => {
    service = await createBeneficiaryService({ storage: new MemoryStorage(), clock })
    const client = await service.clients.create({ name: 'example', scopes: ['read', 'write'] })
    credentials = { clientId: client.client_id, clientSecret: client.client_secret }
    server = await startServer({ service, transport: 'node', port: 0 })
  })
  after(() => server.close())

  it('follows every change as it happens, long-polling, and resumes from the cursor it saved', async () => {
    const options = { baseUrl: `${server.url}/v3`, credentials }
    const writer = new BeneficiaryClient(options)
    const seen: ChangeEvent[] = []
    let saved: string | undefined
    const cursor = { load: async () => saved, save: async (next: string) => void (saved = next) }
    let stop = false
    const following = followFeed(
      options,
      cursor,
      async (event) => void seen.push(event),
      () => !stop,
    )

    const created = await writer.create({
      first_name: 'Ada',
      last_name: 'L',
      email: 'a@example.org',
    })
    const id = created.value.id
    await writer.update(id, { phone: '+390612345678' })
    await writer.setStatus(id, { status: 'active' })
    await writer.remove(id)
    // Each change wakes the waiting poll at once: no clock moves, no sleep.
    while (seen.length < 4) await new Promise((resolve) => setTimeout(resolve, 10))
    stop = true
    // The last poll waits for an event; past its deadline on the server's clock it answers empty.
    clock.advance(21_000)
    await following

    assert.deepEqual(
      seen.map((event) => [event.type, event.beneficiary_id, event.changed_fields]),
      [
        ['beneficiary.created', id, ['first_name', 'last_name', 'email', 'status']],
        ['beneficiary.updated', id, ['phone']],
        ['beneficiary.status_changed', id, ['status']],
        ['beneficiary.deleted', id, []],
      ],
    )
    assert.ok(!JSON.stringify(seen).includes('Ada'))
    // Resuming from the saved cursor finds nothing again.
    const again = await writer.events({ after: saved! })
    assert.deepEqual(again.value, { data: [], next: saved })
  })
})
