import assert from 'node:assert/strict'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { Webhook } from 'standardwebhooks'
import { MemoryStorage } from '../../adapters/memory/index.js'
import {
  createBeneficiaryService,
  FakeClock,
  type BeneficiaryService,
  type WebhookEndpoint,
} from '../../core/index.js'
import { newEndpointState } from '../../core/ports/webhook-store.js'
import { WebhookDeliverer, type DeliveryOutcome } from '../../server/webhooks/webhook-deliverer.js'
import { newWebhookSecret } from '../../server/webhooks/webhook-signature.js'

type Mode = 'ok' | 'fail' | 'hang'

/**
 * A real HTTP receiver that answers 204, 500 or never, as told, and keeps every delivery it
 * verified with the `standardwebhooks` package (not the project's own signing code).
 */
class Receiver {
  mode: Mode = 'ok'
  attempts = 0
  readonly verified: { id: string; event: Record<string, unknown> }[] = []
  readonly rejected: string[] = []
  readonly #server: Server
  readonly #hanging = new Set<IncomingMessage>()
  #secret = ''

  constructor() {
    this.#server = createServer((request, response) => {
      const chunks: Buffer[] = []
      request.on('data', (chunk: Buffer) => chunks.push(chunk))
      request.on('end', () => {
        this.attempts += 1
        if (this.mode === 'hang') {
          this.#hanging.add(request)
          return
        }
        if (this.mode === 'fail') {
          response.writeHead(500).end()
          return
        }
        const body = Buffer.concat(chunks).toString('utf8')
        const headers = {
          'webhook-id': String(request.headers['webhook-id']),
          'webhook-timestamp': String(request.headers['webhook-timestamp']),
          'webhook-signature': String(request.headers['webhook-signature']),
        }
        try {
          const event = new Webhook(this.#secret).verify(body, headers) as Record<string, unknown>
          this.verified.push({ id: headers['webhook-id'], event })
          response.writeHead(204).end()
        } catch (error) {
          this.rejected.push((error as Error).message)
          response.writeHead(400).end()
        }
      })
    })
  }

  async start(secret: string): Promise<string> {
    this.#secret = secret
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve))
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/hooks`
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections()
    await new Promise((resolve) => this.#server.close(resolve))
  }
}

describe('webhooks (D34) against a real receiver', () => {
  // Near the real time: the receiver checks the signed timestamp against its own clock.
  const clock = new FakeClock(Date.now())
  const storage = new MemoryStorage()
  const receiver = new Receiver()
  const secret = newWebhookSecret()
  const outcomes: DeliveryOutcome[] = []
  const disabled: string[] = []
  let service: BeneficiaryService
  let token: string
  let endpoint: WebhookEndpoint

  const deliverer = (): WebhookDeliverer =>
    new WebhookDeliverer({
      webhooks: storage.webhooks,
      events: storage.events,
      clock,
      timeoutMs: 300,
      random: () => 0.5,
      onAttempt: (outcome) => outcomes.push(outcome),
      onDisabled: (id) => disabled.push(id),
    })

  async function create(n: number): Promise<number> {
    const created = await service.create(
      { token, requestId: `req-${n}` },
      { first_name: 'Ada', last_name: `L${n}`, email: `ada${n}@example.org` },
    )
    return created.value.id
  }

  before(async () => {
    service = await createBeneficiaryService({ storage, clock })
    const client = await service.clients.create({ name: 'w', scopes: ['read', 'write'] })
    const login = await service.login(
      {},
      { client_id: client.client_id, client_secret: client.client_secret },
    )
    token = login.value.access_token
    await create(0) // before the endpoint: never sent to it
    endpoint = {
      id: 'wh_test',
      url: await receiver.start(secret),
      secret,
      types: ['beneficiary.created', 'beneficiary.deleted'],
      createdAt: clock.now(),
      state: newEndpointState(await storage.events.end()),
    }
    await storage.webhooks.add(endpoint)
  })
  after(() => receiver.stop())

  it('sends each event of its types once, signed, in order; two instances never send one twice', async () => {
    const ids = [await create(1), await create(2), await create(3)]
    await service.update({ token }, ids[0]!, { phone: '+390612345678' }) // not of its types
    await service.remove({ token }, ids[1]!)
    const [a, b] = [deliverer(), deliverer()]
    await Promise.all([a.round(), b.round(), a.round(), b.round()])
    assert.deepEqual(receiver.rejected, [])
    assert.deepEqual(
      receiver.verified.map(({ event }) => [event['type'], event['beneficiary_id']]),
      [
        ['beneficiary.created', ids[0]],
        ['beneficiary.created', ids[1]],
        ['beneficiary.created', ids[2]],
        ['beneficiary.deleted', ids[1]],
      ],
    )
    assert.equal(receiver.attempts, 4)
    assert.deepEqual(
      receiver.verified.map(({ id, event }) => id === event['id']),
      [true, true, true, true],
    )
    assert.ok(!JSON.stringify(receiver.verified).includes('Ada'))
  })

  it('retries a failing and a silent receiver with back-off, and delivers once it recovers', async () => {
    const id = await create(4)
    // Another instance: it gets the endpoint once the lease of the last one has run out.
    const instance = deliverer()
    await instance.round()
    assert.equal(receiver.attempts, 4)
    clock.advance(61_000)
    receiver.mode = 'fail'
    const before = receiver.attempts
    await instance.round()
    let state = (await storage.webhooks.list())[0]!.state
    assert.equal(state.attempts, 1)
    assert.equal(state.lastError, 'status 500')
    assert.equal(state.nextAttemptAt, clock.now() + 3750) // 5 s ceiling, half plus half of 0.5
    await instance.round() // not due yet: nothing is sent
    assert.equal(receiver.attempts, before + 1)
    receiver.mode = 'hang'
    clock.advance(4000)
    await instance.round()
    state = (await storage.webhooks.list())[0]!.state
    assert.equal(state.lastError, 'timeout')
    assert.equal(state.attempts, 2)
    assert.equal(state.nextAttemptAt, clock.now() + 7500)
    receiver.mode = 'ok'
    clock.advance(7500)
    await instance.round()
    state = (await storage.webhooks.list())[0]!.state
    assert.deepEqual([state.attempts, state.failingSince, state.lastError], [0, null, null])
    const last = receiver.verified.at(-1)!
    assert.deepEqual(
      [last.event['type'], last.event['beneficiary_id']],
      ['beneficiary.created', id],
    )
    assert.deepEqual(outcomes.slice(-3), ['failed', 'failed', 'delivered'])
  })

  it('disables an endpoint after a day of failures, and says so', async () => {
    await create(5)
    receiver.mode = 'fail'
    const instance = deliverer()
    for (let hour = 0; hour <= 25 && disabled.length === 0; hour++) {
      await instance.round()
      clock.advance(3600_000)
    }
    const state = (await storage.webhooks.list())[0]!.state
    assert.deepEqual(disabled, ['wh_test'])
    assert.notEqual(state.disabledAt, null)
    assert.equal(outcomes.at(-1), 'disabled')
    const attempts = receiver.attempts
    await instance.round()
    assert.equal(receiver.attempts, attempts)
  })
})

describe('webhooks (D34) behind on a backlog', () => {
  it('catches up several pages of events in one round, in order', async () => {
    const clock = new FakeClock(Date.now())
    const storage = new MemoryStorage()
    const limits = { auth: 1e9, write: 1e9, standard: 1e9 }
    const service = await createBeneficiaryService({ storage, clock, limits })
    const client = await service.clients.create({ name: 'w', scopes: ['read', 'write'] })
    const login = await service.login(
      {},
      { client_id: client.client_id, client_secret: client.client_secret },
    )
    const token = login.value.access_token
    const receiver = new Receiver()
    const secret = newWebhookSecret()
    try {
      await storage.webhooks.add({
        id: 'wh_backlog',
        url: await receiver.start(secret),
        secret,
        types: ['beneficiary.created'],
        createdAt: clock.now(),
        state: newEndpointState(await storage.events.end()),
      })
      const ids: number[] = []
      for (let n = 0; n < 120; n++) {
        const created = await service.create(
          { token },
          { first_name: 'Ada', last_name: `B${n}`, email: `b${n}@example.org` },
        )
        ids.push(created.value.id)
      }
      await new WebhookDeliverer({
        webhooks: storage.webhooks,
        events: storage.events,
        clock,
      }).round()
      assert.deepEqual(receiver.rejected, [])
      assert.deepEqual(
        receiver.verified.map(({ event }) => event['beneficiary_id']),
        ids,
      )
    } finally {
      await receiver.stop()
    }
  })
})
