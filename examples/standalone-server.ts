/**
 * Starting the HTTP server from code rather than the CLI: a chosen transport, custom limits and
 * base path, then a graceful stop.
 *
 *   node dist/examples/standalone-server.js [uws|node]
 *   PORT=8081 node dist/examples/standalone-server.js node
 *
 * It serves on 127.0.0.1, on port PORT (default 0: any free one), makes a few real requests to
 * itself, prints them, and stops; the process exits at once, no connection left open. Exit code
 * 1 if any answer is not what the API promises, 2 for a PORT that is not a port number.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createBeneficiaryService } from 'beneficiary-service'
import { openSqliteStorage } from 'beneficiary-service/sqlite'
import { startServer } from 'beneficiary-service/server'

const transport = process.argv[2] === 'node' ? 'node' : 'uws'
const port = Number(process.env['PORT'] ?? '0')
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  console.error('PORT must be a port number from 0 (any free one) to 65535')
  process.exit(2)
}
const folder = await mkdtemp(join(tmpdir(), 'standalone-'))
const storage = await openSqliteStorage({ path: join(folder, 'beneficiaries.sqlite') })
const basePath = '/api/v3'
const service = await createBeneficiaryService({
  storage,
  basePath,
  limits: { standard: 300, write: 30, auth: 10 },
})
const server = await startServer({ service, transport, basePath, host: '127.0.0.1', port })
console.log(`serving ${basePath} over ${server.transport} at ${server.url}`)

try {
  const health = await fetch(`${server.url}/healthz`)
  assert.equal(health.status, 200)

  const client = await service.clients.create({ name: 'example', scopes: ['read', 'write'] })
  const login = await fetch(`${server.url}${basePath}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_id: client.client_id, client_secret: client.client_secret }),
  })
  assert.equal(login.status, 200)
  assert.equal(login.headers.get('ratelimit-policy'), '"auth";q=10;w=60')
  const { access_token } = (await login.json()) as { access_token: string }
  const headers = { authorization: `Bearer ${access_token}`, 'content-type': 'application/json' }

  const created = await fetch(`${server.url}${basePath}/beneficiaries`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.org' }),
  })
  assert.equal(created.status, 201)
  console.log(`POST ${basePath}/beneficiaries -> ${created.status} ${await created.text()}`)

  const list = await fetch(`${server.url}${basePath}/beneficiaries?per_page=5`, { headers })
  const page = (await list.json()) as { meta: { total_count: number }; links: { first: string } }
  assert.equal(page.meta.total_count, 1)
  assert.equal(page.links.first, `${basePath}/beneficiaries?page=1&per_page=5`)
  console.log(
    `GET ${basePath}/beneficiaries -> ${list.status}, limit ${list.headers.get('ratelimit')}`,
  )
} finally {
  // Stop accepting, let requests in flight finish (at most 5 s), then close the database.
  await server.close(5_000)
  await storage.close()
  await rm(folder, { recursive: true, force: true })
}
console.log('standalone-server: ok')
