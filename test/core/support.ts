import assert from 'node:assert/strict'
import { MemoryStorage } from '../../adapters/memory/index.js'
import {
  createBeneficiaryService,
  FakeClock,
  type BeneficiaryService,
  type BeneficiaryServiceOptions,
  type ErrorCode,
  type RequestContext,
  type UnparsedBody,
} from '../../core/index.js'

/** A service on memory storage and a fake clock, with one client holding read and write. */
export async function setup(options: Partial<BeneficiaryServiceOptions> = {}) {
  const clock = new FakeClock(Date.UTC(2026, 0, 1, 9, 0, 0))
  const storage = new MemoryStorage()
  const service = await createBeneficiaryService({ storage, clock, ...options })
  const client = await service.clients.create({ name: 'Case workers', scopes: ['read', 'write'] })
  const login = async (ip = '192.0.2.1', extra: Record<string, unknown> = {}) =>
    (
      await service.login(
        { ip },
        { client_id: client.client_id, client_secret: client.client_secret, ...extra },
      )
    ).value
  const tokens = await login()
  const ctx: RequestContext = { token: tokens.access_token, requestId: 'req-test' }
  return { clock, storage, service, client, tokens, ctx, login }
}

/** The login body for a provisioned client. */
export function credentials(client: { client_id: string; client_secret: string }) {
  return { client_id: client.client_id, client_secret: client.client_secret }
}

export const maria = {
  first_name: 'Maria',
  last_name: 'Rossi',
  email: 'maria.rossi@example.org',
}

/**
 * A body sent as an unchecked value, as a server passes one: for tests of what the types would
 * refuse (a misspelt field, a wrong type), which the service must refuse at run time too.
 */
export function unchecked(value: unknown): UnparsedBody {
  return () => value
}

/** Awaits `promise` and asserts it rejects with a domain error of `code`; returns the error. */
export async function rejectsWith<E = Error & { code: ErrorCode }>(
  promise: Promise<unknown>,
  code: ErrorCode,
): Promise<E> {
  try {
    await promise
  } catch (error) {
    assert.equal((error as { code?: unknown }).code, code, `expected ${code}, got ${String(error)}`)
    return error as E
  }
  assert.fail(`expected a rejection with ${code}`)
}

export type Setup = Awaited<ReturnType<typeof setup>>
export type { BeneficiaryService }
