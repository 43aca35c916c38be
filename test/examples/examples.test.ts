import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { createServer, type AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { after, describe, it } from 'node:test'
import { startServer } from '../../server/start-server.js'
import { createWorld, MARIO } from '../server/server-fixtures.js'
import {
  createTestDatabase,
  postgresSkip,
  type TestDatabase,
} from '../support/postgres-database.js'
import { skipOn } from '../support/transports.js'

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

/** A port nothing listens on right now. */
async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1')
  await once(probe, 'listening')
  const { port } = probe.address() as AddressInfo
  await new Promise((resolve) => probe.close(resolve))
  return port
}

/**
 * Runs an example to its exit and tells how long it lived after printing `mark`: what
 * `execFile` cannot, since it reports only once the output is closed.
 */
async function runUntilExit(
  args: string[],
  extraEnv: Record<string, string>,
  mark?: string,
): Promise<{ code: number | null; stdout: string; stderr: string; lingerMs: number }> {
  const env: Record<string, string | undefined> = { ...process.env, ...extraEnv }
  delete env['NODE_TEST_CONTEXT']
  const child = spawn(process.execPath, args, { env, timeout: 60_000 })
  let stdout = ''
  let stderr = ''
  let markedAt: number | undefined
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk
    if (mark !== undefined && markedAt === undefined && stdout.includes(mark)) {
      markedAt = performance.now()
    }
  })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  // 'close', not 'exit': by then all of the output has been read.
  const [code] = (await once(child, 'close')) as [number | null]
  const lingerMs = markedAt === undefined ? Infinity : performance.now() - markedAt
  return { code, stdout, stderr, lingerMs }
}

describe('examples run as docs/embedding.md shows them', () => {
  it('embed-in-process walks the whole life cycle against SQLite', async () => {
    const out = await runExample([example('embed-in-process.js')])
    assert.match(out, /created #1 Maria Rossi \(pending\)/)
    assert.match(out, /history: .* status_changed \(status, reason\)/)
    assert.match(out, /embed-in-process: ok$/m)
  })

  for (const [transport, chosen] of [
    ['uws', true],
    ['node', false],
  ] as const) {
    const title = `standalone-server serves on ${chosen ? 'the PORT given' : 'a free port'}, answers, stops and exits at once over ${transport}`
    it(title, { skip: skipOn(transport) }, async () => {
      const port = chosen ? await freePort() : undefined
      const env: Record<string, string> = port === undefined ? {} : { PORT: String(port) }
      const { stdout, lingerMs } = await runUntilExit(
        [example('standalone-server.js'), transport],
        env,
        'standalone-server: ok',
      )
      assert.match(
        stdout,
        new RegExp(`over ${transport} at http://127\\.0\\.0\\.1:${port ?? '\\d+'}\\n`),
      )
      assert.match(stdout, /standalone-server: ok$/m)
      // No connection left open holds the process (uWS kept idle ones for seconds).
      assert.ok(lingerMs < 1_000, `the process exited ${Math.round(lingerMs)} ms after ok`)
    })
  }

  it('standalone-server refuses a PORT that is not a port number', async () => {
    const { code, stderr } = await runUntilExit([example('standalone-server.js'), 'node'], {
      PORT: '80a',
    })
    assert.equal(code, 2)
    assert.match(stderr, /PORT must be a port number/)
  })

  it('testing-with-fake-clock passes its own node:test suite', async () => {
    const out = await runExample([
      '--test',
      '--test-reporter=tap',
      example('testing-with-fake-clock.test.js'),
    ])
    assert.match(out, /# pass 2/)
    assert.match(out, /# fail 0/)
  })

  it('http-client pages through the standalone server on the port asked for and waits out a real 429', async () => {
    const port = await freePort()
    const out = await runExample([example('http-client/main.js'), '--port', String(port)])
    assert.match(out, new RegExp(`serving on http://127\\.0\\.0\\.1:${port}$`, 'm'))
    assert.match(out, /paged through 155 beneficiaries; waited out [1-9]\d* 429\(s\)/)
    assert.match(out, /http-client: ok$/m)
  })

  it('http-client pages through a server already running when given ORIGIN', async () => {
    const world = await createWorld()
    const server = await startServer({ service: world.service, transport: 'node', port: 0 })
    try {
      const { value: tokens } = await world.service.login(
        {},
        { client_id: world.writer.client_id, client_secret: world.writer.client_secret },
      )
      for (let i = 0; i < 12; i++) {
        const email = `origin${i}@example.org`
        await world.service.create(
          { token: tokens.access_token },
          { ...MARIO, fiscal_code: null, email },
        )
      }
      const out = await runExample([example('http-client/main.js')], {
        ORIGIN: server.url,
        CLIENT_ID: world.reader.client_id,
        CLIENT_SECRET: world.reader.client_secret,
      })
      assert.match(out, /paged through 12 beneficiaries; waited out 0 429\(s\)/)
      assert.match(out, /http-client: ok$/m)
    } finally {
      await server.close(1_000)
    }
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
