import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import Database from 'better-sqlite3'
import { decodeJwt } from 'jose'
import { runCli } from '../../server/cli/run-cli.js'
import { http, runCliChild, ServeChild, type HttpAnswer } from './security-fixtures.js'
import { TRANSPORTS_HERE } from '../support/transports.js'

// Two `beneficiaries serve` processes on one SQLite file, as an operator scaling out would run
// them: a logout or a revocation made through one (or by the CLI, a third process) must be
// honoured by every process at once, whatever each remembers of tokens it has verified before.

interface Client {
  readonly client_id: string
  readonly client_secret: string
}

let directory: string
let db: string
const servers: ServeChild[] = []
let first: string
let second: string
const clients = new Map<string, Client>()

before(async () => {
  directory = mkdtempSync(join(tmpdir(), 'security-sessions-'))
  db = join(directory, 'sessions.sqlite')
  for (const name of ['logout', 'revoked', 'bystander', 'owner', 'intruder']) {
    const out: string[] = []
    const status = await runCli(
      ['clients', 'create', '--db', db, '--name', name, '--scopes', 'read write'],
      { env: {}, out: (text) => void out.push(text), err: () => {}, signals: { once: () => {} } },
    )
    assert.equal(status, 0)
    clients.set(name, JSON.parse(out.join('')) as Client)
  }
  // One after the other: the first generates the signing key, the second reads it (D3).
  const env = { RATE_LIMIT_AUTH: '1000' }
  // One on each transport that runs here.
  servers.push(new ServeChild(db, { ...env, TRANSPORT: TRANSPORTS_HERE[0]! }))
  first = await servers[0]!.url()
  servers.push(new ServeChild(db, { ...env, TRANSPORT: TRANSPORTS_HERE.at(-1)! }))
  second = await servers[1]!.url()
})

after(async () => {
  for (const server of servers) await server.stop()
  rmSync(directory, { recursive: true, force: true })
})

function client(name: string): Client {
  return clients.get(name)!
}

async function login(origin: string, who: Client): Promise<{ access: string; refresh: string }> {
  const answer = await http(origin, 'POST', '/v3/auth/login', {
    body: { client_id: who.client_id, client_secret: who.client_secret },
  })
  assert.equal(answer.status, 200, answer.body)
  return {
    access: String(answer.json?.['access_token']),
    refresh: String(answer.json?.['refresh_token']),
  }
}

function list(origin: string, token: string): Promise<HttpAnswer> {
  return http(origin, 'GET', '/v3/beneficiaries', { token })
}

function refresh(origin: string, body: Record<string, string>): Promise<HttpAnswer> {
  return http(origin, 'POST', '/v3/auth/refresh', { body })
}

/** Asserts a 401 with `error`, and that no token came back with it. */
function assertRefused(answer: HttpAnswer, error: string, what: string): void {
  assert.equal(answer.status, 401, `${what}: ${answer.body}`)
  assert.equal(answer.json?.['error'], error, what)
  assert.equal(answer.json?.['access_token'], undefined, what)
}

/** Uses `token` a few times on both servers, so that each has verified and remembered it. */
async function warm(token: string): Promise<void> {
  for (let i = 0; i < 3; i++) {
    for (const origin of [first, second]) assert.equal((await list(origin, token)).status, 200)
  }
}

describe('logout and revocation across server processes (D1, D4, D5)', () => {
  it('D5: after a logout through one process, the access token, the refresh token and tokens refreshed in the session are refused at once by both; another session lives on', async () => {
    const who = client('logout')
    const session = await login(first, who)
    const renewed = await refresh(second, { refresh_token: session.refresh })
    assert.equal(renewed.status, 200)
    const refreshed = String(renewed.json?.['access_token'])
    const other = await login(second, who)
    await warm(session.access)
    await warm(refreshed)
    await warm(other.access)

    const out = await http(first, 'POST', '/v3/auth/logout', { token: session.access })
    assert.equal(out.status, 204)

    for (const origin of [first, second]) {
      assertRefused(
        await list(origin, session.access),
        'invalid_token',
        `access token at ${origin}`,
      )
      assertRefused(await list(origin, refreshed), 'invalid_token', `refreshed token at ${origin}`)
      assertRefused(
        await refresh(origin, { refresh_token: session.refresh }),
        'invalid_token',
        `refresh token at ${origin}`,
      )
      assertRefused(
        await refresh(origin, {
          refresh_token: session.refresh,
          client_id: who.client_id,
          client_secret: who.client_secret,
        }),
        'invalid_token',
        `refresh token with the right credentials at ${origin}`,
      )
      assert.equal((await list(origin, other.access)).status, 200, 'the other session lives')
    }
    const again = await http(second, 'POST', '/v3/auth/logout', { token: session.access })
    assertRefused(again, 'invalid_token', 'a second logout')
  })

  it("D1: a client revoked with the CLI (another process) can no longer use its live tokens on any server, refresh or log in; other clients' tokens still work", async () => {
    const who = client('revoked')
    const session = await login(first, who)
    const bystander = await login(second, client('bystander'))
    await warm(session.access)
    await warm(bystander.access)

    const revoked = await runCliChild(['clients', 'revoke', who.client_id, '--db', db])
    assert.equal(revoked.status, 0, revoked.err)

    for (const origin of [first, second]) {
      assertRefused(
        await list(origin, session.access),
        'invalid_token',
        `access token at ${origin}`,
      )
      assertRefused(
        await refresh(origin, { refresh_token: session.refresh }),
        'invalid_token',
        `refresh token at ${origin}`,
      )
      assertRefused(
        await http(origin, 'POST', '/v3/auth/login', {
          body: { client_id: who.client_id, client_secret: who.client_secret },
        }),
        'invalid_credentials',
        `login at ${origin}`,
      )
      assert.equal((await list(origin, bystander.access)).status, 200, 'the bystander still works')
    }
  })

  it("D4: client A's refresh token presented with client B's credentials is refused, and A's session is neither revoked nor rotated", async () => {
    const owner = client('owner')
    const intruder = client('intruder')
    const session = await login(first, owner)
    const sid = decodeJwt(session.access)['sid']
    const sessionsBefore = sessionRows()

    const attempts: [string, Record<string, string>][] = [
      [
        "B's id and secret",
        { client_id: intruder.client_id, client_secret: intruder.client_secret },
      ],
      [
        "A's id with B's secret",
        { client_id: owner.client_id, client_secret: intruder.client_secret },
      ],
      [
        "B's id with A's secret",
        { client_id: intruder.client_id, client_secret: owner.client_secret },
      ],
    ]
    for (const origin of [first, second]) {
      for (const [what, credentials] of attempts) {
        const answer = await refresh(origin, { refresh_token: session.refresh, ...credentials })
        assertRefused(answer, 'invalid_credentials', `${what} at ${origin}`)
        assert.equal(answer.headers['www-authenticate'], undefined, what)
      }
    }
    // Nothing was written: no session for B, no revocation, no new refresh token for A.
    assert.deepEqual(sessionRows(), sessionsBefore)

    for (const origin of [first, second]) {
      assert.equal((await list(origin, session.access)).status, 200)
      for (const body of [
        { refresh_token: session.refresh },
        { refresh_token: session.refresh, ...owner },
      ]) {
        const renewed = await refresh(origin, body)
        assert.equal(renewed.status, 200)
        assert.equal(renewed.json?.['refresh_token'], undefined, 'refresh tokens are not rotated')
        const claims = decodeJwt(String(renewed.json?.['access_token']))
        assert.equal(claims.sub, owner.client_id)
        assert.equal(claims['sid'], sid)
      }
    }
    // B itself is untouched: it still logs in.
    await login(second, intruder)
  })
})

/** Every login session as stored, read from the file by a third connection. */
function sessionRows(): unknown[] {
  const reader = new Database(db, { readonly: true })
  try {
    return reader
      .prepare('SELECT id, client_id, refresh_token_hash, revoked_at FROM sessions ORDER BY id')
      .all()
  } finally {
    reader.close()
  }
}
