import assert from 'node:assert/strict'
import { after, before, beforeEach, describe, it } from 'node:test'
import {
  openPostgresStorage,
  type PostgresPool,
  type PostgresStorage,
} from '../../../adapters/postgres/index.js'
import { StorageUnavailableError } from '../../../core/errors.js'
import type { CreateOutcome, NewBeneficiary } from '../../../core/ports/beneficiary-store.js'
import {
  claim,
  clientRecord,
  createdEntry,
  createdRecord,
  isFiscalCodeConflict,
  listQuery,
  newBeneficiary,
  SECOND,
  sessionRecord,
  T0,
} from '../../contracts/storage-fixtures.js'
import { ServerMetrics } from '../../../server/metrics/server-metrics.js'
import { postgresSkipReason, useTestSchema } from '../../support/postgres.js'
import { parsePrometheusText, sampleValue } from '../../support/prometheus-text.js'

const skip = (await postgresSkipReason()) ?? false

describe('PostgreSQL: calls made together are batched', { skip }, () => {
  const test = useTestSchema('batching')
  /** The text of every statement the storage sent, from the last `beforeEach` on. */
  let sent: string[] = []
  /** When set, a batch of creates fails with a driver error of this code, before it is sent. */
  let failBatchWith: string | undefined
  let storage: PostgresStorage

  before(async () => {
    const pool = test.newPool()
    const recording: PostgresPool = {
      query: (config) => {
        sent.push(config.text)
        if (failBatchWith !== undefined && config.text.includes('json_to_recordset')) {
          const error = Object.assign(new Error('refused by the test'), { code: failBatchWith })
          return Promise.reject(error)
        }
        return (pool as unknown as PostgresPool).query(config)
      },
      connect: () => pool.connect(),
      end: () => Promise.resolve(),
    }
    storage = await openPostgresStorage({ pool: recording, schema: test.schema })
    await storage.clients.insert(clientRecord())
  })
  after(() => storage.close())
  beforeEach(() => {
    sent = []
    failBatchWith = undefined
  })

  const batches = (marker: string): number => sent.filter((text) => text.includes(marker)).length
  let serial = 0
  /** A record with a fiscal code of its own (or the one given). */
  const someone = (overrides: Partial<NewBeneficiary> = {}): NewBeneficiary => {
    serial++
    return newBeneficiary({
      first_name: `Anna${serial}`,
      last_name: serial % 2 === 0 ? 'Verdi' : 'Bruni',
      email: `anna${serial}@example.org`,
      fiscal_code: `FC${String(serial).padStart(14, '0')}`,
      status: (['pending', 'active', 'inactive'] as const)[serial % 3]!,
      ...overrides,
    })
  }
  const create = (record: NewBeneficiary, key?: string, now = T0): Promise<CreateOutcome> =>
    storage.beneficiaries.create(
      record,
      createdEntry(record),
      key === undefined ? undefined : claim({ key, now, expiresAt: now + 60 * SECOND }),
    )

  it('writes creates made at once in one statement: each its record, entry, claim and counts', async () => {
    const before = (await storage.beneficiaries.list(listQuery())).total
    const records = Array.from({ length: 20 }, () => someone())
    const keyOf = (i: number): string | undefined => (i % 2 === 0 ? `many-${i}` : undefined)
    const outcomes = await Promise.all(records.map((record, i) => create(record, keyOf(i))))
    assert.equal(batches('json_to_recordset'), 1, 'one batch statement')
    const created = outcomes.map(createdRecord)
    assert.equal(new Set(created.map((record) => record.id)).size, 20)
    for (const [i, record] of created.entries()) {
      assert.deepEqual(await storage.beneficiaries.get(record.id), record)
      assert.equal(record.first_name, records[i]!.first_name)
      const history = await storage.beneficiaries.history(record.id, 0, 10)
      assert.deepEqual(history?.items, [createdEntry(records[i]!)])
    }
    const page = await storage.beneficiaries.list(listQuery())
    assert.equal(page.total, before + 20)
    for (const status of ['pending', 'active', 'inactive'] as const) {
      const counted = await storage.beneficiaries.list(listQuery({ status }))
      const scanned = page.items.filter((item) => item.status === status).length
      assert.equal(counted.total, scanned, `the ${status} total`)
    }
    // A replay of one of the claimed keys answers with the record the batch made.
    const replay = await create(records[0]!, keyOf(0))
    assert.deepEqual(replay, {
      kind: 'claimed',
      fingerprint: 'fingerprint-1',
      beneficiaryId: created[0]!.id,
      createdAt: created[0]!.created_at,
    })
  })

  it('tells the metrics how many calls each batch carried, by kind', async () => {
    const metrics = new ServerMetrics({ defaultMetrics: false })
    metrics.watchBatches(storage)
    await Promise.all([someone(), someone(), someone()].map((record) => create(record)))
    await create(someone())
    const families = parsePrometheusText(await metrics.scrape())
    const name = 'beneficiary_postgres_batch_calls'
    assert.equal(families.get(name)?.type, 'histogram')
    assert.equal(sampleValue(families, `${name}_count`, { kind: 'create' }), 2)
    assert.equal(sampleValue(families, `${name}_sum`, { kind: 'create' }), 4)
    assert.equal(sampleValue(families, `${name}_bucket`, { kind: 'create', le: '1' }), 1)
    assert.equal(sampleValue(families, `${name}_bucket`, { kind: 'create', le: '4' }), 2)
  })

  it('fails only the creates of a batch whose fiscal code is taken, the others are written', async () => {
    const taken = someone()
    await create(taken)
    const twin = someone()
    const records = [
      someone(),
      someone({ fiscal_code: taken.fiscal_code }),
      twin,
      someone({ fiscal_code: twin.fiscal_code }),
      someone(),
    ]
    const settled = await Promise.allSettled(records.map((record) => create(record)))
    assert.equal(batches('json_to_recordset'), 1, 'tried together first, then each alone')
    assert.equal(settled[0]!.status, 'fulfilled')
    assert.equal(settled[4]!.status, 'fulfilled')
    assert.equal(settled[1]!.status, 'rejected')
    if (settled[1]!.status === 'rejected') isFiscalCodeConflict(settled[1]!.reason)
    const twins = [settled[2]!, settled[3]!]
    assert.equal(twins.filter((s) => s.status === 'fulfilled').length, 1, 'one twin written')
    for (const s of twins) if (s.status === 'rejected') isFiscalCodeConflict(s.reason)
    const page = await storage.beneficiaries.list(
      listQuery({ search: [records[0]!.first_name.toLowerCase()] }),
    )
    assert.equal(page.total, 1)
  })

  it('fails the creates of a batch PostgreSQL could not take, without trying each alone', async () => {
    failBatchWith = 'ECONNREFUSED'
    const settled = await Promise.allSettled([someone(), someone()].map((r) => create(r)))
    for (const s of settled) {
      assert.equal(s.status, 'rejected')
      if (s.status === 'rejected') assert.ok(s.reason instanceof StorageUnavailableError)
    }
    assert.deepEqual(sent.length, 1, 'only the batch was sent')
  })

  it('runs each create of a batch alone after a deadlock with another batch', async () => {
    failBatchWith = '40P01'
    const outcomes = await Promise.all([someone(), someone()].map((r) => create(r)))
    assert.deepEqual(
      outcomes.map((outcome) => outcome.kind),
      ['created', 'created'],
    )
    assert.equal(sent.length, 3, 'the batch, then each alone')
  })

  it('writes one record for the creates of a batch that share an Idempotency-Key', async () => {
    const record = someone()
    const outcomes = await Promise.all(Array.from({ length: 6 }, () => create(record, 'shared')))
    const created = outcomes.filter((outcome) => outcome.kind === 'created')
    assert.equal(created.length, 1)
    const id = createdRecord(created[0]!).id
    for (const outcome of outcomes) {
      if (outcome.kind === 'claimed') assert.equal(outcome.beneficiaryId, id)
    }
    assert.equal(
      (await storage.beneficiaries.list(listQuery({ search: [record.first_name.toLowerCase()] })))
        .total,
      1,
    )
  })

  it('takes over a claim expired for every create of the batch, and keeps a live one', async () => {
    const first = someone()
    await create(first, 'expiring', T0)
    const live = someone()
    const liveId = createdRecord(await create(live, 'live', T0 + 100 * SECOND)).id
    const later = T0 + 90 * SECOND
    const [again, held, fresh] = await Promise.all([
      create(someone(), 'expiring', later),
      create(someone(), 'live', later),
      create(someone(), `fresh-${serial}`, later),
    ])
    assert.equal(again!.kind, 'created')
    assert.equal(held!.kind, 'claimed')
    if (held!.kind === 'claimed') assert.equal(held!.beneficiaryId, liveId)
    assert.equal(fresh!.kind, 'created')
    assert.equal(batches('json_to_recordset'), 1)
  })

  it('answers reads and token checks made at once in one statement each, per token', async () => {
    const record = createdRecord(await create(someone()))
    const missing = record.id + 10_000
    await storage.sessions.insert(sessionRecord({ id: 'live', refresh_token_hash: 'h-live' }))
    await storage.sessions.insert(sessionRecord({ id: 'ended', refresh_token_hash: 'h-ended' }))
    await storage.sessions.insert(sessionRecord({ id: 'spent', refresh_token_hash: 'h-spent' }))
    await storage.sessions.revoke('ended', T0)
    // Revokes the session `spent` and the token `revoked-jti`, whichever session it names.
    await storage.sessions.revoke('spent', T0, { jti: 'revoked-jti', expiresAt: T0 + 3600_000 })
    const cases = [
      { id: record.id, sessionId: 'live', jti: 'fine', active: true },
      { id: missing, sessionId: 'live', jti: 'fine-2', active: true },
      { id: record.id, sessionId: 'ended', jti: 'fine', active: false },
      { id: record.id, sessionId: 'unknown', jti: 'fine', active: false },
      { id: record.id, sessionId: 'live', jti: 'revoked-jti', active: false },
    ]
    sent = []
    const reads = await Promise.all(
      cases.map(({ id, sessionId, jti }) =>
        storage.beneficiaries.getForToken!(id, { sessionId, jti, clientId: 'client-1' }),
      ),
    )
    const checks = await Promise.all(
      cases.map(({ sessionId, jti }) => storage.sessions.isTokenActive(sessionId, jti, 'client-1')),
    )
    assert.equal(batches('unnest'), 2, 'one statement for the reads, one for the checks')
    assert.equal(sent.length, 2)
    cases.forEach(({ id, active }, i) => {
      assert.equal(checks[i], active, `check ${i}`)
      const read = reads[i]!
      assert.equal(read.active, active, `read ${i}`)
      if (read.active) {
        assert.deepEqual(read.record, id === record.id ? record : undefined, `record ${i}`)
      }
    })
  })
})
