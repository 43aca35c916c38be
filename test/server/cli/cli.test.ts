import assert from 'node:assert/strict'
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { openSqliteStorage } from '../../../adapters/sqlite/index.js'
import { MARIO } from '../server-fixtures.js'
import { cli } from '../../support/cli-in-process.js'
import { skipOn, TRANSPORTS } from '../../support/transports.js'

const CLI = fileURLToPath(new URL('../../../server/cli.js', import.meta.url))

let directory: string
before(() => {
  directory = mkdtempSync(join(tmpdir(), 'beneficiaries-cli-'))
})
after(() => rmSync(directory, { recursive: true, force: true }))

describe('the command-line tool', () => {
  it('prints help for every command with status 0, and the overview without a command with status 2', async () => {
    for (const argv of [
      ['--help'],
      ['serve', '--help'],
      ['clients', '--help'],
      ['migrate', '-h'],
      ['backup', '--help'],
      ['seed', '--help'],
    ]) {
      const result = await cli(argv)
      assert.equal(result.status, 0, argv.join(' '))
      assert.match(result.out, /^Usage: beneficiaries/)
    }
    assert.equal((await cli([])).status, 2)
  })

  it('prints the own help of each clients command: only create says it makes a database', async () => {
    const overview = (await cli(['clients', '--help'])).out
    for (const action of ['create', 'list', 'revoke']) {
      const result = await cli(['clients', action, '--help'])
      assert.equal(result.status, 0, action)
      assert.match(result.out, new RegExp(`^Usage: beneficiaries clients ${action}`))
      assert.notEqual(result.out, overview)
      const creates = /created with its folder when missing|Creates the database/.test(result.out)
      assert.equal(creates, action === 'create', action)
    }
    assert.match((await cli(['clients', 'list', '--help'])).out, /which must exist/)
  })

  it('refuses an unknown command or option with status 2 and one line', async () => {
    for (const argv of [
      ['launch'],
      ['serve', '--colour'],
      ['seed', '--count'],
      ['clients', 'rename'],
      ['migrate', 'extra'],
    ]) {
      const result = await cli(argv)
      assert.equal(result.status, 2, argv.join(' '))
      assert.equal(result.err.split('\n').length, 1)
    }
  })

  it('refuses bad configuration at start with one line naming the setting (status 2)', async () => {
    const cases: [Record<string, string>, string[], string][] = [
      [{ PORT: 'eighty' }, [], 'PORT'],
      [{}, ['--port', '65536'], '--port'],
      [{ HOST: ' ' }, [], 'HOST'],
      [{ TRANSPORT: 'h2' }, [], 'TRANSPORT'],
      [{ RATE_LIMIT_WRITE: '0' }, [], 'RATE_LIMIT_WRITE'],
      [{ RATE_LIMIT_STANDARD: '1.5' }, [], 'RATE_LIMIT_STANDARD'],
      [{ RATE_LIMIT_AUTH: '-5' }, [], 'RATE_LIMIT_AUTH'],
      [{ ACCESS_TOKEN_TTL_SECONDS: 'an hour' }, [], 'ACCESS_TOKEN_TTL_SECONDS'],
      [{ JWT_SECRET: 'hunter2-is-not-long-enough' }, [], 'JWT_SECRET'],
      [{ JWT_SECRET_FILE: '/nonexistent/keys' }, [], 'JWT_SECRET_FILE'],
      [{ BODY_TIMEOUT_SECONDS: '8' }, [], 'BODY_TIMEOUT_SECONDS'],
      [{}, ['--body-timeout', '0'], '--body-timeout'],
      [{ TLS_CERT: '/nonexistent/cert.pem' }, [], 'TLS_CERT'],
      [{ TLS_CERT: CLI, TLS_KEY: '/nonexistent/key.pem' }, [], 'TLS_KEY'],
      [{ TRUST_PROXY: '10.0.0.0/8, proxy.internal' }, [], 'TRUST_PROXY'],
      [{ BASE_PATH: 'v3/' }, [], 'BASE_PATH'],
      [{ LOG_LEVEL: 'loud' }, [], 'LOG_LEVEL'],
      [{ DOCS: 'maybe' }, [], 'DOCS'],
      [{ PORT: '8080' }, ['--rate-limit-auth', 'many'], '--rate-limit-auth'],
    ]
    for (const [env, flags, setting] of cases) {
      const result = await cli(['serve', '--db', join(directory, 'never.sqlite'), ...flags], env)
      assert.equal(result.status, 2, setting)
      assert.equal(result.err.split('\n').length, 1, setting)
      assert.ok(result.err.includes(`invalid ${setting}:`), result.err)
    }
    assert.ok(
      !(await cli(['serve'], { JWT_SECRET: 'hunter2-is-not-long-enough' })).err.includes('hunter2'),
    )
    assert.equal(existsSync(join(directory, 'never.sqlite')), false, 'nothing was opened')
  })

  it('D1: clients create prints the secret once as JSON; list never shows it; revoke works once', async () => {
    const db = join(directory, 'clients.sqlite')
    const created = await cli([
      'clients',
      'create',
      '--db',
      db,
      '--name',
      'Case workers',
      '--scopes',
      'read write',
    ])
    assert.equal(created.status, 0, created.err)
    const client = JSON.parse(created.out) as {
      client_id: string
      client_secret: string
      scopes: string[]
    }
    assert.deepEqual(Object.keys(client), ['client_id', 'client_secret', 'scopes'])
    assert.deepEqual(client.scopes, ['read', 'write'])
    const listed = await cli(['clients', 'list'], { DATABASE_PATH: db })
    assert.equal(listed.status, 0)
    assert.ok(!listed.out.includes(client.client_secret))
    assert.equal(
      (JSON.parse(listed.out) as { client_id: string }[])[0]?.client_id,
      client.client_id,
    )
    assert.equal((await cli(['clients', 'revoke', client.client_id, '--db', db])).status, 0)
    const again = await cli(['clients', 'revoke', client.client_id, '--db', db])
    assert.equal(again.status, 1)
    const bad = await cli(['clients', 'create', '--db', db, '--name', 'x', '--scopes', 'admin'])
    assert.equal(bad.status, 2)
    assert.equal((await cli(['clients', 'create', '--db', db])).status, 2)
  })

  it('migrate, seed and backup work on a new database in a new folder', async () => {
    const db = join(directory, 'nested', 'folder', 'data.sqlite')
    const migrated = await cli(['migrate', '--db', db])
    assert.equal(migrated.status, 0, migrated.err)
    assert.ok((JSON.parse(migrated.out) as { migrations: string[] }).migrations.length > 0)
    const seeded = await cli(['seed', '--count', '250', '--seed', '7', '--db', db])
    assert.equal(seeded.status, 0, seeded.err)
    assert.equal((JSON.parse(seeded.out) as { count: number }).count, 250)
    assert.equal((await cli(['seed', '--count', '0', '--db', db])).status, 2)
    // D32: the folders the CLI made and the files in them are their owner's alone.
    const mode = (path: string): number => statSync(path).mode & 0o777
    assert.equal(mode(join(directory, 'nested')), 0o700)
    assert.equal(mode(join(directory, 'nested', 'folder')), 0o700)
    for (const file of [db, `${db}-wal`, `${db}-shm`].filter((path) => existsSync(path))) {
      assert.equal(mode(file), 0o600, file)
    }
    const copy = join(directory, 'copy.sqlite')
    const backup = await cli(['backup', '--to', copy, '--db', db])
    assert.equal(backup.status, 0, backup.err)
    assert.equal(mode(copy), 0o600)
    const storage = await openSqliteStorage({ path: copy })
    const page = await storage.beneficiaries.list({
      offset: 0,
      limit: 1,
      sort: 'id',
      descending: false,
    })
    assert.equal(page.total, 250)
    await storage.close()
    assert.equal((await cli(['backup', '--db', db])).status, 2)
    assert.equal(
      (await cli(['backup', '--to', copy, '--db', join(directory, 'missing.sqlite')])).status,
      1,
    )
  })
})

/** A `beneficiaries serve` child process and the JSON lines it logged. */
class ServeProcess {
  readonly child: ChildProcessWithoutNullStreams
  readonly lines: Record<string, unknown>[] = []
  readonly exited: Promise<number | null>
  #buffer = ''
  #waiters: {
    test: (line: Record<string, unknown>) => boolean
    resolve: (line: Record<string, unknown>) => void
  }[] = []

  constructor(args: string[], env: Record<string, string>) {
    this.child = spawn(process.execPath, [CLI, 'serve', '--port', '0', ...args], {
      env: { PATH: process.env['PATH'] ?? '', ...env },
    })
    this.child.stdout.setEncoding('utf8')
    this.child.stdout.on('data', (chunk: string) => this.#take(chunk))
    this.exited = new Promise((resolve) => this.child.on('exit', (code) => resolve(code)))
  }

  /** Resolves with the first logged line (past or future) that passes `test`. */
  waitFor(test: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
    const found = this.lines.find(test)
    if (found !== undefined) return Promise.resolve(found)
    return new Promise((resolve) => this.#waiters.push({ test, resolve }))
  }

  async url(): Promise<string> {
    const line = await this.waitFor((entry) => typeof entry['url'] === 'string')
    return String(line['url'])
  }

  get log(): string {
    return this.lines.map((line) => JSON.stringify(line)).join('\n')
  }

  #take(chunk: string): void {
    this.#buffer += chunk
    let newline: number
    while ((newline = this.#buffer.indexOf('\n')) !== -1) {
      const text = this.#buffer.slice(0, newline)
      this.#buffer = this.#buffer.slice(newline + 1)
      const line = JSON.parse(text) as Record<string, unknown>
      this.lines.push(line)
      for (const waiter of [...this.#waiters]) {
        if (waiter.test(line)) {
          this.#waiters.splice(this.#waiters.indexOf(waiter), 1)
          waiter.resolve(line)
        }
      }
    }
  }
}

async function api(
  url: string,
  method: string,
  path: string,
  token?: string,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown> | undefined }> {
  const headers: Record<string, string> = {}
  if (token !== undefined) headers['authorization'] = `Bearer ${token}`
  if (body !== undefined) headers['content-type'] = 'application/json'
  const response = await fetch(url + path, {
    method,
    headers,
    ...(body !== undefined && { body: JSON.stringify(body) }),
  })
  const text = await response.text()
  return {
    status: response.status,
    json: text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>),
  }
}

for (const transport of TRANSPORTS) {
  describe(`beneficiaries serve (${transport})`, { skip: skipOn(transport) }, () => {
    it(`says how to create the first client, serves the whole API on SQLite, and stops on ${transport === 'uws' ? 'SIGTERM' : 'SIGINT'} with status 0`, async () => {
      const db = join(directory, `serve-${transport}.sqlite`)
      const server = new ServeProcess(['--db', db], { TRANSPORT: transport, RATE_LIMIT_AUTH: '50' })
      const url = await server.url()
      const warning = await server.waitFor((line) => typeof line['command'] === 'string')
      assert.equal(
        warning['command'],
        `npx beneficiaries clients create --db ${db} --name my-app --scopes "read write"`,
      )
      assert.match(
        String((await server.waitFor((line) => typeof line['url'] === 'string'))['msg']),
        new RegExp(`transport ${transport}`),
      )
      assert.equal((await api(url, 'GET', '/readyz')).status, 200)
      assert.equal((await api(url, 'GET', '/healthz')).status, 200)

      const created = await cli(['clients', 'create', '--db', db, '--name', 'ops'])
      const client = JSON.parse(created.out) as { client_id: string; client_secret: string }
      const login = await api(url, 'POST', '/v3/auth/login', undefined, client)
      assert.equal(login.status, 200)
      const token = String(login.json?.['access_token'])
      const beneficiary = await api(url, 'POST', '/v3/beneficiaries', token, MARIO)
      assert.equal(beneficiary.status, 201)
      const path = `/v3/beneficiaries/${String(beneficiary.json?.['id'])}`
      assert.equal(
        (await api(url, 'GET', '/v3/beneficiaries?search=rossi', token)).json?.['meta'] !==
          undefined,
        true,
      )
      assert.equal((await api(url, 'GET', path, token)).status, 200)
      assert.equal((await api(url, 'PUT', path, token, { phone: '+39 06 5555 1234' })).status, 200)
      assert.equal(
        (await api(url, 'POST', `${path}/status`, token, { status: 'active' })).status,
        200,
      )
      assert.equal((await api(url, 'GET', `${path}/history`, token)).status, 200)
      assert.equal((await api(url, 'DELETE', path, token)).status, 204)
      assert.equal((await api(url, 'POST', '/v3/auth/logout', token)).status, 204)

      server.child.kill(transport === 'uws' ? 'SIGTERM' : 'SIGINT')
      assert.equal(await server.exited, 0)
      await server.waitFor((line) => line['msg'] === 'Stopped')
      // D25: the log of the whole run holds no secret, token or field value.
      for (const secret of [
        client.client_secret,
        token,
        String(login.json?.['refresh_token']),
        MARIO.fiscal_code,
        MARIO.email,
        MARIO.last_name,
      ]) {
        assert.ok(!server.log.includes(secret))
      }
    })
  })
}

describe('graceful shutdown of beneficiaries serve', () => {
  it('D3: without a configured key, the key generated on first start survives a restart', async () => {
    const db = join(directory, 'stored-key.sqlite')
    const created = JSON.parse(
      (await cli(['clients', 'create', '--db', db, '--name', 'ops'])).out,
    ) as { client_id: string; client_secret: string }
    const first = new ServeProcess(['--db', db], { TRANSPORT: 'node' })
    const token = String(
      (await api(await first.url(), 'POST', '/v3/auth/login', undefined, created)).json?.[
        'access_token'
      ],
    )
    first.child.kill('SIGTERM')
    assert.equal(await first.exited, 0)
    const second = new ServeProcess(['--db', db], { TRANSPORT: 'node' })
    assert.equal((await api(await second.url(), 'GET', '/v3/beneficiaries', token)).status, 200)
    second.child.kill('SIGTERM')
    assert.equal(await second.exited, 0)
  })

  it('D32: warns at start about a database file other users can open, naming the file and its mode', async () => {
    const db = join(directory, 'open-to-others.sqlite')
    assert.equal((await cli(['migrate', '--db', db])).status, 0)
    const server = new ServeProcess(['--db', db], { TRANSPORT: 'node' })
    await server.url()
    assert.equal(
      server.lines.filter((line) => line['file'] !== undefined).length,
      0,
      'a private database draws no warning',
    )
    server.child.kill('SIGTERM')
    assert.equal(await server.exited, 0)
    chmodSync(db, 0o644)
    const open = new ServeProcess(['--db', db], { TRANSPORT: 'node' })
    const warning = await open.waitFor((line) => line['file'] === db)
    assert.equal(warning['mode'], '0644')
    assert.equal(warning['level'], 40)
    assert.match(String(warning['msg']), /chmod 600/)
    // The warning comes before the database is opened: SIGTERM is handled once it listens.
    await open.url()
    open.child.kill('SIGTERM')
    assert.equal(await open.exited, 0)
  })

  it('D3: a key file signs tokens that survive a restart', async () => {
    const db = join(directory, 'keys.sqlite')
    const keys = join(directory, 'keys.txt')
    writeFileSync(keys, `# signing key first\n${Buffer.alloc(32, 7).toString('base64')}\n`)
    const created = JSON.parse(
      (await cli(['clients', 'create', '--db', db, '--name', 'ops'])).out,
    ) as { client_id: string; client_secret: string }
    const first = new ServeProcess(['--db', db, '--jwt-secret-file', keys], { TRANSPORT: 'node' })
    const token = String(
      (await api(await first.url(), 'POST', '/v3/auth/login', undefined, created)).json?.[
        'access_token'
      ],
    )
    first.child.kill('SIGTERM')
    assert.equal(await first.exited, 0)
    const second = new ServeProcess(['--db', db], { TRANSPORT: 'node', JWT_SECRET_FILE: keys })
    assert.equal((await api(await second.url(), 'GET', '/v3/beneficiaries', token)).status, 200)
    second.child.kill('SIGTERM')
    assert.equal(await second.exited, 0)
  })
})
