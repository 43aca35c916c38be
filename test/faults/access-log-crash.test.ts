import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import pg from 'pg'
import { call, createClient, readOnly, Random, type Client } from './fault-support.js'
import { ServeChild } from './serve-child.js'
import {
  createTestDatabase,
  postgresSkip,
  type TestDatabase,
} from '../support/postgres-database.js'

/** What docs/access-log.md promises: a crash loses at most the last second of entries (D35). */
const BOUND_MS = 1000
/** Concurrent readers; each sends one request at a time. */
const LANES = 4
const RECORDS = 12
/** The kill comes this long after the reads start (uniformly at random). */
const KILL_AFTER_MS = [1500, 3000] as const

/** A read that was answered 200, and when its answer arrived (this process's clock). */
interface Answered {
  readonly requestId: string
  readonly at: number
}

/** Reads records by id, each with its own request id, until the connection fails. */
async function reader(
  base: string,
  token: string,
  ids: readonly number[],
  lane: number,
  random: Random,
  answered: Answered[],
): Promise<void> {
  for (let n = 0; ; n++) {
    const requestId = `crash-${lane}-${n}`
    const id = random.pick([...ids])
    let status: number
    try {
      status = (
        await call(base, 'GET', `/v3/beneficiaries/${id}`, {
          token,
          headers: { 'x-request-id': requestId, 'x-purpose': 'crash test' },
        })
      ).status
    } catch {
      return
    }
    assert.equal(status, 200)
    answered.push({ requestId, at: Date.now() })
  }
}

/**
 * Kills a server under reads `rounds` times and checks, reading the database itself, that
 * every read answered more than `BOUND_MS` before the kill has its access-log entry.
 */
async function killUnderReads(
  t: { diagnostic(message: string): void },
  db: string,
  rounds: number,
  recorded: () => Promise<ReadonlySet<string>>,
): Promise<void> {
  const random = new Random()
  const client: Client = await createClient(db)
  let server: ServeChild | undefined
  let ids: number[] = []
  let older = 0
  let lostRecent = 0
  try {
    for (let round = 0; round < rounds; round++) {
      const writes = round % 2 === 0 ? 'thread' : 'inline'
      server = await ServeChild.start(db, { SQLITE_WRITER: writes })
      const base = server.url
      const login = await call(base, 'POST', '/v3/auth/login', { body: client })
      const token = String(login.json!['access_token'])
      if (round === 0) {
        for (let i = 0; i < RECORDS; i++) {
          const created = await call(base, 'POST', '/v3/beneficiaries', {
            token,
            body: { first_name: 'Crash', last_name: `Reader${i}`, email: `r${i}@example.org` },
          })
          assert.equal(created.status, 201, created.body)
          ids.push(Number(created.json!['id']))
        }
      }
      const answered: Answered[] = []
      const reading = Promise.all(
        Array.from({ length: LANES }, (_, lane) =>
          reader(base, token, ids, lane + round * LANES, random, answered),
        ),
      )
      reading.catch(() => undefined)
      await delay(random.between(...KILL_AFTER_MS))
      const killedAt = Date.now()
      const exit = await server.kill('SIGKILL')
      assert.equal(exit.signal, 'SIGKILL')
      await reading
      const kept = await recorded()
      const context = `seed ${random.seed}, round ${round} (${writes} writes)`
      const due = answered.filter((read) => read.at < killedAt - BOUND_MS)
      const missing = due.filter((read) => !kept.has(read.requestId))
      assert.deepEqual(
        missing.map(
          (read) => `${read.requestId} answered ${killedAt - read.at} ms before the kill`,
        ),
        [],
        `${context}: ${due.length} reads older than ${BOUND_MS} ms`,
      )
      assert.ok(due.length >= 50, `${context}: only ${due.length} reads before the bound`)
      older += due.length
      lostRecent += answered.filter((read) => !kept.has(read.requestId)).length
    }
    t.diagnostic(
      `${older} reads older than ${BOUND_MS} ms at the kills, all recorded; ${lostRecent} younger ones lost`,
    )
  } finally {
    await server?.kill()
    ids = []
  }
}

describe('crash: SIGKILL under reads loses no access-log entry older than the bound (D35)', () => {
  const directory = mkdtempSync(join(tmpdir(), 'faults-access-log-'))
  const db = join(directory, 'access-log.sqlite')
  after(() => rmSync(directory, { recursive: true, force: true }))

  it('SQLite, its writes on the writer thread and inline', async (t) => {
    await killUnderReads(t, db, 4, async () =>
      readOnly(db, (connection) => {
        const rows = connection.prepare('SELECT request_id FROM access_log').pluck().all()
        return new Set(rows as string[])
      }),
    )
  })
})

describe('crash on PostgreSQL: SIGKILL under reads loses no access-log entry older than the bound', async () => {
  const skip = await postgresSkip()
  let database: TestDatabase | undefined
  after(() => database?.drop())

  it('PostgreSQL', { skip }, async (t) => {
    database = await createTestDatabase('faults_access_log')
    const url = database.url
    await killUnderReads(t, url, 2, async () => {
      const connection = new pg.Client({ connectionString: url })
      await connection.connect()
      try {
        const result = await connection.query<{ request_id: string }>(
          'SELECT request_id FROM access_log',
        )
        return new Set(result.rows.map((row) => row.request_id))
      } finally {
        await connection.end()
      }
    })
  })
})
