import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { decodeJwt, decodeProtectedHeader } from 'jose'
import { MemoryStorage } from '../../adapters/memory/index.js'
import {
  createBeneficiaryService,
  FakeClock,
  KEY_RELOAD_SECONDS,
  rotateSigningKey,
  signingKeyStates,
  type ProvisionedClient,
} from '../../core/index.js'
import type { SigningKeyStore } from '../../core/ports/signing-key-store.js'

const TTL = 600
const SKEW = 5
const START = Date.UTC(2026, 0, 1, 9, 0, 0)

/** A service on `storage` as a server starts it: keys kept in the storage. */
function start(storage: MemoryStorage, clock: FakeClock) {
  return createBeneficiaryService({
    storage,
    clock,
    accessTokenTtlSeconds: TTL,
    clockSkewSeconds: SKEW,
    limits: { auth: 1000, write: 1000, standard: 1000 },
  })
}

async function tokenOf(
  service: Awaited<ReturnType<typeof start>>,
  client: ProvisionedClient,
): Promise<string> {
  const { value } = await service.login(
    { ip: '192.0.2.1' },
    { client_id: client.client_id, client_secret: client.client_secret },
  )
  return value.access_token
}

const kidOf = (token: string): string | undefined => decodeProtectedHeader(token).kid

/** `store`, counting its reads. */
function counted(store: SigningKeyStore): { store: SigningKeyStore; reads: () => number } {
  let reads = 0
  return {
    store: {
      list: () => {
        reads += 1
        return store.list()
      },
      insert: (key) => store.insert(key),
    },
    reads: () => reads,
  }
}

describe('rotating the stored signing keys (D3)', () => {
  it('after a rotation and a restart, tokens of the old key keep working until they expire, and new ones carry the new kid', async () => {
    const storage = new MemoryStorage()
    const clock = new FakeClock(START)
    const before = await start(storage, clock)
    const client = await before.clients.create({ name: 'c', scopes: ['read', 'write'] })
    const old = await tokenOf(before, client)
    const oldKid = kidOf(old)

    clock.advance(1_000)
    const rotated = await rotateSigningKey(storage.signingKeys, clock)
    assert.notEqual(rotated.kid, oldKid)
    const after = await start(storage, clock)
    assert.ok((await after.list({ token: old }, {})).value)
    const fresh = await tokenOf(after, client)
    assert.equal(kidOf(fresh), rotated.kid)

    // The old token expires as any does: token_expired, not an unknown key.
    clock.advance((TTL + SKEW) * 1000)
    await assert.rejects(after.list({ token: old }, {}), { code: 'token_expired' })
  })

  it('reaches a running service: it signs with the new key after the reload interval, or once it meets its kid', async () => {
    const storage = new MemoryStorage()
    const clock = new FakeClock(START)
    const running = await start(storage, clock)
    const other = await start(storage, clock)
    const client = await running.clients.create({ name: 'c', scopes: ['read'] })
    const oldKid = kidOf(await tokenOf(running, client))
    const rotated = await rotateSigningKey(storage.signingKeys, clock)
    assert.equal(kidOf(await tokenOf(running, client)), oldKid, 'within the interval')
    clock.advance(KEY_RELOAD_SECONDS * 1000)
    assert.equal(kidOf(await tokenOf(running, client)), rotated.kid, 'after it')
    // An instance started after the rotation signs with the new key at once; one that has not
    // read the keys since reads them on meeting the new kid, and signs with it from then on.
    const restarted = await start(storage, clock)
    const fromRestarted = await tokenOf(restarted, client)
    assert.equal(kidOf(fromRestarted), rotated.kid)
    assert.ok((await other.list({ token: fromRestarted }, {})).value)
    assert.equal(kidOf(await tokenOf(other, client)), rotated.kid)
  })

  it('retires a replaced key once no token it signed can be live, and reads the keys for made-up kids at most once a second', async () => {
    const storage = new MemoryStorage()
    const clock = new FakeClock(START)
    const reads = counted(storage.signingKeys)
    const service = await createBeneficiaryService({
      storage: {
        ...storage,
        signingKeys: reads.store,
        ping: () => storage.ping(),
        close: () => storage.close(),
      },
      clock,
      accessTokenTtlSeconds: TTL,
      clockSkewSeconds: SKEW,
      limits: { auth: 1000, write: 1000, standard: 1000 },
    })
    const client = await service.clients.create({ name: 'c', scopes: ['read'] })
    const old = await tokenOf(service, client)
    // Rotated just after the service read the keys: it reads them next a whole interval later.
    await rotateSigningKey(storage.signingKeys, clock)
    const rotatedAt = clock.now()
    const window = { ttlSeconds: TTL, clockSkewSeconds: SKEW }
    const retiresAt = rotatedAt + (KEY_RELOAD_SECONDS + TTL + SKEW) * 1000
    const states = signingKeyStates(await storage.signingKeys.list(), clock.now(), window)
    assert.deepEqual(
      states.map((key) => [key.state, key.retires_at]),
      [
        ['verifying', retiresAt],
        ['signing', undefined],
      ],
    )
    // The last token the old key can sign: just before the service reads the keys again.
    clock.advance(KEY_RELOAD_SECONDS * 1000 - 1)
    const last = await tokenOf(service, client)
    assert.equal(kidOf(last), kidOf(old))
    // It verifies until that token expires, which is no later than the key's retirement.
    const expiresAt = (decodeJwt(last).exp! + SKEW) * 1000
    assert.ok(expiresAt <= retiresAt, `${expiresAt} <= ${retiresAt}`)
    clock.set(expiresAt - 1)
    assert.ok((await service.list({ token: last }, {})).value, 'live until it expires')
    clock.set(retiresAt)
    assert.equal(
      signingKeyStates(await storage.signingKeys.list(), clock.now(), window)[0]!.state,
      'retired',
    )

    // Forged tokens naming unknown kids: one read of the keys per second at most.
    const forged = (kid: string) => {
      const [, payload, signature] = last.split('.')
      const header = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'at+jwt', kid })).toString(
        'base64url',
      )
      return `${header}.${payload}.${signature}`
    }
    const readsBefore = reads.reads()
    for (let i = 0; i < 20; i++) {
      await assert.rejects(service.list({ token: forged(`made-up-${i}`) }, {}), {
        code: 'invalid_token',
      })
    }
    assert.equal(reads.reads() - readsBefore, 1)
  })
})
