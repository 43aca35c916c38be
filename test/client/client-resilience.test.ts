import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { ApiError } from '../../client/index.js'
import {
  FakeClock,
  InvalidTokenError,
  StorageUnavailableError,
  type BeneficiaryService,
} from '../../core/index.js'
import { startClientWorld, TRANSPORTS, type ClientWorld } from './client-fixtures.js'

const ADA = { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.org' }

for (const transport of TRANSPORTS) {
  describe(`the typed client's refresh and retries against a real server over ${transport}`, () => {
    const worlds: ClientWorld[] = []
    async function start(options: Parameters<typeof startClientWorld>[1] = {}) {
      const world = await startClientWorld(transport, options)
      worlds.push(world)
      return world
    }
    after(async () => {
      for (const world of worlds) await world.server.close(1_000)
      assert.deepEqual(
        worlds.flatMap((world) => world.problems),
        [],
        'every live answer matches the OpenAPI document',
      )
    })

    it('renews a token a margin before it expires, by its clock, so the server never refuses it', async () => {
      const world = await start()
      const client = world.client({ refreshMarginSeconds: 60 })
      await client.login()
      world.clock.advance(3_539_000)
      await client.list()
      assert.equal(world.calls.refresh, 0)
      world.clock.advance(2_000)
      const calls = world.calls.list
      await client.list()
      assert.equal(world.calls.refresh, 1)
      assert.equal(world.calls.list, calls + 1, 'one request: the old token was never sent')
      assert.deepEqual(world.events.at(-1), {
        type: 'token',
        action: 'refresh',
        reason: 'expiring',
      })
    })

    it('renews once when the server refuses a token its own clock thinks valid, and retries', async () => {
      const world = await start()
      const clientClock = new FakeClock(world.clock.now())
      const client = world.client({ now: () => clientClock.now() })
      await client.create(ADA)
      world.clock.advance(3_700_000)
      const calls = world.calls.list
      const { value } = await client.list()
      assert.equal(value.meta.total_count, 1)
      assert.equal(world.calls.list, calls + 2, 'refused with token_expired, then answered')
      assert.equal(world.calls.refresh, 1)
      assert.deepEqual(world.events.at(-1), {
        type: 'token',
        action: 'refresh',
        reason: 'rejected',
      })
    })

    it('a token refused again after its renewal is thrown, never a loop', async () => {
      const world = await start({
        overrides: () => ({
          get: () => Promise.reject(new InvalidTokenError()),
        }),
      })
      const client = world.client()
      const error = await client.get(1).catch((thrown: unknown) => thrown)
      assert.ok(error instanceof ApiError)
      assert.equal(error.code, 'invalid_token')
      assert.deepEqual([world.calls.get, world.calls.refresh, world.calls.login], [2, 1, 1])
    })

    it('a refresh token the server no longer takes leads to one login, then the call', async () => {
      const world = await start()
      const client = world.client()
      const tokens = await client.login()
      // The session ends elsewhere: the access and refresh tokens both stop working (D5).
      await world.service.logout({ token: tokens.value.access_token })
      await client.list()
      assert.deepEqual([world.calls.refresh, world.calls.login], [1, 2])
      assert.deepEqual(world.events.slice(-2), [
        { type: 'token', action: 'refresh', reason: 'rejected' },
        { type: 'token', action: 'login', reason: 'rejected' },
      ])
    })

    it('a revoked client gets invalid_credentials from its login, after one refresh', async () => {
      const world = await start()
      const client = world.client()
      await client.list()
      await world.service.clients.revoke(world.writer.client_id)
      const error = await client.list().catch((thrown: unknown) => thrown)
      assert.ok(error instanceof ApiError)
      assert.deepEqual([error.code, error.operation], ['invalid_credentials', 'login'])
      assert.deepEqual([world.calls.refresh, world.calls.login, world.calls.list], [1, 2, 2])
    })

    it('concurrent calls share one renewal', async () => {
      const world = await start()
      const client = world.client()
      await client.login()
      world.clock.advance(3_600_000)
      await Promise.all(Array.from({ length: 5 }, () => client.list()))
      assert.equal(world.calls.refresh, 1)
    })

    it('waits out a 429 for as long as Retry-After says, on the server clock, then succeeds', async () => {
      const world = await start({ limits: { auth: 1000, write: 1000, standard: 2 } })
      const client = world.client()
      await client.list()
      await client.list()
      const { value } = await client.list()
      assert.equal(value.meta.current_page, 1)
      // 2 a minute: one request back every 30 seconds.
      assert.deepEqual(world.sleeps, [30_000])
      assert.deepEqual(world.events.at(-1), {
        type: 'retry',
        operation: 'list',
        status: 429,
        attempt: 1,
        delayMs: 30_000,
      })
    })

    it('retries a bounded number of times, then throws rate_limit_exceeded with retry_after', async () => {
      const world = await start({ limits: { auth: 1000, write: 1000, standard: 1 } })
      const client = world.client({
        maxRetries: 3,
        sleep: async (ms) => void world.sleeps.push(ms),
      })
      await client.list()
      const error = await client.list().catch((thrown: unknown) => thrown)
      assert.ok(error instanceof ApiError)
      assert.deepEqual(
        [error.code, error.status, error.retryAfterSeconds],
        ['rate_limit_exceeded', 429, 60],
      )
      assert.equal(error.body.retry_after, 60)
      assert.deepEqual(world.sleeps, [60_000, 60_000, 60_000])
      assert.equal(world.calls.list, 5)
    })

    it('does not wait for a Retry-After longer than maxRetryDelaySeconds', async () => {
      const world = await start({ limits: { auth: 1000, write: 1000, standard: 1 } })
      const client = world.client({ maxRetryDelaySeconds: 59 })
      await client.list()
      await assert.rejects(client.list(), { code: 'rate_limit_exceeded', retryAfterSeconds: 60 })
      assert.deepEqual(world.sleeps, [])
    })

    it('retries a create only with an Idempotency-Key, and never a status change', async () => {
      const world = await start({ limits: { auth: 1000, write: 2, standard: 1000 } })
      const client = world.client()
      const { value: first } = await client.create(ADA)
      await client.setStatus(first.id, { status: 'active' })
      await assert.rejects(client.setStatus(first.id, { status: 'inactive' }), {
        code: 'rate_limit_exceeded',
      })
      const unkeyed = world.client({ autoIdempotencyKey: false })
      await assert.rejects(unkeyed.create({ ...ADA, email: 'ada2@example.org' }), {
        code: 'rate_limit_exceeded',
      })
      assert.deepEqual(world.sleeps, [], 'neither was retried')
      const { value: second } = await client.create({ ...ADA, email: 'ada3@example.org' })
      assert.deepEqual(world.sleeps, [30_000])
      const { value: page } = await client.list()
      assert.deepEqual(
        page.data.map((item) => item.id),
        [first.id, second.id],
      )
    })

    it('waits out a 503 from a storage fault by its Retry-After, for an idempotent call', async () => {
      let faults = 1
      const world = await start({
        overrides: (service: BeneficiaryService) => ({
          get: (ctx, id) =>
            faults-- > 0
              ? Promise.reject(new StorageUnavailableError('busy'))
              : service.get(ctx, id),
        }),
      })
      const client = world.client()
      const { value: created } = await client.create(ADA)
      const { value } = await client.get(created.id)
      assert.equal(value.email, ADA.email)
      assert.deepEqual(world.sleeps, [1_000])
      assert.equal(world.calls.get, 2)
    })
  })
}
