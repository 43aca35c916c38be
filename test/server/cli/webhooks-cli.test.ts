import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { Webhook } from 'standardwebhooks'
import { cli } from '../../support/cli-in-process.js'

describe('beneficiaries webhooks (D34)', () => {
  const directory = mkdtempSync(join(tmpdir(), 'webhooks-cli-'))
  after(() => rmSync(directory, { recursive: true, force: true }))

  it('adds an endpoint with its secret shown once, lists it, tests it signed, removes it', async () => {
    const db = join(directory, 'hooks.sqlite')
    const refused = await cli(['webhooks', 'add', '--db', db, '--url', 'http://127.0.0.1:9/x'])
    assert.equal(refused.status, 2)
    assert.match(refused.err, /https/)
    const badType = await cli([
      'webhooks',
      'add',
      '--db',
      db,
      '--url',
      'https://hooks.example.org/x',
      '--events',
      'beneficiary.created,beneficiary.read',
    ])
    assert.equal(badType.status, 2)

    const received: unknown[] = []
    let secret = ''
    const receiver = createServer((request, response) => {
      const chunks: Buffer[] = []
      request.on('data', (chunk: Buffer) => chunks.push(chunk))
      request.on('end', () => {
        received.push(
          new Webhook(secret).verify(Buffer.concat(chunks).toString('utf8'), {
            'webhook-id': String(request.headers['webhook-id']),
            'webhook-timestamp': String(request.headers['webhook-timestamp']),
            'webhook-signature': String(request.headers['webhook-signature']),
          }),
        )
        response.writeHead(204).end()
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
    try {
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`
      const added = await cli([
        'webhooks',
        'add',
        '--db',
        db,
        '--url',
        url,
        '--events',
        'beneficiary.created',
        '--allow-http',
      ])
      assert.equal(added.status, 0, added.err)
      const endpoint = JSON.parse(added.out) as { id: string; secret: string; events: string[] }
      assert.match(endpoint.secret, /^whsec_/)
      assert.deepEqual(endpoint.events, ['beneficiary.created'])
      secret = endpoint.secret

      const listed = await cli(['webhooks', 'list', '--db', db])
      assert.equal(listed.status, 0)
      assert.ok(!listed.out.includes(endpoint.secret))
      const [row] = JSON.parse(listed.out) as { id: string; status: string; delivered: number }[]
      assert.deepEqual([row!.id, row!.status, row!.delivered], [endpoint.id, 'ok', 0])

      const tested = await cli(['webhooks', 'test', endpoint.id, '--db', db])
      assert.equal(tested.status, 0, tested.err)
      assert.deepEqual(JSON.parse(tested.out), { id: endpoint.id, status: 204 })
      assert.equal((received[0] as { type: string }).type, 'webhook.test')

      assert.equal((await cli(['webhooks', 'remove', endpoint.id, '--db', db])).status, 0)
      assert.equal((await cli(['webhooks', 'remove', endpoint.id, '--db', db])).status, 1)
    } finally {
      await new Promise((resolve) => receiver.close(resolve))
    }
  })
})
