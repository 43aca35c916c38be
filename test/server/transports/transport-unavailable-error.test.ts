import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { TransportUnavailableError } from '../../../server/transports/transport-unavailable-error.js'

describe('TransportUnavailableError', () => {
  it('says why the uws transport cannot load and how to choose node:http instead', () => {
    const cause = new Error('This version of uWS.js supports only Node.js 16, 18 and 20')
    const error = new TransportUnavailableError('uws', cause.message, { cause })
    assert.equal(error.transport, 'uws')
    assert.equal(error.cause, cause)
    assert.ok(error.message.includes(cause.message))
    assert.ok(error.message.includes('--transport node'))
    assert.ok(error.message.includes('TRANSPORT=node'))
    assert.ok(error.message.includes(process.versions.node))
  })
})
