import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import {
  call,
  checkIntegrity,
  createClient,
  LONG,
  letters,
  login,
  Random,
  versionOf,
  type Client,
  type Reply,
} from './fault-support.js'
import { ServeChild } from './serve-child.js'
import {
  createTestDatabase,
  postgresSkip,
  type TestDatabase,
} from '../support/postgres-database.js'
import { TRANSPORTS_HERE } from '../support/transports.js'

const ROUNDS = LONG ? 200 : 20
const PG_ROUNDS = LONG ? 100 : 8
/** Concurrent writers; each sends one request at a time, so one at most is in flight per record. */
const LANES = 6
/** The kill comes this many milliseconds after the writes start (uniformly at random). */
const KILL_AFTER_MS = [40, 450] as const
const STATUSES = ['pending', 'active', 'inactive'] as const

type Json = Record<string, unknown>

/** What the harness knows of one beneficiary. */
interface Tracked {
  readonly id: number
  readonly lane: number
  /** The version of the last acknowledged write. */
  version: number
  /** The body of the last acknowledged response (create shape or detail). */
  acknowledged: Json
  /** The fields set by a write that was sent and never answered, if any. */
  inFlight: Json | undefined
}

/** Everything acknowledged so far, and what was in flight when the server died. */
class Ledger {
  readonly records = new Map<number, Tracked>()
  readonly lanes: number[][] = Array.from({ length: LANES }, () => [])
  /** A create sent and never answered, per lane: it may or may not have been committed. */
  readonly unansweredCreates: (Json | undefined)[] = new Array(LANES).fill(undefined)
  readonly touched = new Set<number>()
  acknowledged = 0
  inFlightAtKill = 0
  adoptedAfterKill = 0
  #names = 0

  nextName(): number {
    return this.#names++
  }

  add(id: number, lane: number, version: number, body: Json): Tracked {
    const record: Tracked = { id, lane, version, acknowledged: body, inFlight: undefined }
    this.records.set(id, record)
    this.lanes[lane]!.push(id)
    this.touched.add(id)
    return record
  }
}

/**
 * One writer: creates beneficiaries, updates them (If-Match on the acknowledged version) and
 * changes their status, one request at a time, until the connection fails. A non-2xx answer is
 * a failure of the test: nothing but the kill should stop a write.
 */
async function writer(
  base: string,
  token: string,
  ledger: Ledger,
  lane: number,
  random: Random,
  round: number,
): Promise<void> {
  const mine = ledger.lanes[lane]!
  for (;;) {
    const choice = random.next()
    if (mine.length < 3 || choice < 0.3) {
      const n = ledger.nextName()
      const fields = {
        first_name: `Crash${letters(n)}`,
        last_name: `Lane${letters(lane)}`,
        email: `crash${n}@example.org`,
      }
      ledger.unansweredCreates[lane] = fields
      let reply: Reply
      try {
        reply = await call(base, 'POST', '/v3/beneficiaries', { token, body: fields })
      } catch {
        return
      }
      assert.equal(reply.status, 201, reply.body)
      ledger.unansweredCreates[lane] = undefined
      ledger.add(Number(reply.json!['id']), lane, versionOf(reply), reply.json!)
    } else {
      const record = ledger.records.get(random.pick(mine))!
      ledger.touched.add(record.id)
      let method: string
      let path = `/v3/beneficiaries/${record.id}`
      let body: Json
      let sets: Json
      if (choice < 0.75) {
        const n = ledger.nextName()
        method = 'PUT'
        body = {
          first_name: `Crash${letters(n)}`,
          metadata: { round: String(round), write: String(n) },
        }
        sets = body
      } else {
        const status = record.acknowledged['status'] === 'active' ? 'inactive' : 'active'
        method = 'POST'
        path += '/status'
        body = { status, reason: `round ${round}` }
        sets = { status }
      }
      record.inFlight = sets
      let reply: Reply
      try {
        reply = await call(base, method, path, {
          token,
          body,
          headers: { 'if-match': `"v${record.version}"` },
        })
      } catch {
        return
      }
      assert.equal(reply.status, 200, reply.body)
      record.version = versionOf(reply)
      record.acknowledged = reply.json!
      record.inFlight = undefined
    }
    ledger.acknowledged++
  }
}

/**
 * After a restart: every record touched in the round holds either its acknowledged version and
 * content, or exactly one version more with the fields of the write that was in flight (which
 * the ledger then adopts); its history has one entry per version; a create that was never
 * answered is there once with what was sent, or not at all; and the totals (kept in counter
 * tables) agree with the ledger, per status too.
 */
async function verify(base: string, token: string, ledger: Ledger, context: string): Promise<void> {
  for (const id of ledger.touched) {
    const record = ledger.records.get(id)!
    const reply = await call(base, 'GET', `/v3/beneficiaries/${id}`, { token })
    assert.equal(reply.status, 200, `${context}: acknowledged #${id} is lost`)
    const version = versionOf(reply)
    const stored = reply.json!
    if (version === record.version) {
      for (const [field, value] of Object.entries(record.acknowledged)) {
        assert.deepEqual(stored[field], value, `${context}: #${id} v${version} ${field}`)
      }
    } else {
      assert.equal(
        version,
        record.version + 1,
        `${context}: #${id} acknowledged v${record.version}, stored v${version}`,
      )
      assert.ok(
        record.inFlight !== undefined,
        `${context}: #${id} is v${version} with no write in flight`,
      )
      for (const [field, value] of Object.entries(record.inFlight)) {
        assert.deepEqual(stored[field], value, `${context}: #${id} in-flight ${field}`)
      }
      ledger.adoptedAfterKill++
    }
    record.version = version
    record.acknowledged = stored
    record.inFlight = undefined
    const history = await call(base, 'GET', `/v3/beneficiaries/${id}/history?per_page=1`, { token })
    assert.equal(
      (history.json!['meta'] as Json)['total_count'],
      version,
      `${context}: #${id} history`,
    )
  }
  ledger.touched.clear()
  for (const [lane, fields] of ledger.unansweredCreates.entries()) {
    if (fields === undefined) continue
    ledger.unansweredCreates[lane] = undefined
    const query = `?search=${String(fields['first_name'])}`
    const found = await call(base, 'GET', `/v3/beneficiaries${query}`, { token })
    const items = found.json!['data'] as Json[]
    assert.ok(items.length <= 1, `${context}: an unanswered create stored twice`)
    if (items.length === 1) {
      const item = items[0]!
      for (const [field, value] of Object.entries(fields))
        assert.equal(item[field], value, `${context}: ${field}`)
      const detail = await call(base, 'GET', `/v3/beneficiaries/${String(item['id'])}`, { token })
      assert.equal(versionOf(detail), 1)
      ledger.add(Number(item['id']), lane, 1, detail.json!)
      ledger.touched.delete(Number(item['id']))
      ledger.adoptedAfterKill++
    }
  }
  const total = async (query: string): Promise<unknown> =>
    (
      (await call(base, 'GET', `/v3/beneficiaries?per_page=1${query}`, { token })).json![
        'meta'
      ] as Json
    )['total_count']
  assert.equal(await total(''), ledger.records.size, `${context}: total`)
  for (const status of STATUSES) {
    const expected = [...ledger.records.values()].filter(
      (r) => r.acknowledged['status'] === status,
    ).length
    assert.equal(await total(`&status=${status}`), expected, `${context}: ${status} total`)
  }
}

/** The database a crash suite kills its server over, and what it checks of it directly. */
interface CrashTarget {
  readonly db: string
  readonly rounds: number
  /** Checks the database itself after a kill (SQLite: integrity and foreign keys). */
  readonly checkAfterKill: (context: string) => void
}

/**
 * Kills a server under concurrent writes, `rounds` times at random moments, and checks after
 * each restart that every acknowledged write is there and nothing else changed.
 */
async function crashRounds(t: { diagnostic(message: string): void }, target: CrashTarget) {
  const { db, rounds } = target
  let server: ServeChild | undefined
  try {
    const random = new Random()
    t.diagnostic(
      `seed ${random.seed} (TEST_SEED=${random.seed} repeats its choices, as far as timing allows)`,
    )
    const client: Client = await createClient(db)
    const ledger = new Ledger()
    for (let round = 0; round < rounds; round++) {
      const transport = TRANSPORTS_HERE[round % TRANSPORTS_HERE.length]!
      // On SQLite, every other pair of rounds writes on the writer thread (--sqlite-writer).
      const writes = round % 4 < 2 ? 'inline' : 'thread'
      const context = `seed ${random.seed}, round ${round} (${transport}, ${writes} writes)`
      server = await ServeChild.start(db, { TRANSPORT: transport, SQLITE_WRITER: writes })
      const base = server.url
      const token = await login(base, client)
      if (round > 0) {
        await verify(base, token, ledger, `${context}, after restart`)
        target.checkAfterKill(`${context}, after the restart`)
      }
      const writing = Promise.all(
        Array.from({ length: LANES }, (_, lane) =>
          writer(base, token, ledger, lane, random, round),
        ),
      )
      // Awaited below, after the kill; a failed assertion in a writer must not go unhandled until then.
      writing.catch(() => undefined)
      await delay(random.between(...KILL_AFTER_MS))
      const exit = await server.kill('SIGKILL')
      assert.equal(exit.signal, 'SIGKILL', context)
      assert.deepEqual(server.errors, [], `${context}: no error was logged`)
      await writing
      ledger.inFlightAtKill +=
        [...ledger.records.values()].filter((r) => r.inFlight !== undefined).length +
        ledger.unansweredCreates.filter((c) => c !== undefined).length
      target.checkAfterKill(`${context}, after the kill`)
    }
    server = await ServeChild.start(db, { TRANSPORT: 'node' })
    const base = server.url
    const token = await login(base, client)
    await verify(base, token, ledger, `seed ${random.seed}, last restart`)
    target.checkAfterKill('while the restarted server runs')

    // Every record, page by page: the set of ids and their contents are those of the ledger.
    const seen = new Set<number>()
    for (let page = 1; ; page++) {
      const reply = await call(base, 'GET', `/v3/beneficiaries?per_page=100&page=${page}`, {
        token,
      })
      for (const item of reply.json!['data'] as Json[]) {
        const record = ledger.records.get(Number(item['id']))
        assert.ok(record !== undefined, `#${String(item['id'])} was never written`)
        assert.equal(item['first_name'], record.acknowledged['first_name'])
        assert.equal(item['status'], record.acknowledged['status'])
        seen.add(record.id)
      }
      if ((reply.json!['links'] as Json)['next'] === null) break
    }
    assert.equal(seen.size, ledger.records.size)
    // Search finds a record by its latest name, and only it.
    for (const record of [...ledger.records.values()].slice(-10)) {
      const name = String(record.acknowledged['first_name'])
      const found = await call(base, 'GET', `/v3/beneficiaries?search=${name}`, { token })
      assert.deepEqual(
        (found.json!['data'] as Json[]).map((item) => item['id']),
        [record.id],
        name,
      )
    }
    assert.equal((await server.kill('SIGTERM')).code, 0)
    assert.deepEqual(server.errors, [], 'no error was logged')
    t.diagnostic(
      `${ledger.acknowledged} writes acknowledged, ${ledger.inFlightAtKill} in flight at the kills, ${ledger.adoptedAfterKill} of those found committed, ${ledger.records.size} records`,
    )
    // The kills really came during writes, and the rounds really wrote.
    assert.ok(ledger.acknowledged >= rounds * 5, `only ${ledger.acknowledged} writes acknowledged`)
    assert.ok(
      ledger.inFlightAtKill >= rounds,
      `only ${ledger.inFlightAtKill} writes in flight at the kills`,
    )
  } finally {
    await server?.kill()
  }
}

describe('crash: SIGKILL under concurrent writes loses nothing acknowledged', () => {
  const directory = mkdtempSync(join(tmpdir(), 'faults-crash-'))
  const db = join(directory, 'crash.sqlite')
  after(() => rmSync(directory, { recursive: true, force: true }))

  it(`keeps every acknowledged create, update and status change across ${ROUNDS} kills at random moments, with an intact file`, async (t) => {
    await crashRounds(t, {
      db,
      rounds: ROUNDS,
      checkAfterKill: (context) => {
        const checked = checkIntegrity(db)
        assert.equal(checked.integrity, 'ok', `${context}: integrity`)
        assert.deepEqual(checked.foreignKeys, [], context)
      },
    })
  })
})

describe('crash on PostgreSQL: SIGKILL under concurrent writes loses nothing acknowledged', async () => {
  const skip = await postgresSkip()
  let database: TestDatabase | undefined
  after(() => database?.drop())

  it(
    `keeps every acknowledged write across ${PG_ROUNDS} kills at random moments`,
    { skip },
    async (t) => {
      database = await createTestDatabase('faults_crash')
      await crashRounds(t, { db: database.url, rounds: PG_ROUNDS, checkAfterKill: () => undefined })
    },
  )
})
