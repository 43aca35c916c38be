import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { decodeProtectedHeader } from 'jose'
import { call, createClient, login } from '../../faults/fault-support.js'
import { ServeChild } from '../../faults/serve-child.js'
import { CLI } from '../../support/cli-child.js'
import { cli } from '../../support/cli-in-process.js'

const run = promisify(execFile)
const directory = mkdtempSync(join(tmpdir(), 'beneficiaries-keys-'))

/** The CLI as its own process, as an operator runs it next to a running server. */
async function keys(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return run(process.execPath, [CLI, 'keys', ...args], { env: { PATH: process.env['PATH'] } })
}

const kidOf = (token: string): string | undefined => decodeProtectedHeader(token).kid

describe('beneficiaries keys (stored signing keys, D3)', () => {
  const servers: ServeChild[] = []
  after(async () => {
    for (const server of servers) await server.kill()
    rmSync(directory, { recursive: true, force: true })
  })

  it('keys rotate, then a restart: tokens issued before keep working, new ones carry the new kid', async () => {
    const db = join(directory, 'rotate.sqlite')
    const client = await createClient(db)
    const first = await ServeChild.start(db)
    servers.push(first)
    const before = await login(first.url, client)
    const oldKid = kidOf(before)

    const rotated = await keys('rotate', '--db', db)
    const { kid, created_at } = JSON.parse(rotated.stdout) as { kid: string; created_at: string }
    assert.notEqual(kid, oldKid)
    assert.ok(!Number.isNaN(Date.parse(created_at)))
    assert.match(rotated.stderr, /signs new access tokens on every running server within 60 s/)

    assert.equal((await first.kill('SIGTERM')).code, 0)
    const second = await ServeChild.start(db)
    servers.push(second)
    assert.equal(
      (await call(second.url, 'GET', '/v3/beneficiaries', { token: before })).status,
      200,
    )
    const after = await login(second.url, client)
    assert.equal(kidOf(after), kid)
    assert.equal((await call(second.url, 'GET', '/v3/beneficiaries', { token: after })).status, 200)

    const listed = JSON.parse((await keys('list', '--db', db)).stdout) as Record<string, string>[]
    assert.deepEqual(
      listed.map((key) => [key['kid'], key['state']]),
      [
        [oldKid, 'verifying'],
        [kid, 'signing'],
      ],
    )
    // Retired once a token it signed within the reload interval has expired, skew included.
    const retiresAt = Date.parse(listed[0]!['retires_at']!)
    assert.equal(retiresAt - Date.parse(created_at), (60 + 3600 + 5) * 1000)
    assert.ok(!JSON.stringify(listed).includes('secret'))
    assert.equal((await second.kill('SIGTERM')).code, 0)
  })

  it('has its own help, needs an existing database, and says when JWT_SECRET_FILE makes them unused', async () => {
    for (const argv of [
      ['keys', '--help'],
      ['keys', 'rotate', '--help'],
      ['keys', 'list', '--help'],
    ]) {
      const result = await cli(argv)
      assert.equal(result.status, 0)
      assert.match(result.out, /^Usage: beneficiaries keys/)
    }
    assert.match((await cli(['--help'])).out, /keys rotate/)
    const missing = await cli(['keys', 'rotate', '--db', join(directory, 'none.sqlite')])
    assert.equal(missing.status, 1)
    assert.match(missing.err, /no database at/)
    const unknown = await cli(['keys', 'rotat'])
    assert.equal(unknown.status, 2)
    assert.match(unknown.err, /Did you mean "keys rotate"\?/)
    const db = join(directory, 'file.sqlite')
    await createClient(db)
    const listed = await cli(['keys', 'list', '--db', db], { JWT_SECRET_FILE: '/run/secrets/jwt' })
    assert.equal(listed.status, 0)
    assert.match(listed.err, /JWT_SECRET_FILE is set: a server started with it signs and verifies/)
  })
})
