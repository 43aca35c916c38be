import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { decodeJwt, decodeProtectedHeader, SignJWT, base64url } from 'jose'
import { MemoryStorage } from '../../adapters/memory/index.js'
import { createBeneficiaryService, FakeClock, InvalidTokenError } from '../../core/index.js'
import { credentials, maria, rejectsWith, setup, unchecked } from './support.js'

describe('clients (D1)', () => {
  it('D1: provisioning returns the secret once and keeps only its hash', async () => {
    const { service, storage, client } = await setup()
    assert.match(client.client_secret, /^[A-Za-z0-9_-]{43}$/)
    const stored = await storage.clients.get(client.client_id)
    assert.ok(stored)
    assert.notEqual(stored.secret_hash, client.client_secret)
    assert.ok(!JSON.stringify(stored).includes(client.client_secret))
    const listed = await service.clients.list()
    assert.equal(listed.length, 1)
    assert.deepEqual(Object.keys(listed[0]!).sort(), [
      'client_id',
      'created_at',
      'name',
      'revoked_at',
      'scopes',
    ])
  })

  it('D1: a revoked client cannot log in and its live tokens stop working', async () => {
    const { service, client, ctx } = await setup()
    assert.equal(await service.clients.revoke(client.client_id), true)
    assert.equal(await service.clients.revoke(client.client_id), false)
    await rejectsWith(service.list(ctx, {}), 'invalid_token')
    await rejectsWith(
      service.login(
        { ip: '192.0.2.9' },
        { client_id: client.client_id, client_secret: client.client_secret },
      ),
      'invalid_credentials',
    )
    const [info] = await service.clients.list()
    assert.notEqual(info?.revoked_at, null)
  })

  it('D1: refuses an empty name and unknown scopes', async () => {
    const { service } = await setup()
    const error = await rejectsWith<{ details: { field: string }[] }>(
      service.clients.create({ name: ' ', scopes: ['admin'] }),
      'validation_failed',
    )
    assert.deepEqual(error.details.map((d) => d.field).sort(), ['name', 'scopes'])
  })
})

describe('login and scopes (D2, D6)', () => {
  it('returns the token set of specification 4.2', async () => {
    const { tokens } = await setup()
    assert.deepEqual(Object.keys(tokens).sort(), [
      'access_token',
      'expires_in',
      'refresh_token',
      'scope',
      'token_type',
    ])
    assert.equal(tokens.token_type, 'Bearer')
    assert.equal(tokens.expires_in, 3600)
    assert.equal(tokens.scope, 'read write')
  })

  it('D6: a wrong secret and an unknown client id get the same invalid_credentials answer', async () => {
    const { service, client } = await setup()
    const wrong = await rejectsWith(
      service.login(
        { ip: '192.0.2.2' },
        { client_id: client.client_id, client_secret: 'x'.repeat(43) },
      ),
      'invalid_credentials',
    )
    const unknown = await rejectsWith(
      service.login(
        { ip: '192.0.2.2' },
        { client_id: 'cl_nobody', client_secret: client.client_secret },
      ),
      'invalid_credentials',
    )
    assert.equal(wrong.message, unknown.message)
    assert.ok(!wrong.message.includes(client.client_id))
  })

  it('D2: a read-only token gets insufficient_scope on writes and may still read', async () => {
    const { service, login } = await setup()
    const readOnly = await login('192.0.2.3', { scope: 'read' })
    assert.equal(readOnly.scope, 'read')
    const ctx = { token: readOnly.access_token }
    const error = await rejectsWith<{ requiredScope: string }>(
      service.create(ctx, maria),
      'insufficient_scope',
    )
    assert.equal(error.requiredScope, 'write')
    const page = await service.list(ctx, {})
    assert.equal(page.value.meta.total_count, 0)
  })

  it('D29: a write-only token may create and delete, but not update or change a status: those answer with the record', async () => {
    const { service, ctx, login } = await setup()
    const id = (await service.create(ctx, maria)).value.id
    const writeOnly = { token: (await login('192.0.2.5', { scope: 'write' })).access_token }
    // One at a time: a call started before the previous one is awaited could reject unhandled.
    for (const attempt of [
      () => service.update(writeOnly, id, {}),
      () => service.update(writeOnly, id, { last_name: 'Bianchi' }),
      () => service.setStatus(writeOnly, id, { status: 'pending' }),
      () => service.setStatus(writeOnly, id, { status: 'active' }),
    ]) {
      const error = await rejectsWith<{ requiredScope: string }>(attempt(), 'insufficient_scope')
      assert.equal(error.requiredScope, 'read')
    }
    const unchanged = (await service.get(ctx, id)).value
    assert.equal(unchanged.last_name, 'Rossi')
    assert.equal(unchanged.status, 'pending')
    const other = await service.create(writeOnly, { ...maria, email: 'other@example.org' })
    assert.equal(other.value.status, 'pending')
    assert.equal((await service.remove(writeOnly, other.value.id)).value, null)
    await rejectsWith(service.get(writeOnly, id), 'insufficient_scope')
  })

  it('D2: asking at login for a scope the client lacks is insufficient_scope', async () => {
    const { service } = await setup()
    const reader = await service.clients.create({ name: 'Auditors', scopes: ['read'] })
    await rejectsWith(
      service.login(
        { ip: '192.0.2.4' },
        { client_id: reader.client_id, client_secret: reader.client_secret, scope: 'read write' },
      ),
      'insufficient_scope',
    )
  })
})

describe('access tokens (D3, D6)', () => {
  it('D3: is an at+jwt HS256 token with kid and the required claims', async () => {
    const { tokens, client } = await setup()
    const header = decodeProtectedHeader(tokens.access_token)
    assert.equal(header.alg, 'HS256')
    assert.equal(header.typ, 'at+jwt')
    assert.equal(typeof header.kid, 'string')
    const claims = decodeJwt(tokens.access_token)
    assert.equal(claims.sub, client.client_id)
    assert.equal(claims.scope, 'read write')
    assert.equal(claims.exp! - claims.iat!, 3600)
    for (const claim of ['iss', 'aud', 'jti', 'sid']) assert.ok(claims[claim], claim)
  })

  it('D3: two services starting at once on a new storage generate one key and accept each other’s tokens', async () => {
    const storage = new MemoryStorage()
    const clock = new FakeClock(Date.UTC(2026, 0, 1))
    const [first, second] = await Promise.all([
      createBeneficiaryService({ storage, clock }),
      createBeneficiaryService({ storage, clock }),
    ])
    assert.equal((await storage.signingKeys.list()).length, 1)
    const client = await first.clients.create({ name: 'Case workers', scopes: ['read'] })
    const ctx = { ip: '192.0.2.9' }
    const login = { client_id: client.client_id, client_secret: client.client_secret }
    const fromFirst = (await first.login(ctx, login)).value.access_token
    const fromSecond = (await second.login(ctx, login)).value.access_token
    await second.list({ ...ctx, token: fromFirst }, {})
    await first.list({ ...ctx, token: fromSecond }, {})
  })

  it('D3: expiry is exact: accepted at 3599 s, token_expired at 3600 s plus the skew allowance', async () => {
    const { service, clock, ctx } = await setup({ clockSkewSeconds: 5 })
    clock.advance(3599_000)
    await service.list(ctx, {})
    clock.advance(1_000 + 5_000 - 1)
    await service.list(ctx, {})
    clock.advance(1)
    await rejectsWith(service.list(ctx, {}), 'token_expired')
  })

  it('D3: expiry is exact on the first verification too, not only from the cache', async () => {
    const { service, clock, tokens } = await setup({ clockSkewSeconds: 0 })
    clock.advance(3600_000)
    await rejectsWith(service.get({ token: tokens.access_token }, 1), 'token_expired')
  })

  it('D6: missing, malformed, forged and wrongly typed tokens are invalid_token', async () => {
    const { service, tokens, clock } = await setup()
    await rejectsWith(service.list({}, {}), 'invalid_token')
    await rejectsWith(service.list({ token: 'not-a-jwt' }, {}), 'invalid_token')
    const [head, body] = tokens.access_token.split('.')
    await rejectsWith(service.list({ token: `${head}.${body}.AAAA` }, {}), 'invalid_token')
    const claims = decodeJwt(tokens.access_token)
    const otherKey = new Uint8Array(32).fill(7)
    const forged = await new SignJWT(claims)
      .setProtectedHeader({
        alg: 'HS256',
        typ: 'at+jwt',
        kid: decodeProtectedHeader(tokens.access_token).kid!,
      })
      .sign(otherKey)
    await rejectsWith(service.list({ token: forged }, {}), 'invalid_token')
    const unsigned = `${base64url.encode(JSON.stringify({ alg: 'none', typ: 'at+jwt' }))}.${body}.`
    await rejectsWith(service.list({ token: unsigned }, {}), 'invalid_token')
    clock.advance(10)
  })

  it('D3: keys rotate: a token signed by an older key still verifies after a new key is prepended', async () => {
    const clock = new FakeClock()
    const storage = new MemoryStorage()
    const oldKey = { kid: 'k1', secret: base64url.encode(new Uint8Array(32).fill(1)) }
    const newKey = { kid: 'k2', secret: base64url.encode(new Uint8Array(32).fill(2)) }
    const before = await createBeneficiaryService({ storage, clock, keys: [oldKey] })
    const client = await before.clients.create({ name: 'c', scopes: ['read'] })
    const { value } = await before.login({ ip: '1' }, credentials(client))
    const after = await createBeneficiaryService({ storage, clock, keys: [newKey, oldKey] })
    await after.list({ token: value.access_token }, {})
    const fresh = await after.login({ ip: '1' }, credentials(client))
    assert.equal(decodeProtectedHeader(fresh.value.access_token).kid, 'k2')
  })

  it('D3: without configured keys one is generated and kept in storage, so a restart keeps tokens valid', async () => {
    const clock = new FakeClock()
    const storage = new MemoryStorage()
    const first = await createBeneficiaryService({ storage, clock })
    const client = await first.clients.create({ name: 'c', scopes: ['read'] })
    const { value } = await first.login({ ip: '1' }, credentials(client))
    const restarted = await createBeneficiaryService({ storage, clock })
    await restarted.list({ token: value.access_token }, {})
    assert.equal((await storage.signingKeys.list()).length, 1)
  })

  it('refuses keys shorter than 256 bits and a skew over 30 s', async () => {
    const storage = new MemoryStorage()
    await assert.rejects(
      createBeneficiaryService({ storage, keys: [{ kid: 'k', secret: 'c2hvcnQ' }] }),
      TypeError,
    )
    await assert.rejects(createBeneficiaryService({ storage, clockSkewSeconds: 31 }), TypeError)
  })

  it('tokens from another issuer or audience are invalid_token', async () => {
    const clock = new FakeClock()
    const storage = new MemoryStorage()
    const keys = [{ kid: 'k', secret: base64url.encode(new Uint8Array(32).fill(3)) }]
    const a = await createBeneficiaryService({ storage, clock, keys, audience: 'a' })
    const b = await createBeneficiaryService({ storage, clock, keys, audience: 'b' })
    const client = await a.clients.create({ name: 'c', scopes: ['read'] })
    const { value } = await a.login({ ip: '1' }, credentials(client))
    const error = await rejectsWith(b.list({ token: value.access_token }, {}), 'invalid_token')
    assert.ok(error instanceof InvalidTokenError)
  })
})

describe('refresh and logout (D4, D5)', () => {
  it('D4: refresh returns a new access token without a refresh_token, before and after expiry', async () => {
    const { service, tokens, clock } = await setup()
    const early = await service.refresh(
      { ip: '192.0.2.5' },
      { refresh_token: tokens.refresh_token },
    )
    assert.deepEqual(Object.keys(early.value).sort(), ['access_token', 'expires_in', 'token_type'])
    clock.advance(2 * 3600_000)
    await rejectsWith(service.list({ token: tokens.access_token }, {}), 'token_expired')
    const late = await service.refresh({ ip: '192.0.2.5' }, { refresh_token: tokens.refresh_token })
    await service.list({ token: late.value.access_token }, {})
  })

  it('D4: a refresh token is refused after 30 days', async () => {
    const { service, tokens, clock } = await setup()
    clock.advance(30 * 86_400_000 - 1)
    await service.refresh({ ip: '192.0.2.6' }, { refresh_token: tokens.refresh_token })
    clock.advance(1)
    await rejectsWith(
      service.refresh({ ip: '192.0.2.6' }, { refresh_token: tokens.refresh_token }),
      'invalid_token',
    )
  })

  it('D4: unknown refresh tokens are invalid_token; credentials, when given, must match', async () => {
    const { service, tokens, client } = await setup()
    await rejectsWith(
      service.refresh({ ip: '192.0.2.7' }, { refresh_token: 'x'.repeat(43) }),
      'invalid_token',
    )
    await rejectsWith(
      service.refresh(
        { ip: '192.0.2.8' },
        {
          refresh_token: tokens.refresh_token,
          client_id: client.client_id,
          client_secret: 'wrong',
        },
      ),
      'invalid_credentials',
    )
    const other = await service.clients.create({ name: 'other', scopes: ['read'] })
    await rejectsWith(
      service.refresh(
        { ip: '192.0.2.8' },
        {
          refresh_token: tokens.refresh_token,
          client_id: other.client_id,
          client_secret: other.client_secret,
        },
      ),
      'invalid_credentials',
    )
    await service.refresh(
      { ip: '192.0.2.9' },
      {
        refresh_token: tokens.refresh_token,
        client_id: client.client_id,
        client_secret: client.client_secret,
      },
    )
  })

  it('D5: logout revokes the access token and the session refresh token', async () => {
    const { service, tokens, ctx } = await setup()
    const result = await service.logout(ctx, { refresh_token: tokens.refresh_token })
    assert.equal(result.value, null)
    await rejectsWith(service.list(ctx, {}), 'invalid_token')
    await rejectsWith(
      service.refresh({ ip: '192.0.2.10' }, { refresh_token: tokens.refresh_token }),
      'invalid_token',
    )
  })

  it("D5: logout refuses another session's refresh token and leaves both sessions alive", async () => {
    const { service, ctx, login } = await setup()
    const other = await login('192.0.2.11')
    await rejectsWith(
      service.logout(ctx, { refresh_token: other.refresh_token }),
      'validation_failed',
    )
    await service.list(ctx, {})
    await rejectsWith(service.logout(ctx, unchecked('nope')), 'bad_request')
  })

  it('D5: another login session of the same client survives a logout', async () => {
    const { service, ctx, login } = await setup()
    const other = await login('192.0.2.12')
    await service.logout(ctx)
    await service.list({ token: other.access_token }, {})
  })
})

describe('domain errors', () => {
  it('carry no stack trace, and leave the stack traces of other errors as they were', async () => {
    const { service } = await setup()
    const error = await rejectsWith<Error>(service.list({ token: 'nope' }, {}), 'invalid_token')
    assert.doesNotMatch(error.stack ?? '', /\n\s+at /)
    assert.match(new Error('bug').stack ?? '', /\n\s+at /)
  })
})
