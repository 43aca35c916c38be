import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { Webhook } from 'standardwebhooks'
import {
  createTestDatabase,
  postgresSkip,
  type TestDatabase,
} from '../support/postgres-database.js'
import { InstanceGroup, operator, type Session } from './instance-group.js'

/**
 * D33, D34 across three `serve` processes on one PostgreSQL database: writes spread over the
 * three, one consumer follows the change feed through the "balancer" (each request to the next
 * instance) and sees every acknowledged change exactly once, each record's in order; a webhook
 * endpoint that is down for a while in the middle still receives every event, its signatures
 * verified by the `standardwebhooks` package.
 */

const WRITE_MS = Number(process.env['FEED_MULTI_MS'] ?? 5000)
const WRITERS = 6

interface Seen {
  readonly requestId: string
  readonly beneficiaryId: number
  readonly type: string
}

describe('the change feed and webhooks across three instances (D33, D34)', async () => {
  const skip = await postgresSkip()
  let database: TestDatabase | undefined
  let group: InstanceGroup | undefined
  let receiver: Server | undefined
  let receiverUp = true
  const delivered = new Map<string, Seen>()
  let rejected = 0

  before(async () => {
    if (skip) return
    database = await createTestDatabase('feed')
    await operator(database.url, ['migrate'])
    let secret = ''
    receiver = createServer((request, response) => {
      const chunks: Buffer[] = []
      request.on('data', (chunk: Buffer) => chunks.push(chunk))
      request.on('end', () => {
        if (!receiverUp) return void response.writeHead(503).end()
        try {
          const event = new Webhook(secret).verify(Buffer.concat(chunks).toString('utf8'), {
            'webhook-id': String(request.headers['webhook-id']),
            'webhook-timestamp': String(request.headers['webhook-timestamp']),
            'webhook-signature': String(request.headers['webhook-signature']),
          }) as Record<string, unknown>
          delivered.set(String(event['id']), {
            requestId: String(event['request_id']),
            beneficiaryId: Number(event['beneficiary_id']),
            type: String(event['type']),
          })
          response.writeHead(204).end()
        } catch {
          rejected += 1
          response.writeHead(400).end()
        }
      })
    })
    await new Promise<void>((resolve) => receiver!.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`
    const added = await operator(database.url, ['webhooks', 'add', '--url', url, '--allow-http'])
    secret = (JSON.parse(added) as { secret: string }).secret
    group = await InstanceGroup.start(database.url, 3, {
      RATE_LIMIT_AUTH: '1000',
      RATE_LIMIT_WRITE: '100000',
      RATE_LIMIT_STANDARD: '100000',
      TRUST_PROXY: 'loopback',
      DATABASE_POOL_SIZE: '4',
      LOG_LEVEL: 'info',
    })
  })

  after(async () => {
    await group?.stop()
    receiver?.closeAllConnections()
    await new Promise((resolve) =>
      receiver === undefined ? resolve(undefined) : receiver.close(resolve),
    )
    await database?.drop()
  })

  it(
    'gives one consumer behind the balancer every acknowledged change once, and the webhook every event',
    { skip },
    async (t) => {
      const g = group!
      const sessions: Session[] = await g.signInMany(WRITERS + 1)
      const reader = sessions.pop()!
      /** Request ids of the acknowledged changes, by record, in the order they were made. */
      const acknowledged = new Map<number, string[]>()
      const ack = (id: number, requestId: string): void => {
        acknowledged.set(id, [...(acknowledged.get(id) ?? []), requestId])
      }
      let stop = false

      async function writer(session: Session): Promise<void> {
        const mine: number[] = []
        for (let n = 0; !stop; n++) {
          const requestId = randomUUID()
          const headers = { 'x-request-id': requestId }
          if (mine.length === 0 || n % 3 === 0) {
            const reply = await g.send(g.next(), 'POST', '/v3/beneficiaries', {
              session,
              headers,
              body: { first_name: 'Feed', last_name: `W${n}`, email: `w${n}@example.org` },
            })
            assert.equal(reply.status, 201, reply.body)
            const id = Number(reply.json!['id'])
            ack(id, requestId)
            mine.push(id)
          } else {
            const id = mine[n % mine.length]!
            const reply = await g.send(g.next(), 'PUT', `/v3/beneficiaries/${id}`, {
              session,
              headers,
              body: { phone: `+39${1_000_000 + n}` },
            })
            assert.equal(reply.status, 200, reply.body)
            ack(id, requestId)
          }
        }
      }

      const seen: Seen[] = []
      let after: string | undefined
      let polls = 0
      async function consume(until: () => boolean): Promise<void> {
        while (!until()) {
          const query = `?limit=50&wait=1${after === undefined ? '' : `&after=${after}`}`
          const reply = await g.send(g.next(), 'GET', `/v3/events${query}`, { session: reader })
          assert.equal(reply.status, 200, reply.body)
          polls += 1
          const page = reply.json as {
            data: { request_id: string; beneficiary_id: number; type: string }[]
            next: string
          }
          for (const event of page.data) {
            seen.push({
              requestId: event.request_id,
              beneficiaryId: event.beneficiary_id,
              type: event.type,
            })
          }
          after = page.next
        }
      }

      const consumer = consume(() => stop)
      const writers = sessions.map((session) => writer(session))
      await delay(WRITE_MS / 3)
      receiverUp = false // the webhook receiver is down for a third of the run
      await delay(WRITE_MS / 3)
      receiverUp = true
      await delay(WRITE_MS / 3)
      stop = true
      await Promise.all(writers)
      await consumer
      const total = [...acknowledged.values()].reduce((sum, list) => sum + list.length, 0)
      // After the writes: read on until every acknowledged change came (or 30 s passed).
      const deadline = Date.now() + 30_000
      await consume(() => seen.length >= total || Date.now() > deadline)

      t.diagnostic(`${total} changes acknowledged, ${polls} polls of the feed`)
      const once = new Set(seen.map((event) => event.requestId))
      assert.equal(once.size, seen.length, 'no change seen twice')
      assert.equal(seen.length, total, `every acknowledged change seen (${polls} polls)`)
      const byRecord = new Map<number, string[]>()
      for (const event of seen) {
        byRecord.set(event.beneficiaryId, [
          ...(byRecord.get(event.beneficiaryId) ?? []),
          event.requestId,
        ])
      }
      assert.deepEqual(byRecord, acknowledged)

      // The webhook: every event at least once, after its receiver came back (back-off: seconds).
      const hookDeadline = Date.now() + 60_000
      while (delivered.size < total && Date.now() < hookDeadline) await delay(250)
      assert.equal(rejected, 0)
      assert.deepEqual(new Set([...delivered.values()].map((event) => event.requestId)), once)

      // Each instance counts its own attempts: together, every event delivered, and failures.
      const scrapes = await Promise.all(g.running.map((i) => g.send(i, 'GET', '/metrics')))
      const sum = (outcome: string): number =>
        scrapes.reduce((total, reply) => {
          const line = new RegExp(
            `^beneficiary_webhook_deliveries_total\\{outcome="${outcome}"\\} (\\d+)$`,
            'm',
          ).exec(reply.body)
          return total + Number(line?.[1] ?? 0)
        }, 0)
      t.diagnostic(`webhook attempts: ${sum('delivered')} delivered, ${sum('failed')} failed`)
      assert.ok(sum('delivered') >= total, `${sum('delivered')} delivered of ${total}`)
      assert.ok(sum('failed') >= 1, 'the receiver was down: some attempts failed')
    },
  )
})
