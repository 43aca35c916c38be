import assert from 'node:assert/strict'
import { createHmac, randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import {
  base64url,
  decodeJwt,
  decodeProtectedHeader,
  exportJWK,
  generateKeyPair,
  UnsecuredJWT,
} from 'jose'
import { MemoryStorage } from '../../adapters/memory/index.js'
import { openSqliteStorage } from '../../adapters/sqlite/index.js'
import { createBeneficiaryService, FakeClock } from '../../core/index.js'
import type { Storage } from '../../core/ports/storage.js'
import { createHandler } from '../../server/handler.js'
import { nodeSha256 } from '../../server/node-sha256.js'
import { startServer } from '../../server/start-server.js'
import { MAX_HEADER_BYTES } from '../../server/transports/transport.js'
import { send } from '../server/server-fixtures.js'
import { countStorageCalls, http, type StorageCalls } from './security-fixtures.js'
import { flipSignatureBit, TokenForge, withUnusedBitsSet } from './token-forge.js'
import { TRANSPORTS_HERE } from '../support/transports.js'

// Every attack is a request to GET /v3/beneficiaries carrying a token (or header) that differs
// from an accepted one in one property only. It must be refused with 401 invalid_token (D6: the
// code for a missing, malformed, forged or wrongly typed token) before the service touches its
// storage; the same request with that property put right must be accepted, which shows that
// the refusal came from the attacked property and nothing else.

const KEY = { kid: 'k-security-1', secret: base64url.encode(randomBytes(32)) }
const START = Date.UTC(2026, 0, 1, 9, 0, 0)

/** What a request presents: its headers and query string. */
interface Presented {
  readonly headers: Readonly<Record<string, string>>
  readonly query?: string
}

/** One attack and the same request with the attacked property put right. */
interface Attack {
  readonly attack: Presented
  readonly fixed: Presented
}

const keyPairs = new Map<string, ReturnType<typeof generateKeyPair>>()

/** An attacker's key pair for `alg`, generated once (RSA keys take a while). */
function attackerKeys(alg: string): ReturnType<typeof generateKeyPair> {
  let pair = keyPairs.get(alg)
  if (pair === undefined) {
    pair = generateKeyPair(alg, { extractable: true })
    keyPairs.set(alg, pair)
  }
  return pair
}

const bearer = (token: string): Presented => ({ headers: { authorization: `Bearer ${token}` } })

/** A live login session to forge against, and the storage calls of everything after it. */
interface World {
  readonly forge: TokenForge
  readonly calls: StorageCalls
  readonly clock: FakeClock
  readonly service: Awaited<ReturnType<typeof createBeneficiaryService>>
}

async function createWorld(storage: Storage): Promise<World> {
  const { storage: counted, calls } = countStorageCalls(storage)
  const clock = new FakeClock(START)
  const service = await createBeneficiaryService({
    storage: counted,
    clock,
    keys: [KEY],
    limits: { auth: 1_000, write: 1_000, standard: 100_000 },
    sha256: nodeSha256,
  })
  const client = await service.clients.create({ name: 'Attacked', scopes: ['read', 'write'] })
  const { value } = await service.login(
    { ip: '192.0.2.1' },
    { client_id: client.client_id, client_secret: client.client_secret },
  )
  const genuine = value.access_token
  const forge = new TokenForge(decodeProtectedHeader(genuine), decodeJwt(genuine), KEY.secret, () =>
    clock.now(),
  )
  return { forge, calls, clock, service }
}

/** The attacks, by name: each builds its token (or header) and its put-right twin. */
const ATTACKS: Readonly<Record<string, (world: World) => Promise<Attack>>> = {
  'alg none with the signature removed': async ({ forge }) => ({
    attack: bearer(forge.raw(forge.header({ alg: 'none' }), forge.claims(), null)),
    fixed: bearer(await forge.sign()),
  }),
  'alg None, spelled otherwise, with the signature removed': async ({ forge }) => ({
    attack: bearer(forge.raw(forge.header({ alg: 'None' }), forge.claims(), null)),
    fixed: bearer(await forge.sign()),
  }),
  "jose's own unsecured JWT (alg none, no kid, no typ)": async ({ forge }) => {
    const claims = forge.claims()
    return {
      attack: bearer(new UnsecuredJWT(claims).encode()),
      fixed: bearer(await forge.sign({ claims })),
    }
  },
  'alg none keeping a genuine HMAC signature': async ({ forge }) => {
    const claims = forge.claims()
    const signed = forge.raw(forge.header(), claims)
    const unsigned = forge.raw(forge.header({ alg: 'none' }), claims, null)
    return { attack: bearer(unsigned + signed.split('.')[2]!), fixed: bearer(signed) }
  },
  'HS256 signed with the public kid as the secret': async ({ forge }) => ({
    attack: bearer(await forge.sign({ key: new TextEncoder().encode(KEY.kid) })),
    fixed: bearer(await forge.sign()),
  }),
  'HS256 signed with the public issuer name as the secret': async ({ forge }) => ({
    attack: bearer(await forge.sign({ key: new TextEncoder().encode('beneficiary-service') })),
    fixed: bearer(await forge.sign()),
  }),
  'HS256 signed with an empty secret': async ({ forge }) => ({
    attack: bearer(forge.raw(forge.header(), forge.claims(), new Uint8Array(0))),
    fixed: bearer(forge.raw(forge.header(), forge.claims())),
  }),
  'HS256 signed with a foreign 256-bit key': async ({ forge }) => ({
    attack: bearer(await forge.sign({ key: randomBytes(32) })),
    fixed: bearer(await forge.sign()),
  }),
  'RS256 signed with an attacker RSA key': async ({ forge }) => {
    const { privateKey } = await attackerKeys('RS256')
    return {
      attack: bearer(await forge.sign({ header: { alg: 'RS256' }, key: privateKey })),
      fixed: bearer(await forge.sign()),
    }
  },
  'PS256 signed with an attacker RSA key': async ({ forge }) => {
    const { privateKey } = await attackerKeys('PS256')
    return {
      attack: bearer(await forge.sign({ header: { alg: 'PS256' }, key: privateKey })),
      fixed: bearer(await forge.sign()),
    }
  },
  'ES256 signed with an attacker EC key': async ({ forge }) => {
    const { privateKey } = await attackerKeys('ES256')
    return {
      attack: bearer(await forge.sign({ header: { alg: 'ES256' }, key: privateKey })),
      fixed: bearer(await forge.sign()),
    }
  },
  'EdDSA signed with an attacker Ed25519 key': async ({ forge }) => {
    const { privateKey } = await attackerKeys('EdDSA')
    return {
      attack: bearer(await forge.sign({ header: { alg: 'EdDSA' }, key: privateKey })),
      fixed: bearer(await forge.sign()),
    }
  },
  'an RS256 header over a genuine HMAC-SHA-256 signature': async ({ forge }) => {
    const claims = forge.claims()
    return {
      attack: bearer(forge.raw(forge.header({ alg: 'RS256' }), claims)),
      fixed: bearer(forge.raw(forge.header(), claims)),
    }
  },
  'alg hs256 in lower case over a genuine HMAC-SHA-256 signature': async ({ forge }) => {
    const claims = forge.claims()
    return {
      attack: bearer(forge.raw(forge.header({ alg: 'hs256' }), claims)),
      fixed: bearer(forge.raw(forge.header(), claims)),
    }
  },
  "alg 'HS256 ' with a trailing space over a genuine signature": async ({ forge }) => {
    const claims = forge.claims()
    return {
      attack: bearer(forge.raw(forge.header({ alg: 'HS256 ' }), claims)),
      fixed: bearer(forge.raw(forge.header(), claims)),
    }
  },
  'HS384 signed with the genuine secret (the algorithm is pinned)': async ({ forge }) => ({
    attack: bearer(await forge.sign({ header: { alg: 'HS384' } })),
    fixed: bearer(await forge.sign()),
  }),
  'HS512 signed with the genuine secret (the algorithm is pinned)': async ({ forge }) => ({
    attack: bearer(await forge.sign({ header: { alg: 'HS512' } })),
    fixed: bearer(await forge.sign()),
  }),
  'no exp claim': async ({ forge }) => ({
    attack: bearer(await forge.sign({ claims: { exp: undefined } })),
    fixed: bearer(await forge.sign()),
  }),
  'exp as a string': async ({ forge, clock }) => {
    const exp = Math.floor(clock.now() / 1000) + 600
    return {
      attack: bearer(await forge.sign({ claims: { exp: String(exp) } })),
      fixed: bearer(await forge.sign({ claims: { exp } })),
    }
  },
  ...Object.fromEntries(
    ['iss', 'aud', 'sub', 'iat', 'jti', 'sid', 'scope'].map((claim) => [
      `no ${claim} claim`,
      async ({ forge }: World) => ({
        attack: bearer(await forge.sign({ claims: { [claim]: undefined } })),
        fixed: bearer(await forge.sign()),
      }),
    ]),
  ),
  'a wrong iss': async ({ forge }) => ({
    attack: bearer(await forge.sign({ claims: { iss: 'https://issuer.attacker.example' } })),
    fixed: bearer(await forge.sign()),
  }),
  'an empty iss': async ({ forge }) => ({
    attack: bearer(await forge.sign({ claims: { iss: '' } })),
    fixed: bearer(await forge.sign()),
  }),
  'a wrong aud': async ({ forge }) => ({
    attack: bearer(await forge.sign({ claims: { aud: 'another-service' } })),
    fixed: bearer(await forge.sign()),
  }),
  'an aud list without this service': async ({ forge }) => ({
    attack: bearer(await forge.sign({ claims: { aud: ['another-service', 'a-third'] } })),
    fixed: bearer(
      await forge.sign({ claims: { aud: ['another-service', 'beneficiary-service'] } }),
    ),
  }),
  'typ JWT instead of at+jwt': async ({ forge }) => ({
    attack: bearer(await forge.sign({ header: { typ: 'JWT' } })),
    fixed: bearer(await forge.sign()),
  }),
  'no typ': async ({ forge }) => ({
    attack: bearer(await forge.sign({ header: { typ: undefined } })),
    fixed: bearer(await forge.sign()),
  }),
  'typ application/jwt': async ({ forge }) => ({
    attack: bearer(await forge.sign({ header: { typ: 'application/jwt' } })),
    fixed: bearer(await forge.sign({ header: { typ: 'application/at+jwt' } })),
  }),
  'an nbf one minute in the future': async ({ forge, clock }) => {
    const now = Math.floor(clock.now() / 1000)
    return {
      attack: bearer(await forge.sign({ claims: { nbf: now + 60 } })),
      fixed: bearer(await forge.sign({ claims: { nbf: now } })),
    }
  },
  'an iat one minute in the future': async ({ forge, clock }) => {
    const now = Math.floor(clock.now() / 1000)
    return {
      attack: bearer(await forge.sign({ claims: { iat: now + 60, exp: now + 600 } })),
      fixed: bearer(await forge.sign({ claims: { iat: now, exp: now + 600 } })),
    }
  },
  'an iat a day in the future': async ({ forge, clock }) => {
    const now = Math.floor(clock.now() / 1000)
    return {
      attack: bearer(await forge.sign({ claims: { iat: now + 86_400, exp: now + 90_000 } })),
      fixed: bearer(await forge.sign({ claims: { iat: now, exp: now + 90_000 } })),
    }
  },
  'scope as an array instead of a string': async ({ forge }) => ({
    attack: bearer(await forge.sign({ claims: { scope: ['read', 'write'] } })),
    fixed: bearer(await forge.sign({ claims: { scope: 'read write' } })),
  }),
  ...Object.fromEntries(
    (
      [
        ['an unknown kid', 'k-unknown'],
        ['a path-traversal kid', '../../../../../../etc/passwd'],
        ['a Windows path-traversal kid', '..\\..\\..\\keys\\signing.key'],
        ['a kid with a NUL byte', `${KEY.kid}\u0000`],
        ['an SQL-injection kid', "' OR '1'='1' --"],
        ['a kid that drops a table', "k'; DROP TABLE clients; --"],
        ['a kid naming a file URL', 'file:///etc/shadow'],
        ['a kid of 4,000 characters', 'k'.repeat(4_000)],
        ['a kid named __proto__', '__proto__'],
        ['a kid named constructor', 'constructor'],
        ['a numeric kid', 42],
        ['a null kid', null],
        ['a boolean kid', true],
        ['an object kid', { kid: KEY.kid }],
        ['an array kid holding the genuine kid', [KEY.kid]],
        ['no kid', undefined],
      ] as const
    ).map(([name, kid]) => [
      name,
      async ({ forge }: World) => {
        const claims = forge.claims()
        return {
          attack: bearer(forge.raw(forge.header({ kid }), claims)),
          fixed: bearer(forge.raw(forge.header(), claims)),
        }
      },
    ]),
  ),
  'a jwk header carrying the attacker HMAC key it is signed with': async ({ forge }) => {
    const secret = randomBytes(32)
    const jwk = { kty: 'oct', k: base64url.encode(secret) }
    return {
      attack: bearer(await forge.sign({ header: { jwk }, key: secret })),
      fixed: bearer(await forge.sign({ header: { jwk } })),
    }
  },
  'a jwk header carrying the attacker RSA public key, RS256': async ({ forge }) => {
    const { privateKey, publicKey } = await attackerKeys('RS256')
    const jwk = await exportJWK(publicKey)
    return {
      attack: bearer(await forge.sign({ header: { alg: 'RS256', jwk }, key: privateKey })),
      fixed: bearer(await forge.sign({ header: { jwk } })),
    }
  },
  'a jku header pointing at an attacker key set': async ({ forge }) => {
    const header = { jku: 'http://127.0.0.1:9/.well-known/jwks.json', kid: 'attacker' }
    return {
      attack: bearer(await forge.sign({ header, key: randomBytes(32) })),
      fixed: bearer(await forge.sign({ header: { jku: header.jku } })),
    }
  },
  'an x5u header pointing at an attacker certificate': async ({ forge }) => {
    const { privateKey } = await attackerKeys('RS256')
    const x5u = 'http://127.0.0.1:9/attacker.pem'
    return {
      attack: bearer(await forge.sign({ header: { alg: 'RS256', x5u }, key: privateKey })),
      fixed: bearer(await forge.sign({ header: { x5u } })),
    }
  },
  'an x5c header with a made-up certificate chain': async ({ forge }) => {
    const { privateKey } = await attackerKeys('RS256')
    const x5c = [base64url.encode(randomBytes(300)).replaceAll('-', '+').replaceAll('_', '/')]
    return {
      attack: bearer(await forge.sign({ header: { alg: 'RS256', x5c }, key: privateKey })),
      fixed: bearer(await forge.sign({ header: { x5c } })),
    }
  },
  'a crit header naming an unknown extension, genuinely signed': async ({ forge }) => ({
    attack: bearer(
      await forge.sign({
        header: { crit: ['x-sentinel'], 'x-sentinel': true },
        crit: { 'x-sentinel': true },
      }),
    ),
    fixed: bearer(await forge.sign({ header: { 'x-sentinel': true } })),
  }),
  'a crit header naming a registered claim, genuinely signed': async ({ forge }) => {
    const claims = forge.claims()
    return {
      attack: bearer(forge.raw(forge.header({ crit: ['exp'] }), claims)),
      fixed: bearer(forge.raw(forge.header(), claims)),
    }
  },
  'an unencoded payload (b64: false), genuinely signed': async ({ forge }) => ({
    attack: bearer(await forge.unencoded()),
    fixed: bearer(await forge.sign()),
  }),
  'a genuine token with a trailing = after its signature (non-canonical base64url)': async ({
    forge,
  }) => {
    const token = await forge.sign()
    return { attack: bearer(`${token}=`), fixed: bearer(token) }
  },
  'a genuine signature whose last character sets its unused bits (the same bytes)': async ({
    forge,
  }) => {
    const token = await forge.sign()
    return { attack: bearer(withUnusedBitsSet(token)), fixed: bearer(token) }
  },
  'a header and payload padded with = and signed over as padded': async ({ forge }) => {
    const claims = forge.claims()
    const padded = (value: unknown): string => {
      const text = base64url.encode(JSON.stringify(value))
      return text + '='.repeat((4 - (text.length % 4)) % 4 || 4)
    }
    const input = `${padded(forge.header())}.${padded(claims)}`
    const signature = createHmac('sha256', forge.secret).update(input).digest('base64url')
    return {
      attack: bearer(`${input}.${signature}`),
      fixed: bearer(forge.raw(forge.header(), claims)),
    }
  },
  'a genuine token spelled in standard base64 (+ and /) where base64url has - and _': async ({
    forge,
  }) => {
    let token = await forge.sign()
    while (!/[-_]/.test(token)) token = await forge.sign()
    return {
      attack: bearer(token.replaceAll('-', '+').replaceAll('_', '/')),
      fixed: bearer(token),
    }
  },
  'a genuine token with one more segment': async ({ forge }) => {
    const token = await forge.sign()
    return { attack: bearer(`${token}.${token.split('.')[2]!}`), fixed: bearer(token) }
  },
  'a genuine token in the query string (access_token) instead of the header': async ({ forge }) => {
    const token = await forge.sign()
    return { attack: { headers: {}, query: `access_token=${token}` }, fixed: bearer(token) }
  },
  ...Object.fromEntries(
    (
      [
        ['the Basic scheme', (t: string) => `Basic ${t}`],
        ['the Token scheme', (t: string) => `Token ${t}`],
        ['the JWT scheme', (t: string) => `JWT ${t}`],
        ['no scheme', (t: string) => t],
        ['no space after Bearer', (t: string) => `Bearer${t}`],
        ['a colon after Bearer', (t: string) => `Bearer:${t}`],
        ['a tab after Bearer', (t: string) => `Bearer\t${t}`],
        ['a quoted token', (t: string) => `Bearer "${t}"`],
        ['a space inside the token', (t: string) => `Bearer ${t.replace('.', '. ')}`],
        ['two tokens separated by a space', (t: string) => `Bearer ${t} ${t}`],
        ['two Bearer credentials separated by a comma', (t: string) => `Bearer ${t}, Bearer ${t}`],
        ['two tokens separated by a comma', (t: string) => `Bearer ${t},${t}`],
        ['Bearer alone', () => 'Bearer'],
        ['Bearer and spaces only', () => 'Bearer    '],
        ['8 KiB of junk after a genuine token', (t: string) => `Bearer ${t}${'A'.repeat(8_192)}`],
      ] as const
    ).map(([name, header]) => [
      `an Authorization header with ${name}`,
      async ({ forge }: World) => {
        const token = await forge.sign()
        return { attack: { headers: { authorization: header(token) } }, fixed: bearer(token) }
      },
    ]),
  ),
}

/** How a surface answers a request presenting `presented` to GET /v3/beneficiaries. */
type Surface = (presented: Presented) => Promise<{
  /** The HTTP status, or the socket error when the transport hung up without an answer. */
  status: number | string
  error: unknown
  challenge: unknown
}>

/** A way into the service, and what differs between the ways. */
interface SurfaceOptions {
  readonly open: () => Promise<{ world: World; surface: Surface; close: () => Promise<void> }>
  /** The signature bits to flip: every one in-process, a sample where each costs a connection. */
  readonly bits: readonly number[]
  /** The size of the huge bearer token, and the answers allowed for it. */
  readonly hugeBytes: number
  readonly hugeAnswers: readonly (number | string)[]
  /**
   * The transport's limit on a request's head (target, names, values), past which it answers
   * 431 before the token is looked at; none in-process.
   */
  readonly headLimit?: number
}

/** The bytes of target, header names and values a request presents, as the limit counts them. */
function headBytes({ headers, query }: Presented): number {
  const target = '/v3/beneficiaries'.length + (query === undefined ? 0 : query.length + 1)
  return Object.entries(headers).reduce(
    (sum, [name, value]) => sum + name.length + value.length,
    target,
  )
}

/** The checks every attack goes through, on one surface. */
function attackSuite(name: string, options: SurfaceOptions): void {
  describe(name, () => {
    let world: World
    let surface: Surface
    let close: () => Promise<void> = async () => {}
    before(async () => {
      ;({ world, surface, close } = await options.open())
    })
    after(() => close())

    for (const [attackName, build] of Object.entries(ATTACKS)) {
      it(`D3, D6: ${attackName} is 401 invalid_token without touching storage; put right, it is accepted`, async () => {
        const { attack, fixed } = await build(world)
        world.calls.reset()
        const refused = await surface(attack)
        // The client's own headers (Host, User-Agent, …) come on top of the attack's.
        if (options.headLimit !== undefined && headBytes(attack) > options.headLimit - 512) {
          assert.ok([401, 431].includes(Number(refused.status)), String(refused.status))
        } else {
          assert.equal(refused.status, 401)
        }
        if (refused.status === 431) {
          assert.equal(refused.error, 'request_header_fields_too_large')
        } else {
          assert.equal(refused.error, 'invalid_token')
          assert.match(String(refused.challenge), /^Bearer error="invalid_token"/)
        }
        assert.deepEqual(world.calls.snapshot(), {}, 'no storage call at all')
        const accepted = await surface(fixed)
        assert.equal(accepted.status, 200, 'the same request put right is accepted')
        assert.equal(world.calls.count('beneficiaries.list'), 1)
      })
    }

    it('D3, D6: a token with one bit of its signature flipped is 401 invalid_token without touching storage', async () => {
      const token = await world.forge.sign()
      world.calls.reset()
      for (const bit of options.bits) {
        const refused = await surface(bearer(flipSignatureBit(token, bit)))
        assert.equal(refused.status, 401, `bit ${bit}`)
        assert.equal(refused.error, 'invalid_token', `bit ${bit}`)
      }
      assert.deepEqual(world.calls.snapshot(), {})
      assert.equal((await surface(bearer(token))).status, 200)
    })

    it("D3, D6: a token signed with the genuine key whose sid is another client's session is 401 invalid_token: sid is bound to sub", async () => {
      const other = await world.service.clients.create({ name: 'Other', scopes: ['read'] })
      const { value } = await world.service.login(
        { ip: '192.0.2.2' },
        { client_id: other.client_id, client_secret: other.client_secret },
      )
      const otherSid = decodeJwt(value.access_token)['sid']
      const theirs = await surface(bearer(await world.forge.sign({ claims: { sid: otherSid } })))
      assert.equal(theirs.status, 401)
      assert.equal(theirs.error, 'invalid_token')
      const mine = await surface(
        bearer(await world.forge.sign({ claims: { sub: other.client_id } })),
      )
      assert.equal(mine.status, 401)
      assert.equal(mine.error, 'invalid_token')
      const both = await world.forge.sign({ claims: { sub: other.client_id, sid: otherSid } })
      assert.equal((await surface(bearer(both))).status, 200, 'the pair put right is accepted')
      assert.equal((await surface(bearer(await world.forge.sign()))).status, 200)
    })

    it('D6: an expired token signed with a foreign key is invalid_token, not token_expired: the signature is checked first', async () => {
      const now = Math.floor(world.clock.now() / 1000)
      const claims = { iat: now - 7_200, exp: now - 3_600 }
      const forged = await world.forge.sign({ claims, key: randomBytes(32) })
      world.calls.reset()
      const refused = await surface(bearer(forged))
      assert.equal(refused.status, 401)
      assert.equal(refused.error, 'invalid_token')
      const genuine = await surface(bearer(await world.forge.sign({ claims })))
      assert.equal(genuine.status, 401)
      assert.equal(genuine.error, 'token_expired')
      assert.deepEqual(world.calls.snapshot(), {})
    })

    it(`D6: a bearer token of ${options.hugeBytes / 1024} KiB is refused without touching storage`, async () => {
      world.calls.reset()
      const refused = await surface({
        headers: { authorization: `Bearer ${'A'.repeat(options.hugeBytes)}` },
      })
      assert.ok(options.hugeAnswers.includes(refused.status), String(refused.status))
      if (refused.status === 401) assert.equal(refused.error, 'invalid_token')
      assert.deepEqual(world.calls.snapshot(), {})
    })
  })
}

const LONG = process.env['TEST_LONG'] === '1'
const EVERY_BIT = Array.from({ length: 256 }, (_, bit) => bit)

attackSuite('the handler on memory storage', {
  bits: EVERY_BIT,
  hugeBytes: 1 << 20,
  hugeAnswers: [401],
  open: async () => {
    const world = await createWorld(new MemoryStorage())
    const handler = createHandler(world.service)
    const surface: Surface = async ({ headers, query }) => {
      const answer = await send(handler, 'GET', '/v3/beneficiaries', {
        headers: { ...headers },
        ...(query !== undefined && { query }),
      })
      return {
        status: answer.status,
        error: answer.json?.['error'],
        challenge: answer.headers['www-authenticate'],
      }
    }
    return { world, surface, close: async () => {} }
  },
})

for (const transport of TRANSPORTS_HERE) {
  attackSuite(`a real ${transport} server on SQLite`, {
    bits: LONG ? EVERY_BIT : EVERY_BIT.filter((bit) => bit % 17 === 0 || bit === 255),
    hugeBytes: 64 * 1024,
    // A transport may refuse a header over its limit itself (431), or hang up.
    hugeAnswers: [401, 431, 'ECONNRESET', 'EPIPE'],
    headLimit: MAX_HEADER_BYTES,
    open: async () => {
      const directory = mkdtempSync(join(tmpdir(), `security-jwt-${transport}-`))
      const storage = await openSqliteStorage({ path: join(directory, 'attacked.sqlite') })
      const world = await createWorld(storage)
      const server = await startServer({ service: world.service, transport, port: 0 })
      const surface: Surface = async ({ headers, query }) => {
        const path = `/v3/beneficiaries${query === undefined ? '' : `?${query}`}`
        try {
          const answer = await http(server.url, 'GET', path, { headers })
          return {
            status: answer.status,
            error: answer.json?.['error'],
            challenge: answer.headers['www-authenticate'],
          }
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code ?? String(error)
          return { status: code, error: undefined, challenge: undefined }
        }
      }
      const close = async (): Promise<void> => {
        await server.close(0)
        await storage.close()
        rmSync(directory, { recursive: true, force: true })
      }
      return { world, surface, close }
    },
  })
}
