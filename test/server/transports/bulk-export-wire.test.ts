import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { openSqliteStorage, type SqliteStorage } from '../../../adapters/sqlite/index.js'
import { createBeneficiaryService, type BeneficiaryService } from '../../../core/index.js'
import type { BeneficiaryRecord } from '../../../core/beneficiary.js'
import { EXPORT_PAGE } from '../../../core/bulk-operations.js'
import type { BulkStore, SnapshotFilter } from '../../../core/ports/bulk-store.js'
import { CSV_COLUMNS } from '../../../server/bulk/import-rows.js'
import { startServer } from '../../../server/start-server.js'
import { BeneficiaryClient } from '../../../client/index.js'
import { cli } from '../../support/cli-in-process.js'
import { skipOn, TRANSPORTS } from '../../support/transports.js'

const COUNT = 40_000
const dir = mkdtempSync(join(tmpdir(), 'export-wire-'))
const path = join(dir, 'export.sqlite')

/** A bulk store that counts the pages it handed out, and whether each snapshot was left. */
class CountingBulk implements BulkStore {
  pages = 0
  open = 0
  readonly #inner: BulkStore
  constructor(inner: BulkStore) {
    this.#inner = inner
  }
  async *snapshot(
    filter: SnapshotFilter,
    size: number,
  ): AsyncGenerator<readonly BeneficiaryRecord[]> {
    this.open++
    try {
      for await (const page of this.#inner.snapshot(filter, size)) {
        this.pages++
        yield page
      }
    } finally {
      this.open--
    }
  }
}

let storage: SqliteStorage
let counting: CountingBulk
let service: BeneficiaryService
let client: { client_id: string; client_secret: string }

before(async () => {
  const seeded = await cli(['seed', '--count', String(COUNT), '--db', path])
  assert.equal(seeded.status, 0, seeded.err)
  storage = await openSqliteStorage({ path })
  counting = new CountingBulk(storage.bulk)
  const wrapped = Object.create(storage) as SqliteStorage
  Object.defineProperty(wrapped, 'bulk', { value: counting })
  service = await createBeneficiaryService({
    storage: wrapped,
    limits: { auth: 100, write: 100, standard: 100, bulk: 5 },
  })
  client = await service.clients.create({ name: 'exports', scopes: ['read'] })
})

after(async () => {
  await storage.close()
  rmSync(dir, { recursive: true, force: true })
})

async function token(url: string): Promise<string> {
  const answer = await fetch(`${url}/v3/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(client),
  })
  return ((await answer.json()) as { access_token: string }).access_token
}

/** Sends a GET on a bare socket and reads nothing until told: a reader that stalls. */
function stalledReader(port: number, target: string, bearer: string) {
  const socket = connect(port, '127.0.0.1')
  socket.pause()
  socket.write(`GET ${target} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${bearer}\r\n\r\n`)
  return socket
}

async function waitFor(check: () => boolean, ms = 5_000): Promise<void> {
  const until = Date.now() + ms
  while (!check()) {
    if (Date.now() > until) throw new Error('timed out waiting')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

for (const transport of TRANSPORTS) {
  describe(
    `GET /v3/beneficiaries/export over ${transport} (D39)`,
    { skip: skipOn(transport) },
    () => {
      it('streams every record as NDJSON and CSV, limited by the bulk class', async () => {
        const server = await startServer({ service, transport, port: 0 })
        try {
          client = await service.clients.create({ name: `exports ${transport}`, scopes: ['read'] })
          const bearer = await token(server.url)
          const headers = { authorization: `Bearer ${bearer}` }
          const ndjson = await fetch(`${server.url}/v3/beneficiaries/export`, { headers })
          assert.equal(ndjson.status, 200)
          assert.equal(ndjson.headers.get('content-type'), 'application/x-ndjson; charset=utf-8')
          assert.equal(ndjson.headers.get('ratelimit-policy'), '"bulk";q=5;w=60')
          const lines = (await ndjson.text()).split('\n').filter((line) => line !== '')
          assert.equal(lines.length, COUNT)
          const ids = lines.map((line) => (JSON.parse(line) as { id: number }).id)
          assert.ok(ids.every((id, i) => i === 0 || id > ids[i - 1]!))
          const csv = await fetch(
            `${server.url}/v3/beneficiaries/export?format=csv&status=active`,
            {
              headers,
            },
          )
          assert.equal(csv.status, 200)
          const rows = (await csv.text()).split('\n')
          assert.equal(rows[0], CSV_COLUMNS.join(','))
          const bad = await fetch(
            `${server.url}/v3/beneficiaries/export?format=xml&status=asleep`,
            {
              headers,
            },
          )
          assert.equal(bad.status, 422)
          const body = (await bad.json()) as { details: { field: string }[] }
          assert.deepEqual(
            body.details.map((detail) => detail.field),
            ['format', 'status'],
          )
          const head = await fetch(`${server.url}/v3/beneficiaries/export`, {
            method: 'HEAD',
            headers,
          })
          assert.equal(head.status, 200)
          assert.equal((await head.text()).length, 0)
          // The typed client reads the stream record by record.
          const typed = new BeneficiaryClient({
            baseUrl: `${server.url}/v3`,
            credentials: { clientId: client.client_id, clientSecret: client.client_secret },
          })
          let taken = 0
          for await (const record of typed.exportRecords({ status: 'inactive' })) {
            assert.equal(record.status, 'inactive')
            taken++
          }
          assert.equal(
            taken,
            lines.filter((line) => (JSON.parse(line) as { status: string }).status === 'inactive')
              .length,
          )
          const limited = await fetch(`${server.url}/v3/beneficiaries/export`, { headers })
          assert.equal(limited.status, 429)
          // Other classes are untouched by the bulk one.
          const list = await fetch(`${server.url}/v3/beneficiaries?per_page=1`, { headers })
          assert.equal(list.status, 200)
          await waitFor(() => counting.open === 0)
        } finally {
          await server.close()
        }
      })

      it('takes an import file past the JSON body cap, up to its own', async () => {
        const server = await startServer({ service, transport, port: 0, importMaxBytes: 4 << 20 })
        try {
          client = await service.clients.create({ name: `upload ${transport}`, scopes: ['write'] })
          const headers = { authorization: `Bearer ${await token(server.url)}` }
          const line = JSON.stringify({
            first_name: 'Big',
            last_name: 'File',
            email: 'b@example.org',
          })
          const file = `${line}\n`.repeat(Math.ceil((3 << 20) / (line.length + 1)))
          const big = await fetch(`${server.url}/v3/imports`, {
            method: 'POST',
            headers: { ...headers, 'content-type': 'application/x-ndjson' },
            body: file,
          })
          assert.equal(big.status, 202)
          const tooBig = await fetch(`${server.url}/v3/imports`, {
            method: 'POST',
            headers: { ...headers, 'content-type': 'application/x-ndjson' },
            body: file + file,
          })
          assert.equal(tooBig.status, 413)
          const json = await fetch(`${server.url}/v3/beneficiaries`, {
            method: 'POST',
            headers: { ...headers, 'content-type': 'application/json' },
            body: JSON.stringify({ first_name: 'x'.repeat(2 << 20) }),
          })
          assert.equal(json.status, 413)
        } finally {
          await server.close()
        }
      })

      it('reads no further than a stalled reader takes, and ends the snapshot when it leaves', async () => {
        const server = await startServer({ service, transport, port: 0 })
        try {
          client = await service.clients.create({ name: `slow ${transport}`, scopes: ['read'] })
          const bearer = await token(server.url)
          const before = counting.pages
          const socket = stalledReader(server.port, '/v3/beneficiaries/export', bearer)
          await waitFor(() => counting.pages > before)
          await new Promise((resolve) => setTimeout(resolve, 1_000))
          const read = counting.pages - before
          const total = Math.ceil(COUNT / EXPORT_PAGE)
          assert.ok(
            read < total / 2,
            `${read} of ${total} pages read for a reader that took nothing`,
          )
          assert.equal(counting.open, 1)
          socket.destroy()
          await waitFor(() => counting.open === 0)
        } finally {
          await server.close()
        }
      })
    },
  )
}
