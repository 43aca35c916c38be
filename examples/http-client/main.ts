/**
 * Runs `BeneficiaryClient` against the standalone server, as a user would: the CLI seeds a
 * database, provisions a client and serves it; the client then pages through every
 * beneficiary. The server's standard limit is set low (30 per minute: 31 pages of 5 need one more) so that paging runs into
 * a real 429 and the client waits out `Retry-After` before going on.
 *
 *   node dist/examples/http-client/main.js
 *
 * To point it at a server you already run instead:
 *   ORIGIN=http://127.0.0.1:8080 CLIENT_ID=… CLIENT_SECRET=… node dist/examples/http-client/main.js
 */
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { BeneficiaryClient } from './beneficiary-client.js'

const cli = fileURLToPath(new URL('../../server/cli.js', import.meta.url))
const run = promisify(execFile)

async function freePort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as { port: number }
  await new Promise((resolve) => probe.close(resolve))
  return port
}

async function demo(origin: string, clientId: string, clientSecret: string, expected?: number) {
  const client = new BeneficiaryClient({ origin, clientId, clientSecret })
  await client.login()
  let count = 0
  for await (const beneficiary of client.list({ per_page: '5', sort: 'last_name' })) {
    if (count % 10 === 0)
      console.log(`  #${beneficiary.id} ${beneficiary.last_name}, ${beneficiary.first_name}`)
    count++
  }
  console.log(`paged through ${count} beneficiaries; waited out ${client.stats.waits} 429(s)`)
  if (expected !== undefined) {
    assert.equal(count, expected)
    assert.ok(client.stats.waits >= 1, 'the low limit should have produced a 429')
  }
}

if (process.env['ORIGIN'] !== undefined) {
  await demo(
    process.env['ORIGIN'],
    process.env['CLIENT_ID'] ?? '',
    process.env['CLIENT_SECRET'] ?? '',
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
  const port = await freePort()
  const server = spawn(
    process.execPath,
    [cli, 'serve', '--db', db, '--port', String(port), '--transport', 'node'],
    {
      env: { ...process.env, RATE_LIMIT_STANDARD: '30', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  )
  const exited = new Promise<number | null>((resolve) => server.on('exit', (code) => resolve(code)))
  try {
    const origin = `http://127.0.0.1:${port}`
    for (let i = 0; i < 100; i++) {
      const up = await fetch(`${origin}/healthz`).then(
        (r) => r.ok,
        () => false,
      )
      if (up) break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    await demo(origin, client_id, client_secret, 155)
  } finally {
    server.kill('SIGTERM')
    assert.equal(await exited, 0, 'the server should stop gracefully on SIGTERM')
    await rm(folder, { recursive: true, force: true })
  }
}
console.log('http-client: ok')
