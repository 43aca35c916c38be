import assert from 'node:assert/strict'
import type {
  BeneficiaryRecord,
  BeneficiarySummary,
  FieldChange,
  HistoryAction,
  HistoryEntry,
} from '../../core/beneficiary.js'
import { ConflictError } from '../../core/errors.js'
import type { ClientRecord } from '../../core/ports/client-store.js'
import type {
  CreateOutcome,
  IdempotencyClaim,
  ListQuery,
  NewBeneficiary,
} from '../../core/ports/beneficiary-store.js'
import type { SessionRecord } from '../../core/ports/session-store.js'
import type { SigningKey } from '../../core/ports/signing-key-store.js'
import type { Storage } from '../../core/ports/storage.js'

/** A fixed instant the fixtures count from, so no test needs a clock. */
export const T0 = Date.UTC(2024, 2, 15, 9, 30, 0)

/** One second, in the fixtures' epoch milliseconds. */
export const SECOND = 1000

/** A valid record to insert; every optional field null. */
export function newBeneficiary(overrides: Partial<NewBeneficiary> = {}): NewBeneficiary {
  return {
    first_name: 'Mario',
    last_name: 'Rossi',
    email: 'mario.rossi@example.org',
    phone: null,
    date_of_birth: null,
    fiscal_code: null,
    address: null,
    metadata: {},
    status: 'pending',
    created_at: T0,
    updated_at: T0,
    ...overrides,
  }
}

/** A record with every optional field filled in. */
export function fullBeneficiary(overrides: Partial<NewBeneficiary> = {}): NewBeneficiary {
  return newBeneficiary({
    first_name: 'Giulia',
    last_name: 'Bianchi',
    email: 'Giulia.Bianchi@Example.org',
    phone: '+393331234567',
    date_of_birth: '1985-04-12',
    fiscal_code: 'BNCGLI85D52F205X',
    address: { street: 'Via Roma 1', city: 'Milano', postal_code: '20121', country: 'IT' },
    metadata: { source: 'web', campaign_id: 'spring-24', notes: 'prefers e-mail' },
    status: 'active',
    created_at: T0 + SECOND,
    updated_at: T0 + 2 * SECOND,
    ...overrides,
  })
}

/** A history entry by the client `client-1`. */
export function historyEntry(
  action: HistoryAction,
  at: number,
  changes: readonly FieldChange[] = [],
): HistoryEntry {
  return { at, action, client_id: 'client-1', request_id: `req-${action}-${at}`, changes }
}

/** The `created` entry of a record, listing two of its fields. */
export function createdEntry(record: NewBeneficiary): HistoryEntry {
  return historyEntry('created', record.created_at, [
    { field: 'first_name', old: null, new: record.first_name },
    { field: 'last_name', old: null, new: record.last_name },
  ])
}

/** A live idempotency claim of `client-1`, valid for a day from `now`. */
export function claim(overrides: Partial<IdempotencyClaim> = {}): IdempotencyClaim {
  return {
    clientId: 'client-1',
    key: 'key-1',
    fingerprint: 'fingerprint-1',
    expiresAt: T0 + 86_400 * SECOND,
    now: T0,
    ...overrides,
  }
}

/** A list query for the first 100 records in id order, without filters. */
export function listQuery(overrides: Partial<ListQuery> = {}): ListQuery {
  return { offset: 0, limit: 100, sort: 'id', descending: false, ...overrides }
}

/** The record of a `created` outcome; fails the test on any other outcome. */
export function createdRecord(outcome: CreateOutcome): BeneficiaryRecord {
  assert.equal(outcome.kind, 'created')
  if (outcome.kind !== 'created') throw new Error('unreachable')
  return outcome.record
}

/** Creates `record` with its `created` entry and returns what was stored. */
export async function insertBeneficiary(
  storage: Storage,
  record: NewBeneficiary = newBeneficiary(),
): Promise<BeneficiaryRecord> {
  return createdRecord(await storage.beneficiaries.create(record, createdEntry(record)))
}

/** The list-item columns of a record. */
export function summaryOf(record: BeneficiaryRecord): BeneficiarySummary {
  const { id, first_name, last_name, email, phone, status, created_at, updated_at } = record
  return { id, first_name, last_name, email, phone, status, created_at, updated_at }
}

/** `record` as the next version, with `changes` applied and `updated_at` moved to `at`. */
export function nextVersion(
  record: BeneficiaryRecord,
  changes: Partial<BeneficiaryRecord>,
  at: number,
): BeneficiaryRecord {
  return { ...record, ...changes, updated_at: at, version: record.version + 1 }
}

/** A live client with both scopes. */
export function clientRecord(overrides: Partial<ClientRecord> = {}): ClientRecord {
  return {
    id: 'client-1',
    name: 'Front office',
    secret_hash: 'n4bQgYhMfWWaL-qgxVrQFaO_TxsrC4Is0V1sFbDwCgg',
    scopes: ['read', 'write'],
    created_at: T0,
    revoked_at: null,
    ...overrides,
  }
}

/** A live session of `client-1`, its refresh token valid for 30 days. */
export function sessionRecord(overrides: Partial<SessionRecord> = {}): SessionRecord {
  return {
    id: 'session-1',
    client_id: 'client-1',
    refresh_token_hash: 'hash-of-refresh-token-1',
    scopes: ['read'],
    created_at: T0,
    expires_at: T0 + 30 * 86_400 * SECOND,
    revoked_at: null,
    ...overrides,
  }
}

/** A signing key. */
export function signingKey(overrides: Partial<SigningKey> = {}): SigningKey {
  return {
    kid: 'kid-1',
    secret: 'c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA',
    created_at: T0,
    ...overrides,
  }
}

/** An `assert.rejects` check: the error is the fiscal-code `ConflictError` (D8). */
export function isFiscalCodeConflict(error: unknown): true {
  assert.ok(error instanceof ConflictError, 'a ConflictError')
  assert.equal(error.code, 'validation_failed')
  assert.equal(error.field, 'fiscal_code')
  return true
}
