import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { letters, Random } from '../faults/fault-support.js'
import {
  createTestDatabase,
  postgresSkip,
  type TestDatabase,
} from '../support/postgres-database.js'
import { PrivateRedis, privateRedisSkip } from '../support/private-services.js'
import { testKeyPrefix } from '../support/redis.js'
import { freshIp, InstanceGroup, operator, provision } from './instance-group.js'
import { MixedLoad } from './mixed-load.js'
import {
  assertInvalidToken,
  assertLimited,
  assertOutageLoggedOnce,
  assertWriteLimitShared,
} from './multi-assertions.js'

/**
 * D30, D31: three `serve` processes on one PostgreSQL database and one Redis behave
 * as one service. Requests are spread round-robin, as a balancer would; each case uses clients
 * and client addresses of its own, so that no case waits for a limit window to pass.
 */

const LIMITS = { RATE_LIMIT_AUTH: '5', RATE_LIMIT_WRITE: '10', RATE_LIMIT_STANDARD: '100' }
/** Sessions (one client each) a mixed load may spend: more than a lane of it ever needs. */
const SESSIONS = 40

const random = new Random()
/** Starts the last names of this run's records: a word the search finds nothing else for. */
const TAG = `Multi${letters(random.between(0, 26 ** 6 - 1))}`

/** A valid create body; `n` makes its first name its own. */
function person(n: number, lastName = TAG): Record<string, string> {
  return { first_name: `Person${letters(n)}`, last_name: lastName, email: `p${n}@example.org` }
}

describe('three instances on one database and one Redis (D30, D31)', async () => {
  // A Redis of this file's own, since a case stops it: the machine's serves other files.
  const skip = (await postgresSkip()) || privateRedisSkip()
  const prefix = testKeyPrefix('multi')
  let redis: PrivateRedis | undefined
  let database: TestDatabase | undefined
  let group: InstanceGroup | undefined
  let url = ''
  const every = [0, 1, 2]
  const instances = (): InstanceGroup => group!

  before(async () => {
    if (skip) return
    redis = await PrivateRedis.create()
    database = await createTestDatabase('multi')
    url = database.url
    // The migrations run here, so the three start on a schema that is there and race only
    // for the signing key (D3).
    await operator(url, ['migrate'])
    group = await InstanceGroup.start(url, 3, {
      ...LIMITS,
      REDIS_URL: redis.url,
      REDIS_KEY_PREFIX: prefix,
      TRUST_PROXY: 'loopback',
      // Small pools: the PostgreSQL server is shared with every other suite.
      DATABASE_POOL_SIZE: '4',
      LOG_LEVEL: 'info',
    })
  })

  after(async () => {
    await group?.stop()
    await redis?.destroy()
    await database?.drop()
  })

  it(
    'counts the write limit across the three: the 11th write is a 429 wherever it lands',
    { skip },
    async () => {
      const g = instances()
      const [client] = await provision(url, 1)
      const session = await g.signIn(g.next(), client!)
      await assertWriteLimitShared(g, session, (n) => person(n), 'a fresh client')
      // Reads are another class: the client still reads on all three.
      for (const i of every) {
        assert.equal(
          (await g.send(i, 'GET', '/v3/beneficiaries?per_page=1', { session })).status,
          200,
        )
      }
    },
  )

  it(
    'counts the auth limit of 5 per client IP across the three, and X-Forwarded-For cannot dodge it',
    { skip },
    async () => {
      const g = instances()
      const [client] = await provision(url, 1)
      const ip = freshIp()
      for (let n = 0; n < 5; n++) {
        const i = g.next()
        const reply = await g.send(i, 'POST', '/v3/auth/login', { ip, body: client })
        assert.equal(reply.status, 200, `login ${n + 1} on instance ${i}: ${reply.body}`)
      }
      const refused = await Promise.all(
        every.map((i) => g.send(i, 'POST', '/v3/auth/login', { ip, body: client })),
      )
      refused.forEach((reply, i) => assertLimited(reply, 60, 5, `6th login on instance ${i}`))
      // A forged left-most entry changes nothing: the balancer's right-most one is the client.
      const forged = await g.send(g.next(), 'POST', '/v3/auth/login', {
        body: client,
        headers: { 'x-forwarded-for': `${freshIp()}, ${ip}` },
      })
      assertLimited(forged, 60, 5, 'a login with a forged X-Forwarded-For')
      // The limit is the address's, not the client's: from another address it logs in.
      await g.signIn(g.next(), client!)
    },
  )

  it(
    'honours a logout on A at once on B and C; the refresh token then fails on C (D5)',
    { skip },
    async () => {
      const g = instances()
      const [client] = await provision(url, 1)
      const session = await g.signIn(0, client!)
      // The instances found one signing key: a token from A works on B and C.
      for (const i of every) {
        assert.equal(
          (await g.send(i, 'GET', '/v3/beneficiaries?per_page=1', { session })).status,
          200,
        )
      }
      const out = await g.send(0, 'POST', '/v3/auth/logout', { session })
      assert.equal(out.status, 204, out.body)
      const refused = await Promise.all(
        [1, 2].map((i) => g.send(i, 'GET', '/v3/beneficiaries?per_page=1', { session })),
      )
      refused.forEach((reply, n) =>
        assertInvalidToken(reply, `instance ${n + 1} after the logout on A`),
      )
      const refreshed = await g.send(2, 'POST', '/v3/auth/refresh', {
        ip: session.ip,
        body: { refresh_token: session.refreshToken },
      })
      assertInvalidToken(refreshed, 'refresh on C')
    },
  )

  it('stops a client revoked with the CLI on all three at once (D1)', { skip }, async () => {
    const g = instances()
    const [client, bystander] = await provision(url, 2)
    const session = await g.signIn(1, client!)
    const other = await g.signIn(2, bystander!)
    for (const i of every) {
      assert.equal(
        (await g.send(i, 'GET', '/v3/beneficiaries?per_page=1', { session })).status,
        200,
      )
    }
    await operator(url, ['clients', 'revoke', client!.client_id])
    const refused = await Promise.all(
      every.map((i) => g.send(i, 'GET', '/v3/beneficiaries?per_page=1', { session })),
    )
    refused.forEach((reply, i) => assertInvalidToken(reply, `instance ${i} after the revocation`))
    const login = await g.send(g.next(), 'POST', '/v3/auth/login', { ip: freshIp(), body: client })
    assert.equal(login.status, 401, login.body)
    assert.equal(login.json!['error'], 'invalid_credentials')
    const refreshed = await g.send(g.next(), 'POST', '/v3/auth/refresh', {
      ip: freshIp(),
      body: { refresh_token: session.refreshToken },
    })
    assertInvalidToken(refreshed, 'refresh of the revoked client')
    // Only that client: another one still works everywhere.
    for (const i of every) {
      assert.equal(
        (await g.send(i, 'GET', '/v3/beneficiaries?per_page=1', { session: other })).status,
        200,
      )
    }
  })

  it(
    'reads on B a record created on A, and lists it on C with the right total_count',
    { skip },
    async () => {
      const g = instances()
      const [client] = await provision(url, 1)
      const session = await g.signIn(2, client!)
      const lastName = `${TAG}Read`
      const total = async (i: number, query: string): Promise<number> => {
        const reply = await g.send(i, 'GET', `/v3/beneficiaries?per_page=1${query}`, { session })
        assert.equal(reply.status, 200, reply.body)
        return (reply.json!['meta'] as Record<string, number>)['total_count']!
      }
      // Instance C counts (and may remember) the totals before A writes.
      const everything = await total(2, '')
      assert.equal(await total(2, `&search=${lastName}`), 0)
      const created: number[] = []
      for (let n = 0; n < 3; n++) {
        const reply = await g.send(0, 'POST', '/v3/beneficiaries', {
          session,
          body: person(n, lastName),
        })
        assert.equal(reply.status, 201, reply.body)
        created.push(Number(reply.json!['id']))
        const read = await g.send(1, 'GET', `/v3/beneficiaries/${created[n]}`, { session })
        assert.equal(read.status, 200, read.body)
        assert.equal(read.json!['first_name'], person(n).first_name)
        assert.equal(
          await total(2, `&search=${lastName}`),
          n + 1,
          `search total after create ${n + 1}`,
        )
        assert.equal(await total(2, ''), everything + n + 1, `total after create ${n + 1}`)
      }
      const listed = await g.send(2, 'GET', `/v3/beneficiaries?search=${lastName}`, { session })
      assert.deepEqual(
        (listed.json!['data'] as { id: number }[]).map((item) => item.id),
        created,
      )
      // A delete on B is gone from C's totals at once too.
      assert.equal(
        (await g.send(1, 'DELETE', `/v3/beneficiaries/${created[0]}`, { session })).status,
        204,
      )
      assert.equal(await total(2, `&search=${lastName}`), 2)
      assert.equal(
        (await g.send(2, 'GET', `/v3/beneficiaries/${created[0]}`, { session })).status,
        404,
      )
    },
  )

  it(
    'creates one record for ten concurrent creates with one Idempotency-Key over the three (D22)',
    { skip },
    async () => {
      const g = instances()
      const [client] = await provision(url, 1)
      const session = await g.signIn(0, client!)
      const lastName = `${TAG}Idem`
      const headers = { 'idempotency-key': `multi-${random.next()}` }
      const replies = await Promise.all(
        Array.from({ length: 10 }, (_, n) =>
          g.send(n % 3, 'POST', '/v3/beneficiaries', {
            session,
            body: person(0, lastName),
            headers,
          }),
        ),
      )
      for (const reply of replies) assert.equal(reply.status, 201, reply.body)
      const ids = new Set(replies.map((reply) => reply.json!['id']))
      assert.equal(ids.size, 1, `ids ${[...ids].join(', ')}`)
      const originals = replies.filter((reply) => reply.headers['idempotent-replayed'] !== 'true')
      assert.equal(originals.length, 1)
      const listed = await g.send(1, 'GET', `/v3/beneficiaries?search=${lastName}`, { session })
      assert.equal((listed.json!['meta'] as Record<string, number>)['total_count'], 1)
    },
  )

  it(
    'lets one of two concurrent PUTs with one ETag on two instances through: one 200, one 412 (D23)',
    { skip },
    async () => {
      const g = instances()
      const [client] = await provision(url, 1)
      const session = await g.signIn(0, client!)
      const made = await g.send(0, 'POST', '/v3/beneficiaries', {
        session,
        body: person(0, `${TAG}Etag`),
      })
      assert.equal(made.status, 201, made.body)
      const path = `/v3/beneficiaries/${String(made.json!['id'])}`
      const etag = (await g.send(2, 'GET', path, { session })).headers['etag']!
      const names = ['Alba', 'Bruna']
      const replies = await Promise.all(
        [0, 1].map((i) =>
          g.send(i, 'PUT', path, {
            session,
            body: { first_name: names[i] },
            headers: { 'if-match': etag },
          }),
        ),
      )
      const statuses = replies.map((reply) => reply.status).sort()
      assert.deepEqual(statuses, [200, 412], replies.map((reply) => reply.body).join('\n'))
      const winner = replies.findIndex((reply) => reply.status === 200)
      assert.equal(replies[1 - winner]!.json!['error'], 'precondition_failed')
      const read = await g.send(2, 'GET', path, { session })
      assert.equal(read.json!['first_name'], names[winner])
      assert.equal(read.headers['etag'], replies[winner]!.headers['etag'])
      assert.notEqual(read.headers['etag'], etag)
    },
  )

  it(
    'keeps serving on the other two when one is killed under mixed load, losing no acknowledged write',
    { skip },
    async (t) => {
      const g = instances()
      t.diagnostic(`seed ${random.seed}`)
      const sessions = await g.signInMany(SESSIONS + 2)
      const load = new MixedLoad(g, sessions.slice(0, SESSIONS), random, `${TAG}Kill`)
      const victim = random.between(0, 2)
      let answeredAtKill = 0
      load.start(4)
      try {
        try {
          await delay(random.between(200, 500))
          await g.servers[victim]!.kill('SIGKILL')
          answeredAtKill = load.answered
          await delay(600)
        } finally {
          await load.stop()
        }
        t.diagnostic(
          `${load.answered} answers (${load.summary}), ${load.unanswered.length} unanswered`,
        )
        assert.equal(load.starvedLanes, 0, 'a lane spent every session before the end')
        assert.ok(
          load.answered - answeredAtKill >= 20,
          `the survivors answered ${load.answered - answeredAtKill} after the kill`,
        )
        assert.deepEqual(load.unexpected, [])
        for (const lost of load.unanswered)
          assert.equal(lost.instance, victim, 'only the killed instance left a request unanswered')
        for (const i of g.running) await load.verify(i, sessions[SESSIONS]!)
        await g.restart(victim)
        await load.verify(victim, sessions[SESSIONS + 1]!)
      } finally {
        // The next case needs three again, whatever happened here.
        if (!g.servers[victim]!.running) await g.restart(victim)
      }
    },
  )

  it(
    'keeps answering while Redis is stopped and started under load: no 500, degraded on /readyz, logged once each way, shared limits again (D31)',
    { skip },
    async (t) => {
      const g = instances()
      const sessions = await g.signInMany(SESSIONS + 2)
      const [revoked, verifier] = [sessions[SESSIONS]!, sessions[SESSIONS + 1]!]
      assert.equal((await g.send(0, 'POST', '/v3/auth/logout', { session: revoked })).status, 204)
      const load = new MixedLoad(g, sessions.slice(0, SESSIONS), random, `${TAG}Outage`)
      load.start(3)
      let answeredInOutage: number
      try {
        await delay(200)
        await redis!.stop()
        const answeredAtStop = load.answered
        await delay(800)
        // Still in the balancer's rotation (200), saying what is degraded.
        for (const i of every) {
          const ready = await g.send(i, 'GET', '/readyz')
          assert.equal(ready.status, 200, ready.body)
          assert.deepEqual(ready.json, { status: 'degraded', degraded: ['rate_limits'] })
        }
        answeredInOutage = load.answered - answeredAtStop
        await redis!.start()
        // Shared again by themselves: no restart, no request of ours needed.
        await g.allReady(10_000)
        await delay(300)
      } finally {
        await load.stop()
      }
      t.diagnostic(`${load.answered} answers (${load.summary}); ${answeredInOutage} in the outage`)
      assert.equal(load.starvedLanes, 0, 'a lane spent every session before the end')
      assert.ok(answeredInOutage >= 10, `${answeredInOutage} answers while Redis was down`)
      assert.deepEqual(load.unexpected, [], 'every request answered as in normal times')
      assert.deepEqual(load.unanswered, [])
      for (const i of every) await load.verify(i, verifier)
      g.servers.forEach((server, i) => assertOutageLoggedOnce(server, `instance ${i}`))
      // Redis came back empty: the logout, kept in PostgreSQL, still holds everywhere.
      const stillRevoked = await Promise.all(
        every.map((i) => g.send(i, 'GET', '/v3/beneficiaries?per_page=1', { session: revoked })),
      )
      stillRevoked.forEach((reply, i) => assertInvalidToken(reply, `revoked token on ${i}`))
      // Shared again: a new client's eleventh write is refused wherever it lands.
      const [client] = await provision(url, 1)
      const session = await g.signIn(g.next(), client!)
      await assertWriteLimitShared(g, session, (n) => person(n, `${TAG}After`), 'after the outage')
    },
  )

  it(
    'records one access-log entry per instance that answered a read, in one log (D35)',
    { skip },
    async () => {
      const g = instances()
      const [client] = await provision(url, 1)
      const session = await g.signIn(g.next(), client!)
      const created = await g.send(g.next(), 'POST', '/v3/beneficiaries', {
        session,
        body: person(90_001, `${TAG}Read`),
      })
      assert.equal(created.status, 201, created.body)
      const id = Number(created.json!['id'])
      const requestIds = every.map((i) => `${TAG}-read-on-${i}`)
      for (const i of every) {
        const read = await g.send(i, 'GET', `/v3/beneficiaries/${id}`, {
          session,
          headers: { 'x-request-id': requestIds[i]!, 'x-purpose': 'multi-instance' },
        })
        assert.equal(read.status, 200, read.body)
      }
      const auditor = JSON.parse(
        await operator(url, ['clients', 'create', '--name', 'dpo', '--scopes', 'read audit']),
      ) as { client_id: string; client_secret: string }
      const audit = await g.signIn(g.next(), auditor)
      // Each instance writes its own queue within a second (docs/access-log.md): poll so long.
      let logged: string[] = []
      for (const deadline = performance.now() + 5000; performance.now() < deadline;) {
        const log = await g.send(g.next(), 'GET', `/v3/beneficiaries/${id}/access-log`, {
          session: audit,
        })
        assert.equal(log.status, 200, log.body)
        logged = (log.json!['data'] as { request_id: string }[]).map((entry) => entry.request_id)
        if (logged.length >= 3) break
        await delay(100)
      }
      assert.deepEqual(logged.sort(), [...requestIds].sort())
    },
  )
})
