import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { MemoryStorage } from '../../adapters/memory/index.js'
import {
  createBeneficiaryService,
  FakeClock,
  FallbackRateLimitStore,
  LocalRateLimitStore,
  StorageUnavailableError,
  type BucketPolicy,
  type RateLimitStore,
  type TakeResult,
} from '../../core/index.js'
import { createHandler } from '../../server/handler.js'
import { OpenApiResponseValidator } from './openapi-validator.js'
import { login, MARIO, send, type Answer } from './server-fixtures.js'

const validator = new OpenApiResponseValidator()

/** A shared store that fails while `down`. */
class FlakyStore implements RateLimitStore {
  readonly #buckets = new LocalRateLimitStore()
  down = false

  take(key: string, policy: BucketPolicy, now: number): Promise<TakeResult> {
    if (this.down) return Promise.reject(new StorageUnavailableError('cannot_open'))
    return this.#buckets.take(key, policy, now)
  }
}

async function setUp() {
  const storage = new MemoryStorage()
  const clock = new FakeClock()
  const shared = new FlakyStore()
  const store = new FallbackRateLimitStore({
    primary: shared,
    clock,
    probe: () => (shared.down ? Promise.reject(new Error('down')) : Promise.resolve()),
  })
  const service = await createBeneficiaryService({
    storage,
    clock,
    limits: { auth: 100, write: 100, standard: 100, store },
  })
  const client = await service.clients.create({ name: 'ops', scopes: ['read', 'write'] })
  const handler = createHandler(service, {
    readiness: [{ name: 'rate_limits', check: () => store.checkPrimary() }],
  })
  const call = async (method: string, path: string, token?: string, body?: unknown) => {
    const answer: Answer = await send(handler, method, path, {
      ...(token !== undefined && { token }),
      ...(body !== undefined && { body }),
    })
    assert.deepEqual(validator.check(method, path, answer), [])
    return answer
  }
  return { storage, clock, shared, store, handler, client, call }
}

describe('/readyz and the shared rate-limit store (D31)', () => {
  it('keeps its healthy answer exactly while the shared store answers', async () => {
    const { call } = await setUp()
    const ready = await call('GET', '/readyz')
    assert.equal(ready.status, 200)
    assert.equal(ready.body, '{"status":"ready"}')
  })

  it('answers 200 degraded, naming rate_limits, while the store is down; every request is still served and limited', async () => {
    const { shared, handler, client, call, clock } = await setUp()
    const { access } = await login(handler, client)
    shared.down = true
    const ready = await call('GET', '/readyz')
    assert.equal(ready.status, 200)
    assert.deepEqual(ready.json, { status: 'degraded', degraded: ['rate_limits'] })
    const created = await call('POST', '/v3/beneficiaries', access, MARIO)
    assert.equal(created.status, 201)
    assert.equal(created.headers['x-ratelimit-limit'], '100')
    const listed = await call('GET', '/v3/beneficiaries', access)
    assert.equal(listed.status, 200)
    assert.equal(listed.headers['ratelimit-policy'], '"standard";q=100;w=60')

    shared.down = false
    clock.advance(1000)
    assert.equal((await call('GET', '/readyz')).body, '{"status":"ready"}')
  })

  it('counts a check that rejects as degraded, and still answers 503 first when the database does not answer', async () => {
    const storage = new MemoryStorage()
    const service = await createBeneficiaryService({ storage, clock: new FakeClock() })
    const handler = createHandler(service, {
      readiness: [{ name: 'rate_limits', check: () => Promise.reject(new Error('no')) }],
    })
    const degraded = await send(handler, 'GET', '/readyz')
    assert.deepEqual(degraded.json, { status: 'degraded', degraded: ['rate_limits'] })
    await storage.close()
    const down = await send(handler, 'GET', '/readyz')
    assert.equal(down.status, 503)
    assert.equal(down.json?.['error'], 'service_unavailable')
  })
})
