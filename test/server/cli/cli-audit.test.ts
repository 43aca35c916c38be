import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { openSqliteStorage } from '../../../adapters/sqlite/index.js'
import { createBeneficiaryService, FakeClock } from '../../../core/index.js'
import type { CliIo } from '../../../server/cli/cli-io.js'
import { runCli } from '../../../server/cli/run-cli.js'
import { cli } from '../../support/cli-in-process.js'

const T0 = Date.UTC(2026, 10, 2, 9, 0, 0)
const DAY = 86_400_000

let directory: string
let db: string
let ids: number[]
let readerId: string

before(async () => {
  directory = mkdtempSync(join(tmpdir(), 'beneficiaries-audit-'))
  db = join(directory, 'audit.db')
  const storage = await openSqliteStorage({ path: db })
  const clock = new FakeClock(T0)
  const service = await createBeneficiaryService({ storage, clock })
  const writer = await service.clients.create({ name: 'w', scopes: ['read', 'write'] })
  const reader = await service.clients.create({ name: 'r', scopes: ['read'] })
  readerId = reader.client_id
  const token = async (client: typeof writer) =>
    (await service.login({ ip: '127.0.0.1' }, client)).value.access_token
  const write = await token(writer)
  const read = await token(reader)
  ids = []
  for (const last_name of ['Rossi', 'Verdi', 'Bianchi']) {
    const created = await service.create(
      { token: write },
      { first_name: 'Anna', last_name, email: `${last_name.toLowerCase()}@example.org` },
    )
    ids.push(created.value.id)
  }
  await service.get({ token: read, purpose: 'day one' }, ids[0]!)
  clock.advance(DAY)
  await service.list({ token: await token(reader) }, { sort: 'id' })
  clock.advance(DAY)
  await service.get({ token: await token(writer) }, ids[1]!)
  await storage.close()
})
after(() => rmSync(directory, { recursive: true, force: true }))

describe('beneficiaries audit (D35, D36)', () => {
  const lines = (out: string) =>
    out
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>)

  it('writes the whole log as NDJSON, oldest first, ids only', async () => {
    const run = await cli(['audit', '--db', db])
    assert.equal(run.status, 0, run.err)
    const entries = lines(run.out)
    assert.deepEqual(
      entries.map((e) => [e['operation'], e['beneficiary_ids'], e['purpose']]),
      [
        ['get', [ids[0]], 'day one'],
        ['list', ids, null],
        ['get', [ids[1]], null],
      ],
    )
    assert.equal(entries[0]!['at'], new Date(T0).toISOString())
    assert.ok(!run.out.includes('Anna') && !run.out.includes('Rossi'))
    // Not a terminal: no count on standard error.
    assert.equal(run.err, '')
  })

  it('filters by beneficiary, by client and by period', async () => {
    const by = async (...args: string[]) => lines((await cli(['audit', '--db', db, ...args])).out)
    assert.equal((await by('--beneficiary', String(ids[0]))).length, 2)
    assert.deepEqual(
      (await by('--client', readerId)).map((e) => e['operation']),
      ['get', 'list'],
    )
    const day = (n: number) => new Date(T0 + n * DAY).toISOString().slice(0, 10)
    assert.deepEqual(
      (await by('--from', day(1), '--to', day(1))).map((e) => e['operation']),
      ['list'],
    )
    assert.equal((await by('--from', new Date(T0 + 1).toISOString())).length, 2)
    const bad = await cli(['audit', '--db', db, '--from', 'yesterday'])
    assert.equal(bad.status, 2)
    assert.match(bad.err, /--from/)
  })

  it('counts the entries on a terminal', async () => {
    const drawn: string[] = []
    const out: string[] = []
    const io: CliIo = {
      env: {},
      out: (text) => void out.push(text),
      err: () => undefined,
      terminal: { write: (text) => void drawn.push(text), columns: 80 },
      signals: { once: () => undefined },
    }
    assert.equal(await runCli(['audit', '--db', db], io), 0)
    assert.equal(out.length, 3)
    assert.equal(drawn.at(-1), '\r3 entries written\n')
  })

  it('exports one person as one document, and records the export', async () => {
    const run = await cli(['audit', 'export', String(ids[0]), '--db', db, '--purpose', 'SAR 42'])
    assert.equal(run.status, 0, run.err)
    const exported = JSON.parse(run.out) as Record<string, unknown[] & Record<string, unknown>>
    assert.equal(exported['beneficiary']!['last_name'], 'Rossi')
    assert.deepEqual(
      exported['history']!.map((e) => (e as { action: string }).action),
      ['created'],
    )
    assert.deepEqual(
      exported['access_log']!.map((e) => (e as { operation: string }).operation),
      ['get', 'list'],
    )
    const last = lines((await cli(['audit', '--db', db, '--beneficiary', String(ids[0])])).out).at(
      -1,
    )
    assert.equal(last?.['operation'], 'export')
    assert.equal(last?.['client_id'], 'operator:cli')
    assert.equal(last?.['purpose'], 'SAR 42')
    const missing = await cli(['audit', 'export', '999999', '--db', db])
    assert.equal(missing.status, 1)
    assert.match(missing.err, /no beneficiary has the id 999999/)
  })
})
