import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { startServer } from '../../../server/start-server.js'
import { MAX_UWS_BODY_TIMEOUT_MS } from '../../../server/transports/transport.js'
import { createWorld } from '../server-fixtures.js'
import { transportSuite } from './transport-suite.js'
import { skipOn } from '../../support/transports.js'

transportSuite('uws')

describe('the uws transport, on its own', { skip: skipOn('uws') }, () => {
  it('refuses a body timeout it cannot keep: the uWS build closes a stalled body after 8 s', async () => {
    const world = await createWorld()
    for (const requestTimeoutMs of [MAX_UWS_BODY_TIMEOUT_MS + 1, 30_000, 0]) {
      await assert.rejects(
        startServer({ service: world.service, transport: 'uws', port: 0, requestTimeoutMs }),
        TypeError,
      )
    }
    const server = await startServer({
      service: world.service,
      transport: 'uws',
      port: 0,
      requestTimeoutMs: MAX_UWS_BODY_TIMEOUT_MS,
    })
    await server.close()
  })
})
