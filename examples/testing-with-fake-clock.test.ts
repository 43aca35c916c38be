/**
 * How a host application tests its own code against the service: memory storage and a fake
 * clock, so token expiry and rate-limit refills happen when the test says, with no sleeping.
 *
 *   node --test dist/examples/testing-with-fake-clock.test.js
 */
import assert from 'node:assert/strict'
import { beforeEach, describe, it } from 'node:test'
import {
  createBeneficiaryService,
  FakeClock,
  type BeneficiaryService,
  type RequestContext,
} from 'beneficiary-service'
import { MemoryStorage } from 'beneficiary-service/memory'

describe('a host application under test', () => {
  let clock: FakeClock
  let service: BeneficiaryService
  let ctx: RequestContext
  let refreshToken: string

  beforeEach(async () => {
    clock = new FakeClock(Date.UTC(2026, 0, 1))
    // clockSkewSeconds: 0 makes expiry land exactly on the hour; production keeps a few seconds.
    service = await createBeneficiaryService({
      storage: new MemoryStorage(),
      clock,
      clockSkewSeconds: 0,
    })
    const client = await service.clients.create({ name: 'test', scopes: ['read', 'write'] })
    const { value } = await service.login(
      { ip: '127.0.0.1' },
      { client_id: client.client_id, client_secret: client.client_secret },
    )
    ctx = { token: value.access_token }
    refreshToken = value.refresh_token
  })

  it('sees its access token expire after an hour and refreshes it', async () => {
    await service.list(ctx, {})
    clock.advance(3600_000)
    await assert.rejects(service.list(ctx, {}), { code: 'token_expired' })
    const { value } = await service.refresh({ ip: '127.0.0.1' }, { refresh_token: refreshToken })
    const { value: page } = await service.list({ token: value.access_token }, {})
    assert.equal(page.meta.total_count, 0)
  })

  it('is rate limited after 10 writes and gets a token back 6 seconds later', async () => {
    const person = (i: number) => ({
      first_name: 'Ada',
      last_name: 'Lovelace',
      email: `ada${i}@example.org`,
    })
    for (let i = 0; i < 10; i++) await service.create(ctx, person(i))
    const refused = await service.create(ctx, person(10)).then(
      () => assert.fail('the 11th write should be limited'),
      (error: { code: string; retryAfterSeconds: number }) => error,
    )
    assert.equal(refused.code, 'rate_limit_exceeded')
    assert.equal(refused.retryAfterSeconds, 6)
    clock.advance(6_000)
    const { value } = await service.create(ctx, person(10))
    assert.equal(value.status, 'pending')
  })
})
