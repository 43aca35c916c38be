import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { ApiError } from '../../client/index.js'
import { MARIO } from '../server/server-fixtures.js'
import { startClientWorld, TRANSPORTS, type ClientWorld } from './client-fixtures.js'

for (const transport of TRANSPORTS) {
  describe(`matching through the typed client and a real server over ${transport} (D38)`, () => {
    let world: ClientWorld

    before(async () => {
      world = await startClientWorld(transport)
    })
    after(async () => {
      await world.server.close(1_000)
      assert.deepEqual(world.problems, [], 'every live answer matches the OpenAPI document')
    })

    it('ranks the records that may be the same person, with their scores and reasons', async () => {
      const client = world.client()
      await client.login()
      const mario = (await client.create(MARIO)).value
      const twin = (
        await client.create({
          first_name: 'Rossi',
          last_name: 'Mário',
          email: 'm.rossi@example.net',
          date_of_birth: '1985-10-12',
        })
      ).value
      const stranger = (
        await client.create({ first_name: 'Anna', last_name: 'Bianchi', email: 'a@example.org' })
      ).value

      const found = await client.match({
        first_name: 'Mraio',
        last_name: 'Rossi',
        email: 'MARIO.ROSSI@example.org',
        phone: '333 123 4567',
        date_of_birth: '1985-12-10',
      })
      assert.equal(found.status, 200)
      // The twin's names are alike and its date of birth swapped: 0.55, under the threshold.
      assert.deepEqual(
        found.value.data.map((match) => [match.id, match.score]),
        [[mario.id, 1]],
      )
      const best = found.value.data[0]!
      assert.deepEqual(
        best.reasons.map((reason) => reason.rule),
        ['email', 'phone', 'name', 'date_of_birth'],
      )
      assert.equal(best.email, MARIO.email)
      assert.ok(!found.value.data.some((match) => match.id === stranger.id))

      const ofTwin = await client.matches(twin.id)
      assert.deepEqual(
        ofTwin.value.data.map((match) => match.id),
        [],
        'names alike and a swapped date of birth score 0.55, under the threshold',
      )
      const ofMario = await client.matches(mario.id)
      assert.ok(!ofMario.value.data.some((match) => match.id === mario.id))
    })

    it('refuses a candidate without an identifying field, naming the fields, and an unknown id', async () => {
      const client = world.client()
      await client.login()
      const refused = await client.match({ first_name: 'Maria', date_of_birth: 'soon' }).then(
        () => assert.fail('accepted'),
        (error: unknown) => error,
      )
      assert.ok(refused instanceof ApiError)
      assert.equal(refused.status, 422)
      assert.deepEqual(
        refused.body.details?.map((detail) => detail.field),
        ['date_of_birth', 'last_name'],
      )
      const none = await client.match({ date_of_birth: '1985-12-10' }).then(
        () => assert.fail('accepted'),
        (error: unknown) => error,
      )
      assert.ok(none instanceof ApiError)
      assert.deepEqual(
        none.body.details?.map((detail) => detail.field),
        ['first_name', 'last_name'],
      )
      const missing = await client.matches(987_654).then(
        () => assert.fail('found'),
        (error: unknown) => error,
      )
      assert.ok(missing instanceof ApiError)
      assert.equal(missing.status, 404)
    })
  })
}
