import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { ApiError } from '../../client/index.js'
import { MARIO } from '../server/server-fixtures.js'
import { startClientWorld, type ClientWorld } from './client-fixtures.js'

describe('the typed client: purpose, access log and export (D35, D36)', () => {
  let world: ClientWorld

  before(async () => {
    world = await startClientWorld('node')
  })
  after(async () => {
    await world.server.close(1_000)
    assert.deepEqual(world.problems, [], 'every live answer matches the OpenAPI document')
  })

  it('sends the purpose, and an audit client reads the log and the export', async () => {
    const writer = world.client()
    const id = (await writer.create(MARIO)).value.id
    await writer.get(id, { purpose: 'eligibility review', requestId: 'typed-read-1' })
    const auditor = await world.service.clients.create({ name: 'dpo', scopes: ['audit'] })
    const audit = world.client({}, auditor)
    const log = await audit.accessLog(id, { per_page: 10 })
    assert.deepEqual(
      log.value.data.map((entry) => [entry.operation, entry.purpose, entry.request_id]),
      [['get', 'eligibility review', 'typed-read-1']],
    )
    const exported = await audit.exportBeneficiary(id, { purpose: 'subject access request' })
    assert.equal(exported.value.beneficiary.fiscal_code, MARIO.fiscal_code)
    assert.deepEqual(
      exported.value.history.map((entry) => entry.action),
      ['created'],
    )
    assert.equal(exported.value.access_log.length, 1)
    // The writer's token has no audit scope.
    await assert.rejects(writer.accessLog(id), (error: unknown) => {
      assert.ok(error instanceof ApiError)
      assert.equal(error.code, 'insufficient_scope')
      return true
    })
    // A purpose the server refuses is a 422 naming the header.
    await assert.rejects(writer.get(id, { purpose: 'x'.repeat(201) }), (error: unknown) => {
      assert.ok(error instanceof ApiError)
      assert.deepEqual(
        error.details?.map((problem) => problem.field),
        ['X-Purpose'],
      )
      return true
    })
  })
})
