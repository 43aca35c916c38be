import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import Database from 'better-sqlite3'
import {
  assertUnavailable,
  call,
  checkIntegrity,
  createClient,
  login,
  snapshot,
  versionOf,
  type Reply,
} from './fault-support.js'
import { ServeChild } from './serve-child.js'

/** The server's busy timeout: how long a write waits for another process's lock. */
const BUSY_TIMEOUT_MS = 1_000

/** A write request, and when its answer came. */
interface Timed {
  readonly reply: Reply
  readonly at: number
}

async function timed(promise: Promise<Reply>): Promise<Timed> {
  const reply = await promise
  return { reply, at: performance.now() }
}

describe('busy database: another process holds the write lock', () => {
  const directory = mkdtempSync(join(tmpdir(), 'faults-busy-'))
  const db = join(directory, 'busy.sqlite')
  let server: ServeChild
  let holder: Database.Database
  let base = ''
  let token = ''
  let existing = 0

  before(async () => {
    const client = await createClient(db)
    server = await ServeChild.start(db, { SQLITE_BUSY_TIMEOUT_MS: String(BUSY_TIMEOUT_MS) })
    base = server.url
    token = await login(base, client)
    const created = await call(base, 'POST', '/v3/beneficiaries', {
      token,
      body: { first_name: 'Lina', last_name: 'Locked', email: 'lina@example.org' },
    })
    assert.equal(created.status, 201)
    existing = Number(created.json!['id'])
    // A separate process from the server: this test's own connection to the same file.
    holder = new Database(db, { timeout: 0 })
  })

  after(async () => {
    if (holder?.inTransaction) holder.exec('ROLLBACK')
    holder?.close()
    await server?.kill()
    rmSync(directory, { recursive: true, force: true })
  })

  it('makes writes wait for a lock held shorter than the busy timeout, then succeed', async (t) => {
    const etag = `"v${versionOf(await call(base, 'GET', `/v3/beneficiaries/${existing}`, { token }))}"`
    holder.exec('BEGIN IMMEDIATE')
    const sentAt = performance.now()
    const writes = [
      timed(
        call(base, 'POST', '/v3/beneficiaries', {
          token,
          body: { first_name: 'Wanda', last_name: 'Waits', email: 'wanda@example.org' },
        }),
      ),
      timed(
        call(base, 'PUT', `/v3/beneficiaries/${existing}`, {
          token,
          body: { metadata: { waited: 'yes' } },
          headers: { 'if-match': etag },
        }),
      ),
    ]
    // A read sent while the writes wait for the lock.
    await delay(100)
    const read = timed(call(base, 'GET', `/v3/beneficiaries/${existing}`, { token }))
    await delay(BUSY_TIMEOUT_MS / 3)
    const releasedAt = performance.now()
    holder.exec('COMMIT')
    const [create, update] = await Promise.all(writes)
    assert.equal(create!.reply.status, 201, create!.reply.body)
    assert.equal(update!.reply.status, 200, update!.reply.body)
    assert.deepEqual(update!.reply.json!['metadata'], { waited: 'yes' })
    // They were answered only once the lock was released: they waited, they did not fail.
    assert.ok(create!.at >= releasedAt && update!.at >= releasedAt)
    const { at: readAt, reply: readReply } = await read
    assert.equal(readReply.status, 200)
    t.diagnostic(
      `writes answered ${Math.round(create!.at - sentAt)} ms after sending; a read sent during the wait took ${Math.round(readAt - sentAt - 100)} ms (${readAt >= releasedAt ? 'after' : 'before'} the release)`,
    )
  })

  it('answers a clean 503 with the standard body past the busy timeout, and writes nothing of the refused requests', async () => {
    const current = await call(base, 'GET', `/v3/beneficiaries/${existing}`, { token })
    const before = snapshot(db)
    holder.exec('BEGIN IMMEDIATE')
    const sentAt = performance.now()
    let answers: Timed[]
    try {
      const requests: [string, string, object, Record<string, string>][] = [
        [
          'POST',
          '/v3/beneficiaries',
          { first_name: 'Rita', last_name: 'Refused', email: 'rita@example.org' },
          { 'idempotency-key': 'busy-create-1' },
        ],
        [
          'PUT',
          `/v3/beneficiaries/${existing}`,
          { last_name: 'Changed' },
          { 'if-match': String(current.headers['etag']) },
        ],
        ['POST', `/v3/beneficiaries/${existing}/status`, { status: 'active' }, {}],
      ]
      answers = await Promise.all(
        requests.map(([method, path, body, headers]) =>
          timed(call(base, method, path, { token, body, headers })),
        ),
      )
      for (const [i, [method, path]] of requests.entries()) {
        const answer = answers[i]!
        assertUnavailable(answer.reply, method, path)
        assert.ok(
          answer.at - sentAt >= BUSY_TIMEOUT_MS * 0.9,
          'the write waited the busy timeout first',
        )
      }
      // The configured busy timeout applies, not the adapter's default of 5 s.
      const first = Math.min(...answers.map((answer) => answer.at)) - sentAt
      assert.ok(first < 4_000, `the first 503 came after ${Math.round(first)} ms`)
    } finally {
      holder.exec('ROLLBACK')
    }
    // Nothing of any refused request: no row, history entry, idempotency claim or counter change.
    // The access log is written in batches off the request's path (D35), so the answers before
    // this test may land in it meanwhile: it is compared by request id instead.
    const after = snapshot(db)
    const logged = [...(after['access_log'] ?? [])].map(
      (row) => (JSON.parse(row) as { request_id: string }).request_id,
    )
    for (const table of ['access_log', 'access_log_records']) {
      delete after[table]
      delete before[table]
    }
    assert.deepEqual(after, before)
    for (const answer of answers) {
      assert.ok(
        !logged.includes(String(answer.reply.headers['x-request-id'])),
        'a 503 is not logged',
      )
    }
    assert.equal(checkIntegrity(db).integrity, 'ok')
    // Each storage fault is logged for the operator, under the request's id, with the driver's code.
    for (const answer of answers) {
      const id = answer.reply.headers['x-request-id']
      const line = await server.waitFor(
        (entry) => entry['request_id'] === id && Number(entry['level']) >= 50,
      )
      assert.equal((line['err'] as { code?: unknown }).code, 'SQLITE_BUSY')
    }

    // Once the lock is gone the same requests succeed; the key was never claimed, so no replay.
    const retried = await call(base, 'POST', '/v3/beneficiaries', {
      token,
      body: { first_name: 'Rita', last_name: 'Refused', email: 'rita@example.org' },
      headers: { 'idempotency-key': 'busy-create-1' },
    })
    assert.equal(retried.status, 201, retried.body)
    assert.equal(retried.headers['idempotent-replayed'], undefined)
    const updated = await call(base, 'PUT', `/v3/beneficiaries/${existing}`, {
      token,
      body: { last_name: 'Changed' },
      headers: { 'if-match': String(current.headers['etag']) },
    })
    assert.equal(updated.status, 200, updated.body)
    assert.equal(versionOf(updated), versionOf(current) + 1)
  })
})
