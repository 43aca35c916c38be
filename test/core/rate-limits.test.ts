import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { LocalRateLimitStore, RateLimitedError } from '../../core/index.js'
import { takeToken } from '../../core/token-bucket.js'
import { credentials, maria, rejectsWith, setup } from './support.js'

describe('token buckets (D20)', () => {
  const policy = { capacity: 10, windowMs: 60_000 }

  it('D20: exactly 10 pass at once, the 11th waits 6 s, and one token is back after exactly 6 s', () => {
    const store = new LocalRateLimitStore()
    for (let i = 0; i < 10; i++) assert.equal(store.takeSync('k', policy, 0).allowed, true)
    const refused = store.takeSync('k', policy, 0)
    assert.equal(refused.allowed, false)
    assert.equal(refused.retryAfterMs, 6000)
    assert.equal(store.takeSync('k', policy, 5999).allowed, false)
    assert.equal(store.takeSync('k', policy, 6000).allowed, true)
    assert.equal(store.takeSync('k', policy, 6000).allowed, false)
  })

  it('D20: never holds more than its capacity', () => {
    let state = takeToken(undefined, policy, 0).state
    state = takeToken(state, policy, 10 * 60_000).state
    assert.equal(state.units / policy.windowMs, 9)
    const { result } = takeToken(state, policy, 20 * 60_000)
    assert.equal(result.tokens, 9)
    assert.equal(result.resetMs, 6000)
  })

  it('forgets buckets that have refilled, so memory follows the active clients', () => {
    const store = new LocalRateLimitStore()
    for (let i = 0; i < 5000; i++) store.takeSync(`k${i}`, policy, 0)
    for (let i = 0; i < 4096; i++) store.takeSync('late', policy, 120_000)
    assert.ok(store.size < 5000)
  })
})

describe('limit classes (D19, D20)', () => {
  it('D19, D20: the write class lets 10 creates through, refuses the 11th with retry_after 6, and refills', async () => {
    const { service, ctx, clock } = await setup()
    for (let i = 0; i < 10; i++) {
      const { rateLimit } = await service.create(ctx, { ...maria, email: `m${i}@example.org` })
      assert.equal(rateLimit?.policy, 'write')
      assert.equal(rateLimit?.remaining, 9 - i)
    }
    const error = await rejectsWith<RateLimitedError>(
      service.create(ctx, maria),
      'rate_limit_exceeded',
    )
    assert.ok(error instanceof RateLimitedError)
    assert.equal(error.retryAfterSeconds, 6)
    assert.equal(error.rateLimit?.limit, 10)
    assert.equal(error.rateLimit?.remaining, 0)
    assert.equal(error.rateLimit?.resetSeconds, 60)
    clock.advance(6000)
    await service.create(ctx, { ...maria, email: 'late@example.org' })
    await rejectsWith(service.create(ctx, maria), 'rate_limit_exceeded')
    assert.equal((await service.list(ctx, {})).value.meta.total_count, 11)
  })

  it('D20: the 429 message counts its seconds as a person would: 1 second, 6 seconds', async () => {
    const perSecond = await setup({ limits: { auth: 100, write: 60, standard: 100 } })
    for (let i = 0; i < 60; i++) {
      await perSecond.service.create(perSecond.ctx, { ...maria, email: `s${i}@example.org` })
    }
    const one = await rejectsWith<RateLimitedError>(
      perSecond.service.create(perSecond.ctx, maria),
      'rate_limit_exceeded',
    )
    assert.equal(one.retryAfterSeconds, 1)
    assert.match(one.message, /Retry in 1 second\.$/)
    const { service, ctx } = await setup()
    for (let i = 0; i < 10; i++) await service.create(ctx, { ...maria, email: `t${i}@example.org` })
    const six = await rejectsWith<RateLimitedError>(
      service.create(ctx, maria),
      'rate_limit_exceeded',
    )
    assert.match(six.message, /Retry in 6 seconds\.$/)
  })

  it('D19: reads draw from the standard class, separately from writes', async () => {
    const { service, ctx } = await setup({ limits: { standard: 3 } })
    for (let i = 0; i < 3; i++) await service.list(ctx, {})
    await rejectsWith(service.get(ctx, 1), 'rate_limit_exceeded')
    await service.create(ctx, maria)
  })

  it('D19: the auth class limits login and refresh to 5 per minute per IP address', async () => {
    const { service, client, tokens } = await setup()
    // setup() logged in once from 192.0.2.1.
    for (let i = 0; i < 3; i++) await service.login({ ip: '192.0.2.1' }, credentials(client))
    await service.refresh({ ip: '192.0.2.1' }, { refresh_token: tokens.refresh_token })
    const error = await rejectsWith<RateLimitedError>(
      service.login({ ip: '192.0.2.1' }, credentials(client)),
      'rate_limit_exceeded',
    )
    assert.equal(error.retryAfterSeconds, 12)
    assert.equal(error.rateLimit?.policy, 'auth')
    await service.login({ ip: '198.51.100.7' }, credentials(client))
  })

  it('D19: failed logins count too, so guessing secrets is limited', async () => {
    const { service, client } = await setup()
    for (let i = 0; i < 5; i++) {
      await rejectsWith(
        service.login(
          { ip: '203.0.113.5' },
          { client_id: client.client_id, client_secret: `guess-${i}` },
        ),
        'invalid_credentials',
      )
    }
    await rejectsWith(
      service.login({ ip: '203.0.113.5' }, credentials(client)),
      'rate_limit_exceeded',
    )
  })

  it('D20: errors after the limiter carry the bucket state for the headers', async () => {
    const { service, ctx } = await setup()
    const error = await rejectsWith<{ rateLimit?: { policy: string }; clientId?: string }>(
      service.get(ctx, 42),
      'not_found',
    )
    assert.equal(error.rateLimit?.policy, 'standard')
    assert.ok(error.clientId)
  })

  it('refuses limits that are not positive integers', async () => {
    await assert.rejects(setup({ limits: { write: 0 } }), TypeError)
    await assert.rejects(setup({ limits: { windowSeconds: 1.5 } }), TypeError)
  })
})
