import assert from 'node:assert/strict'
import { createServer, type AddressInfo } from 'node:net'
import { after, describe, it } from 'node:test'
import pg from 'pg'
import { call, login } from '../../faults/fault-support.js'
import { ServeChild } from '../../faults/serve-child.js'
import {
  POSTGRES_URL,
  createTestDatabase,
  postgresSkip,
  type TestDatabase,
} from '../../support/postgres-database.js'
import { MARIO } from '../server-fixtures.js'
import { cli } from '../../support/cli-in-process.js'

/** How many tables the database at `url` has outside PostgreSQL's own schemas. */
async function tableCount(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const result = await client.query(
      "SELECT count(*)::int AS n FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')",
    )
    return (result.rows[0] as { n: number }).n
  } finally {
    await client.end()
  }
}

describe('the command-line tool on PostgreSQL', async () => {
  const skip = await postgresSkip()
  let database: TestDatabase | undefined
  let server: ServeChild | undefined
  after(async () => {
    await server?.kill()
    await database?.drop()
  })

  it('refuses a URL of another database, and two databases at once, with status 2', async () => {
    const other = await cli(['migrate', '--database-url', 'mysql://root@127.0.0.1/db'])
    assert.equal(other.status, 2)
    assert.match(other.err, /--database-url/)
    const both = await cli([
      'migrate',
      '--db',
      'x.sqlite',
      '--database-url',
      'postgres://postgres@127.0.0.1/db',
    ])
    assert.equal(both.status, 2)
  })

  it('says why PostgreSQL cannot be reached: where, the error code, never the password', async () => {
    // A port nothing listens on: taken from the system, then let go.
    const probe = createServer()
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
    const port = (probe.address() as AddressInfo).port
    await new Promise((resolve) => probe.close(resolve))
    const url = `postgres://app:hunter2-secret@127.0.0.1:${port}/beneficiaries`
    for (const argv of [['serve', '--port', '0'], ['migrate']]) {
      const result = await cli([...argv, '--database-url', url])
      assert.equal(result.status, 1, result.err)
      assert.equal(
        result.err,
        `beneficiaries ${argv[0]}: cannot open the database postgres://app:***@127.0.0.1:${port}/beneficiaries: nothing accepts connections at that host and port: is PostgreSQL running there? (ECONNREFUSED)`,
      )
    }
    const unknown = await cli(['migrate'], {
      DATABASE_URL: 'postgres://app@no-such-host.invalid/db',
    })
    assert.equal(unknown.status, 1)
    assert.match(unknown.err, /no-such-host\.invalid\/db: no such host \((ENOTFOUND|EAI_AGAIN)\)$/)
  })

  it('says which database does not exist, by its code', { skip }, async () => {
    const missing = new URL(POSTGRES_URL)
    missing.pathname = '/no_such_database_here'
    const result = await cli(['serve', '--port', '0', '--database-url', missing.toString()])
    assert.equal(result.status, 1)
    assert.match(result.err, /\/no_such_database_here: no such database \(3D000\)$/)
  })

  it(
    'migrate, seed, clients and backup take --database-url or DATABASE_URL',
    { skip },
    async () => {
      database = await createTestDatabase('cli_pg')
      const url = database.url
      // A command that needs an existing database creates no schema in a database without one.
      const early = await cli(['clients', 'list', '--database-url', url])
      assert.equal(early.status, 1)
      assert.match(early.err, /does not have this version's schema: run "beneficiaries migrate"/)
      assert.equal(await tableCount(url), 0, 'no table was made')

      const migrated = await cli(['migrate', '--database-url', url])
      assert.equal(migrated.status, 0, migrated.err)
      const result = JSON.parse(migrated.out) as {
        database: string
        applied: string[]
        migrations: string[]
      }
      assert.ok(result.migrations.length > 0)
      assert.deepEqual(result.applied, result.migrations)
      assert.match(migrated.err, /^migrate: applied \d+ migrations? to postgres:\/\//)
      const again = await cli(['migrate'], { DATABASE_URL: url })
      assert.deepEqual(JSON.parse(again.out), {
        database: result.database,
        applied: [],
        migrations: result.migrations,
      })
      assert.match(again.err, /is already up to date/)

      const seeded = await cli(['seed', '--count', '120', '--seed', '7', '--database-url', url])
      assert.equal(seeded.status, 0, seeded.err)
      assert.equal((JSON.parse(seeded.out) as { count: number }).count, 120)

      const created = await cli(['clients', 'create', '--name', 'ops', '--database-url', url])
      assert.equal(created.status, 0, created.err)
      const listed = await cli(['clients', 'list'], { DATABASE_URL: url })
      assert.equal((JSON.parse(listed.out) as unknown[]).length, 1)
      assert.doesNotMatch(listed.out, /secret/)

      const backup = await cli(['backup', '--to', 'copy.dump', '--database-url', url])
      assert.equal(backup.status, 2)
      assert.match(backup.err, /pg_dump/)
    },
  )

  it(
    'serve answers the API on PostgreSQL, says limits are per instance, and never logs the password',
    { skip },
    async () => {
      assert.ok(database !== undefined, 'the previous test made the database')
      const withPassword = new URL(database.url)
      withPassword.password = 'not-a-real-password-9f2'
      const created = await cli([
        'clients',
        'create',
        '--name',
        'serve',
        '--database-url',
        withPassword.toString(),
      ])
      const client = JSON.parse(created.out) as { client_id: string; client_secret: string }
      server = await ServeChild.start(withPassword.toString(), { LOG_LEVEL: 'info' })
      const base = server.url
      assert.equal((await call(base, 'GET', '/readyz')).status, 200)
      const token = await login(base, client)
      const made = await call(base, 'POST', '/v3/beneficiaries', { token, body: MARIO })
      assert.equal(made.status, 201, made.body)
      const id = Number(made.json!['id'])
      const read = await call(base, 'GET', `/v3/beneficiaries/${id}`, { token })
      assert.equal(read.status, 200)
      assert.equal(read.json!['last_name'], MARIO.last_name)
      const page = await call(base, 'GET', '/v3/beneficiaries?search=ross&per_page=5&sort=-id', {
        token,
      })
      assert.ok((page.json!['data'] as { id: number }[]).some((item) => item.id === id))
      const exit = await server.kill('SIGTERM')
      assert.equal(exit.code, 0)
      const logged = JSON.stringify(server.lines) + server.stderr
      assert.doesNotMatch(logged, /not-a-real-password-9f2/)
      assert.ok(
        server.lines.some((line) => /per instance/.test(String(line['msg']))),
        'a warning that limits are per instance',
      )
    },
  )
})
