import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it, type TestContext } from 'node:test'
import Database from 'better-sqlite3'
import {
  assertUnavailable,
  call,
  checkIntegrity,
  createClient,
  login,
  readOnly,
  snapshot,
  versionOf,
  type Client,
} from './fault-support.js'
import {
  ext4Failure,
  fillUp,
  freeUp,
  isReadOnly,
  mountExt4Image,
  mountTmpfs,
  unmount,
} from './mounts.js'
import { ServeChild } from './serve-child.js'

type Json = Record<string, unknown>

/** A server on a database in `folder`, a logged-in client, and one beneficiary it created. */
interface Setup {
  readonly db: string
  readonly server: ServeChild
  readonly client: Client
  readonly token: string
  readonly id: number
}

async function serveIn(folder: string, servers: ServeChild[]): Promise<Setup> {
  const db = join(folder, 'data.sqlite')
  const client = await createClient(db)
  const server = await ServeChild.start(db, { TRANSPORT: 'node' })
  servers.push(server)
  const token = await login(server.url, client)
  const created = await call(server.url, 'POST', '/v3/beneficiaries', {
    token,
    body: { first_name: 'Dora', last_name: 'Disk', email: 'dora@example.org', metadata: { n: 1 } },
  })
  assert.equal(created.status, 201, created.body)
  return { db, server, client, token, id: Number(created.json!['id']) }
}

/**
 * Every kind of write, each refused with a clean 503 (several creates at once, so that they
 * share one group commit), a login (it writes a session) too; reads keep answering with what
 * was there before.
 */
async function assertWritesRefusedReadsServed(setup: Setup, before: Json): Promise<void> {
  const { server, token, id, client } = setup
  const base = server.url
  const path = `/v3/beneficiaries/${id}`
  const creates = await Promise.all(
    [1, 2, 3, 4].map((n) =>
      call(base, 'POST', '/v3/beneficiaries', {
        token,
        body: {
          first_name: 'Fay',
          last_name: `Full${'x'.repeat(n)}`,
          email: `fay${n}@example.org`,
        },
        headers: { 'idempotency-key': `full-${n}` },
      }),
    ),
  )
  for (const reply of creates) assertUnavailable(reply, 'POST', '/v3/beneficiaries')
  const etag = `"v${String(before['version'])}"`
  const writes: [string, string, unknown][] = [
    ['PUT', path, { phone: '+39 333 000 1111', metadata: { n: 2 } }],
    ['POST', `${path}/status`, { status: 'active', reason: 'checked' }],
    ['DELETE', path, undefined],
  ]
  for (const [method, target, body] of writes) {
    const reply = await call(base, method, target, {
      token,
      headers: { 'if-match': etag },
      ...(body !== undefined && { body }),
    })
    assertUnavailable(reply, method, target)
  }
  assertUnavailable(
    await call(base, 'POST', '/v3/auth/login', { body: client }),
    'POST',
    '/v3/auth/login',
  )

  const detail = await call(base, 'GET', path, { token })
  assert.equal(detail.status, 200)
  assert.deepEqual(detail.json, before['detail'])
  const list = await call(base, 'GET', '/v3/beneficiaries', { token })
  assert.equal(list.status, 200)
  assert.equal((list.json!['meta'] as Json)['total_count'], 1)
  const history = await call(base, 'GET', `${path}/history`, { token })
  assert.equal(history.status, 200)
  assert.equal((history.json!['meta'] as Json)['total_count'], 1)
  assert.equal((await call(base, 'GET', '/readyz')).status, 200, 'the database still answers')
}

/** The detail and version of the beneficiary, as a reference for "nothing changed". */
async function current(setup: Setup): Promise<Json> {
  const reply = await call(setup.server.url, 'GET', `/v3/beneficiaries/${setup.id}`, {
    token: setup.token,
  })
  return { detail: reply.json, version: versionOf(reply) }
}

function skipWith(t: TestContext, reason: string): void {
  t.skip(reason)
}

describe('disk full and read-only file system under a running server', () => {
  const directory = mkdtempSync(join(tmpdir(), 'faults-disk-'))
  const mounts: string[] = []
  const servers: ServeChild[] = []
  after(async () => {
    for (const server of servers) await server.kill()
    for (const at of mounts) unmount(at)
    rmSync(directory, { recursive: true, force: true })
  })

  it('refuses writes with 503 when the disk is full, keeps serving reads, leaves nothing half-written, and writes again once space is freed', async (t) => {
    const at = join(directory, 'tmpfs')
    mkdirSync(at)
    const mounted = mountTmpfs(at, 4096)
    if (!mounted.ok) return skipWith(t, mounted.reason)
    mounts.push(at)
    const setup = await serveIn(at, servers)
    const before = await current(setup)
    // An empty WAL, so that the next commit must take new space, then no space at all.
    const handle = new Database(setup.db)
    try {
      const [checkpoint] = handle.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[]
      assert.equal(checkpoint?.busy, 0)
    } finally {
      handle.close()
    }
    const rows = snapshot(setup.db)
    const filler = fillUp(at)

    await assertWritesRefusedReadsServed(setup, before)
    assert.deepEqual(snapshot(setup.db), rows, 'nothing of a refused write is in the database')
    assert.equal(checkIntegrity(setup.db).integrity, 'ok')
    const logged = await setup.server.waitFor((line) => Number(line['level']) >= 50)
    assert.equal((logged['err'] as { code?: unknown }).code, 'SQLITE_FULL')

    freeUp(filler)
    const base = setup.server.url
    const again = await call(base, 'POST', '/v3/beneficiaries', {
      token: setup.token,
      body: { first_name: 'Fay', last_name: 'Fullx', email: 'fay1@example.org' },
      headers: { 'idempotency-key': 'full-1' },
    })
    assert.equal(again.status, 201, again.body)
    assert.equal(
      again.headers['idempotent-replayed'],
      undefined,
      'the refused create left no claim',
    )
    const updated = await call(base, 'PUT', `/v3/beneficiaries/${setup.id}`, {
      token: setup.token,
      body: { metadata: { n: 2 } },
      headers: { 'if-match': `"v${String(before['version'])}"` },
    })
    assert.equal(updated.status, 200, updated.body)
    assert.equal(versionOf(updated), Number(before['version']) + 1)
    assert.equal((await setup.server.kill('SIGTERM')).code, 0)
    assert.equal(checkIntegrity(setup.db).integrity, 'ok')
    // Those writes are in the file, not only in a transaction the fault left open.
    const stored = readOnly(setup.db, (db) =>
      db.prepare('SELECT email, metadata FROM beneficiaries ORDER BY id').all(),
    )
    assert.deepEqual(stored, [
      { email: 'dora@example.org', metadata: '{"n":2}' },
      { email: 'fay1@example.org', metadata: '{}' },
    ])
  })

  it('refuses writes with 503 when the file system turns read-only under it, keeps serving reads and leaves nothing half-written', async (t) => {
    const at = join(directory, 'ext4')
    mkdirSync(at)
    const mounted = mountExt4Image(join(directory, 'ext4.img'), at, 16)
    if (!mounted.ok) return skipWith(t, mounted.reason)
    mounts.push(at)
    const fail = ext4Failure(mounted.device)
    if (fail === undefined) return skipWith(t, 'this kernel has no ext4 trigger_fs_error')
    const setup = await serveIn(at, servers)
    const before = await current(setup)
    const rows = snapshot(setup.db)
    // Linux refuses `mount -o remount,ro` while a file is open for writing (EBUSY); a disk error
    // under errors=remount-ro is how a file system really turns read-only under a database.
    fail()
    assert.ok(isReadOnly(at), 'the file system is read-only now')

    await assertWritesRefusedReadsServed(setup, before)
    assert.deepEqual(snapshot(setup.db), rows, 'nothing of a refused write is in the database')
    assert.equal(checkIntegrity(setup.db).integrity, 'ok')
    const logged = await setup.server.waitFor((line) => Number(line['level']) >= 50)
    assert.match(String((logged['err'] as { code?: unknown }).code), /^SQLITE_(IOERR|READONLY)/)
    // A failed disk does not turn the graceful stop into a failure.
    assert.equal((await setup.server.kill('SIGTERM')).code, 0, setup.server.stderr)
    await setup.server.waitFor((line) => line['msg'] === 'Stopped', 1_000)
  })
})
