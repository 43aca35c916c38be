/**
 * The typed client (`beneficiary-service/client`) against the standalone server, as a user
 * would run both: the CLI seeds a database, provisions a client and serves it; the client then
 * pages through every beneficiary. The server's standard limit is set low (30 a minute: 31
 * pages of 5 need one more), so paging meets a real 429 and the client waits out Retry-After
 * before it goes on. `--help` prints the usage below; `README.md` beside this file explains it.
 */
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs, promisify } from 'node:util'
import { pageThrough } from './page-through.js'

const USAGE = `Usage:
  node dist/examples/http-client/main.js [--port N]
      Seeds 155 beneficiaries into a temporary database, serves them on 127.0.0.1:N
      (default: PORT, else a free port) with a standard limit of 30 requests a minute, and
      pages through them with the typed client, waiting out the 429 it meets.

  ORIGIN=http://127.0.0.1:8080 CLIENT_ID=… CLIENT_SECRET=… node dist/examples/http-client/main.js
      Pages through a server you already run instead (BASE_PATH, default /v3, if it serves
      the API elsewhere). Credentials come from the environment, never from the command line.
`

const cli = fileURLToPath(new URL('../../server/cli.js', import.meta.url))
const run = promisify(execFile)

function chosenPort(): number | undefined {
  let parsed
  try {
    parsed = parseArgs({ options: { port: { type: 'string' }, help: { type: 'boolean' } } })
  } catch {
    process.stderr.write(USAGE)
    process.exit(2)
  }
  if (parsed.values.help === true) {
    process.stdout.write(USAGE)
    process.exit(0)
  }
  const text = parsed.values.port ?? process.env['PORT']
  if (text === undefined) return undefined
  const port = Number(text)
  if (!/^\d+$/.test(text) || port < 1 || port > 65_535) {
    process.stderr.write(`http-client: the port must be 1 to 65535, not ${text}\n\n${USAGE}`)
    process.exit(2)
  }
  return port
}

async function freePort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as { port: number }
  await new Promise((resolve) => probe.close(resolve))
  return port
}

async function demo(baseUrl: string, clientId: string, clientSecret: string, expected?: number) {
  const report = await pageThrough(
    { baseUrl, credentials: { clientId, clientSecret }, maxRetries: 5 },
    { per_page: 5, sort: 'last_name' },
    (line) => console.log(line),
  )
  console.log(`paged through ${report.count} beneficiaries; waited out ${report.waits} 429(s)`)
  if (expected !== undefined) {
    assert.equal(report.count, expected)
    assert.ok(report.waits >= 1, 'the low limit should have produced a 429')
  }
}

const port = chosenPort()
const origin = process.env['ORIGIN']
if (origin !== undefined) {
  const clientId = process.env['CLIENT_ID']
  const clientSecret = process.env['CLIENT_SECRET']
  if (clientId === undefined || clientSecret === undefined) {
    process.stderr.write(`http-client: ORIGIN needs CLIENT_ID and CLIENT_SECRET\n\n${USAGE}`)
    process.exit(2)
  }
  await demo(
    origin.replace(/\/+$/, '') + (process.env['BASE_PATH'] ?? '/v3'),
    clientId,
    clientSecret,
  )
} else {
  const folder = await mkdtemp(join(tmpdir(), 'http-client-'))
  const db = join(folder, 'beneficiaries.sqlite')
  await run(process.execPath, [cli, 'seed', '--count', '155', '--db', db])
  const { stdout } = await run(process.execPath, [
    cli,
    'clients',
    'create',
    '--name',
    'example',
    '--scopes',
    'read',
    '--db',
    db,
  ])
  const { client_id, client_secret } = JSON.parse(stdout) as {
    client_id: string
    client_secret: string
  }
  const listenPort = port ?? (await freePort())
  const server = spawn(
    process.execPath,
    [cli, 'serve', '--db', db, '--port', String(listenPort), '--transport', 'node'],
    {
      env: { ...process.env, RATE_LIMIT_STANDARD: '30', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  )
  const exited = new Promise<number | null>((resolve) => server.on('exit', (code) => resolve(code)))
  try {
    const serverOrigin = `http://127.0.0.1:${listenPort}`
    console.log(`serving on ${serverOrigin}`)
    for (let up = false; !up;) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      // A server that could not listen (the port taken) has exited: never page another one.
      if (server.exitCode !== null) throw new Error(`the server did not start on ${serverOrigin}`)
      up = await fetch(`${serverOrigin}/healthz`, { signal: AbortSignal.timeout(1_000) }).then(
        (r) => r.ok,
        () => false,
      )
    }
    await demo(`${serverOrigin}/v3`, client_id, client_secret, 155)
  } finally {
    if (server.exitCode === null) {
      server.kill('SIGTERM')
      assert.equal(await exited, 0, 'the server should stop gracefully on SIGTERM')
    }
    await rm(folder, { recursive: true, force: true })
  }
}
console.log('http-client: ok')
