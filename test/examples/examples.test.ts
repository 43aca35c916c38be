import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { after, describe, it } from 'node:test'
import {
  createTestDatabase,
  postgresSkip,
  type TestDatabase,
} from '../support/postgres-database.js'

const run = promisify(execFile)
const example = (path: string) => fileURLToPath(new URL(`../../examples/${path}`, import.meta.url))

/** Runs an example as a user would and returns what it printed; a non-zero exit fails the test. */
async function runExample(args: string[], extraEnv: Record<string, string> = {}): Promise<string> {
  // Without this, a nested `node --test` would report to this runner instead of printing.
  const env: Record<string, string | undefined> = { ...process.env, ...extraEnv }
  delete env['NODE_TEST_CONTEXT']
  const { stdout } = await run(process.execPath, args, { timeout: 60_000, env })
  return stdout
}

describe('examples run as the README shows them', () => {
  it('embed-in-process walks the whole life cycle against SQLite', async () => {
    const out = await runExample([example('embed-in-process.js')])
    assert.match(out, /created #1 Maria Rossi \(pending\)/)
    assert.match(out, /history: .* status_changed \(status, reason\)/)
    assert.match(out, /embed-in-process: ok$/m)
  })

  for (const transport of ['uws', 'node']) {
    it(`standalone-server starts, answers and stops over ${transport}`, async () => {
      const out = await runExample([example('standalone-server.js'), transport])
      assert.match(out, new RegExp(`over ${transport} at http://127\\.0\\.0\\.1:\\d+`))
      assert.match(out, /standalone-server: ok$/m)
    })
  }

  it('testing-with-fake-clock passes its own node:test suite', async () => {
    const out = await runExample([
      '--test',
      '--test-reporter=tap',
      example('testing-with-fake-clock.test.js'),
    ])
    assert.match(out, /# pass 2/)
    assert.match(out, /# fail 0/)
  })

  it('http-client pages through the standalone server and waits out a real 429', async () => {
    const out = await runExample([example('http-client/main.js')])
    assert.match(out, /paged through 155 beneficiaries; waited out [1-9]\d* 429\(s\)/)
    assert.match(out, /http-client: ok$/m)
  })
})

describe('the PostgreSQL example', async () => {
  const skip = await postgresSkip()
  let database: TestDatabase | undefined
  after(() => database?.drop())

  it(
    'runs two instances on one database: read, search and logout hold across them',
    { skip },
    async () => {
      database = await createTestDatabase('example_pg')
      const out = await runExample([example('postgres/main.js')], { DATABASE_URL: database.url })
      assert.match(out, /read and found by "nguyen \w+" on instance B/)
      assert.match(out, /postgres: ok$/m)
    },
  )
})
