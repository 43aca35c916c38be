import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { MemoryStorage } from '../../adapters/memory/index.js'
import type { TokenIdentity, TokenRead } from '../../core/index.js'
import { maria, rejectsWith, setup } from './support.js'

/**
 * Gives the memory storage's beneficiary store a `getForToken` (as the PostgreSQL adapter has)
 * and counts the calls the core makes, so that the one-round-trip path of the core is tested
 * where it is decided, not only through PostgreSQL.
 */
function countCalls(storage: MemoryStorage) {
  const calls = { getForToken: 0, isTokenActive: 0, get: 0 }
  const beneficiaries = storage.beneficiaries
  const sessions = storage.sessions
  const get = beneficiaries.get.bind(beneficiaries)
  const isTokenActive = sessions.isTokenActive.bind(sessions)
  Object.assign(beneficiaries, {
    get: (id: number) => {
      calls.get++
      return get(id)
    },
    getForToken: async (id: number, token: TokenIdentity): Promise<TokenRead> =>
      (calls.getForToken++, await isTokenActive(token.sessionId, token.jti, token.clientId))
        ? { active: true, record: await get(id) }
        : { active: false },
  })
  Object.assign(sessions, {
    isTokenActive: (sessionId: string, jti: string, clientId: string) => {
      calls.isTokenActive++
      return isTokenActive(sessionId, jti, clientId)
    },
  })
  return calls
}

async function setupCounted() {
  const world = await setup({ limits: { standard: 3 } })
  const created = await world.service.create(world.ctx, maria)
  const calls = countCalls(world.storage)
  return { ...world, id: created.value.id, calls }
}

describe('reading a record with the token check (getForToken)', () => {
  it('a get checks the token and reads the record in one storage call', async () => {
    const { service, ctx, id, calls } = await setupCounted()
    const got = await service.get(ctx, id)
    assert.equal(got.value.last_name, 'Rossi')
    assert.deepEqual(calls, { getForToken: 1, isTokenActive: 0, get: 0 })
    await rejectsWith(service.get(ctx, id + 1), 'not_found')
  })

  it('a revoked token is a 401 even once the limit is spent (401 comes before 429)', async () => {
    const { service, ctx, id, client } = await setupCounted()
    for (let i = 0; i < 3; i++) await service.get(ctx, id)
    await rejectsWith(service.get(ctx, id), 'rate_limit_exceeded')
    await service.clients.revoke(client.client_id)
    await rejectsWith(service.get(ctx, id), 'invalid_token')
  })

  it('an id no record can have takes the usual path: the token is checked first (401, then 404)', async () => {
    const { service, ctx, calls, tokens } = await setupCounted()
    await rejectsWith(service.get(ctx, 'abc'), 'not_found')
    assert.deepEqual(calls, { getForToken: 0, isTokenActive: 1, get: 0 })
    await service.logout(ctx, { refresh_token: tokens.refresh_token })
    await rejectsWith(service.get(ctx, 'abc'), 'invalid_token')
  })

  it('an update starts from the record read with the token, and reads again only after losing a race', async () => {
    const { service, ctx, id, calls, storage } = await setupCounted()
    const updated = await service.update(ctx, id, { phone: '+39061234567' })
    assert.equal(updated.value.phone, '+39061234567')
    assert.deepEqual(calls, { getForToken: 1, isTokenActive: 0, get: 0 })

    // Another writer moves the version between the read and the write: the update is decided
    // again on a fresh read, and both changes survive.
    const store = storage.beneficiaries
    const update = store.update.bind(store)
    let raced = false
    Object.assign(store, {
      update: async (...args: Parameters<typeof update>) => {
        if (!raced) {
          raced = true
          const [previous] = args
          await update(
            previous,
            { ...previous, email: 'moved@example.org', version: previous.version + 1 },
            {
              at: previous.updated_at + 1,
              action: 'updated',
              client_id: 'other',
              request_id: 'race',
              changes: [],
            },
          )
        }
        return update(...args)
      },
    })
    const again = await service.update(ctx, id, { phone: '+39067654321' })
    assert.equal(again.value.phone, '+39067654321')
    assert.equal(again.value.email, 'moved@example.org')
    assert.deepEqual(calls, { getForToken: 2, isTokenActive: 0, get: 1 })
  })

  it('a token without the write scope gets 403 on an update, after the read, and nothing changes', async () => {
    const { service, client, id, calls, ctx } = await setupCounted()
    const readOnly = await service.login(
      { ip: '192.0.2.9' },
      { client_id: client.client_id, client_secret: client.client_secret, scope: 'read' },
    )
    await rejectsWith(
      service.setStatus({ token: readOnly.value.access_token }, id, {
        status: 'active',
      }),
      'insufficient_scope',
    )
    assert.equal((await service.get(ctx, id)).value.status, 'pending')
    assert.equal(calls.getForToken, 2)
  })
})
