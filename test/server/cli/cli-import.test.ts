import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { openSqliteStorage } from '../../../adapters/sqlite/index.js'
import { cli } from '../../support/cli-in-process.js'
import {
  createTestDatabase,
  postgresSkip,
  type TestDatabase,
} from '../../support/postgres-database.js'
import { createTestHandler, login, MARIO, send } from '../server-fixtures.js'

const dir = mkdtempSync(join(tmpdir(), 'cli-import-'))
after(() => rmSync(dir, { recursive: true, force: true }))

let files = 0
function file(name: string, content: string | Buffer): string {
  const path = join(dir, `${++files}-${name}`)
  writeFileSync(path, content)
  return path
}

interface Outcome {
  row: number
  outcome: 'created' | 'existing' | 'refused'
  id?: number
  error?: { error: string; message: string; code: number; details?: unknown[] }
}

function outcomes(text: string): Outcome[] {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Outcome)
}

const MARIO_NDJSON = JSON.stringify(MARIO)

/**
 * Twenty kinds of bad rows, each a body a POST refuses, and one good row before them whose
 * fiscal code the last one repeats.
 */
const BAD_BODIES: readonly unknown[] = [
  { last_name: 'Rossi', email: 'a@example.org' },
  { first_name: 'Anna', last_name: 'Rossi' },
  { first_name: 'Anna', last_name: '', email: 'a@example.org' },
  { first_name: 'A'.repeat(101), last_name: 'Rossi', email: 'a@example.org' },
  { first_name: 'Anna', last_name: 'Rossi', email: 'no-at-sign' },
  { first_name: 'Anna', last_name: 'Rossi', email: `${'a'.repeat(250)}@example.org` },
  { first_name: 'Anna', last_name: 'Rossi', email: 'a@example.org', phone: 'call me' },
  { first_name: 'Anna', last_name: 'Rossi', email: 'a@example.org', phone: '123' },
  { first_name: 'Anna', last_name: 'Rossi', email: 'a@example.org', date_of_birth: '2023-02-30' },
  { first_name: 'Anna', last_name: 'Rossi', email: 'a@example.org', date_of_birth: '2999-01-01' },
  { first_name: 'Anna', last_name: 'Rossi', email: 'a@example.org', date_of_birth: '1899-12-31' },
  {
    first_name: 'Anna',
    last_name: 'Rossi',
    email: 'a@example.org',
    fiscal_code: 'RSSMRA85T10A562T',
  },
  { ...MARIO, email: 'b@example.org', date_of_birth: '1985-12-11' },
  {
    first_name: 'Anna',
    last_name: 'Rossi',
    email: 'a@example.org',
    address: { street: 'Via Roma 1', postal_code: '56100', country: 'IT' },
  },
  {
    first_name: 'Anna',
    last_name: 'Rossi',
    email: 'a@example.org',
    address: { street: 'Via Roma 1', city: 'Pisa', postal_code: '56100', country: 'XX' },
  },
  { first_name: 'Anna', last_name: 'Rossi', email: 'a@example.org', metadata: { a: { b: 1 } } },
  { first_name: 'Anna', last_name: 'Rossi', email: 'a@example.org', nickname: 'Annie' },
  { first_name: 'Anna', last_name: 'Rossi', email: 'a@example.org', status: 'active' },
  { first_name: 'Anna\u0007', last_name: 'Rossi', email: 'a@example.org' },
  { ...MARIO, email: 'c@example.org' },
]

describe('beneficiaries import (D39)', () => {
  it('reads a semicolon CSV with a BOM, quotes and line breaks, and writes history', async () => {
    const db = join(dir, 'csv.sqlite')
    const csv = file(
      'excel.csv',
      '\uFEFFfirst_name;last_name;email;phone;address.street;address.city;address.postal_code;address.country;metadata\r\n' +
        'Maria;Rossi;maria@example.org;+39 333 1234567;"Via Roma 1; interno 2";Pisa;56100;it;"{""source"":""roster"",""n"":3}"\r\n' +
        '"Anna\r\nMaria";Verdi;anna@example.org;;;;;;\r\n',
    )
    const run = await cli(['import', '--file', csv, '--db', db])
    assert.equal(run.status, 0, run.err)
    const rows = outcomes(run.out)
    assert.deepEqual(
      rows.map((row) => [row.row, row.outcome]),
      [
        [1, 'created'],
        [2, 'refused'],
      ],
    )
    // A line break within a name is a control character, refused as a POST refuses it (D8).
    assert.deepEqual(rows[1]!.error!.details, [
      { field: 'first_name', message: 'must not contain control characters' },
    ])
    const storage = await openSqliteStorage({ path: db })
    try {
      const record = await storage.beneficiaries.get(rows[0]!.id!)
      assert.equal(record?.address?.street, 'Via Roma 1; interno 2')
      assert.equal(record?.address?.country, 'IT')
      assert.equal(record?.phone, '+393331234567')
      assert.deepEqual(record?.metadata, { source: 'roster', n: 3 })
      const history = await storage.beneficiaries.history(rows[0]!.id!, 0, 10)
      assert.equal(history?.items.length, 1)
      assert.equal(history?.items[0]?.action, 'created')
      assert.equal(history?.items[0]?.client_id, 'import')
    } finally {
      await storage.close()
    }
  })

  it('reports every bad row with the details a POST gives, and creates every good one', async () => {
    const { handler, writer } = await createTestHandler()
    const { access } = await login(handler, writer)
    const posted = []
    await send(handler, 'POST', '/v3/beneficiaries', { token: access, body: MARIO })
    for (const body of BAD_BODIES) {
      const answer = await send(handler, 'POST', '/v3/beneficiaries', { token: access, body })
      assert.equal(answer.status, 422, JSON.stringify(body))
      const error = { ...answer.json! }
      delete error['request_id']
      posted.push(error)
    }
    const lines = [MARIO_NDJSON]
    for (let i = 0; i < BAD_BODIES.length; i++) {
      lines.push(JSON.stringify(BAD_BODIES[i]))
      for (let good = 0; good < 4; good++) {
        lines.push(
          JSON.stringify({
            first_name: 'Good',
            last_name: `Row ${i}-${good}`,
            email: `g${i}.${good}@example.org`,
          }),
        )
      }
    }
    lines.push('not json', '[1, 2]', '{"first_name":"A","first_name":"B"}')
    const report = join(dir, 'bad.report.ndjson')
    const run = await cli([
      'import',
      '--file',
      file('bad.ndjson', lines.join('\n')),
      '--report',
      report,
      '--db',
      join(dir, 'bad.sqlite'),
    ])
    assert.equal(run.status, 0, run.err)
    const summary = JSON.parse(run.out) as Record<string, unknown>
    assert.equal(summary['created'], 1 + BAD_BODIES.length * 4)
    assert.equal(summary['refused'], BAD_BODIES.length + 3)
    const rows = outcomes(readFileSync(report, 'utf8'))
    assert.equal(rows.length, lines.length)
    const refused = rows.filter((row) => row.outcome === 'refused')
    assert.deepEqual(
      refused.slice(0, BAD_BODIES.length).map((row) => row.error),
      posted,
    )
    assert.deepEqual(
      refused.slice(BAD_BODIES.length).map((row) => [row.row, row.error!.error, row.error!.code]),
      [
        [lines.length - 2, 'bad_request', 400],
        [lines.length - 1, 'bad_request', 400],
        [lines.length, 'bad_request', 400],
      ],
    )
  })

  it('creates nothing the second time the same file is imported', async () => {
    const db = join(dir, 'twice.sqlite')
    const ndjson = file(
      'twice.ndjson',
      Array.from({ length: 50 }, (_, i) =>
        JSON.stringify({ first_name: 'Twice', last_name: `N${i}`, email: `t${i}@example.org` }),
      ).join('\n'),
    )
    const first = await cli(['import', '--file', ndjson, '--db', db, '--batch-size', '7'])
    const second = await cli(['import', '--file', ndjson, '--db', db])
    const before = outcomes(first.out)
    const again = outcomes(second.out)
    assert.equal(before.filter((row) => row.outcome === 'created').length, 50)
    assert.deepEqual(
      again.map((row) => [row.row, row.outcome, row.id]),
      before.map((row) => [row.row, 'existing', row.id]),
    )
    const storage = await openSqliteStorage({ path: db })
    try {
      const page = await storage.beneficiaries.list({
        offset: 0,
        limit: 100,
        sort: 'id',
        descending: false,
      })
      assert.equal(page.total, 50)
    } finally {
      await storage.close()
    }
  })

  it('refuses a file with an unknown column, or not UTF-8, as a whole, naming why', async () => {
    const db = join(dir, 'refused.sqlite')
    const unknown = await cli([
      'import',
      '--file',
      file('unknown.csv', 'first_name,last_name,e_mail\nA,B,a@example.org\n'),
      '--db',
      db,
    ])
    assert.equal(unknown.status, 1)
    assert.match(unknown.err, /unknown column "e_mail"/)
    const latin1 = await cli([
      'import',
      '--file',
      file(
        'latin1.csv',
        Buffer.from('first_name,last_name,email\nJos\xe9,B,a@example.org\n', 'latin1'),
      ),
      '--db',
      db,
    ])
    assert.equal(latin1.status, 1)
    assert.match(latin1.err, /not UTF-8/)
    const usage = await cli(['import', '--db', db])
    assert.equal(usage.status, 2)
  })

  it('imports an export with --ignore-assigned, and refuses its assigned fields without', async () => {
    const db = join(dir, 'assigned.sqlite')
    const row = JSON.stringify({
      ...MARIO,
      id: 7,
      status: 'active',
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
    })
    const path = file('assigned.ndjson', `${row}\n`)
    const refused = outcomes((await cli(['import', '--file', path, '--db', db])).out)
    assert.deepEqual(
      refused[0]!.error!.details,
      ['id', 'status', 'created_at', 'updated_at'].map((field) => ({
        field,
        message: 'is read-only',
      })),
    )
    const taken = outcomes(
      (await cli(['import', '--file', path, '--db', db, '--ignore-assigned'])).out,
    )
    assert.equal(taken[0]!.outcome, 'created')
  })
})

describe('beneficiaries import on PostgreSQL (D39)', async () => {
  const skip = await postgresSkip()
  let database: TestDatabase | undefined
  after(async () => {
    await database?.drop()
  })

  it('creates every valid row once, and nothing the second time', { skip }, async () => {
    database = await createTestDatabase('cli_import')
    const csv = file(
      'pg.csv',
      'first_name,last_name,email,fiscal_code,date_of_birth\n' +
        Array.from({ length: 30 }, (_, i) => `Pg,Row ${i},p${i}@example.org,,`).join('\n') +
        '\nMario,Rossi,m@example.org,RSSMRA85T10A562S,1985-12-10\nMario,Rossi,n@example.org,RSSMRA85T10A562S,\n',
    )
    const first = outcomes(
      (await cli(['import', '--file', csv, '--database-url', database.url])).out,
    )
    assert.equal(first.filter((row) => row.outcome === 'created').length, 31)
    assert.deepEqual(first.at(-1)!.error!.details, [
      { field: 'fiscal_code', message: 'is already registered to another beneficiary' },
    ])
    const second = outcomes(
      (await cli(['import', '--file', csv, '--database-url', database.url])).out,
    )
    assert.equal(second.filter((row) => row.outcome === 'existing').length, 31)
    assert.equal(second.filter((row) => row.outcome === 'created').length, 0)
  })
})
