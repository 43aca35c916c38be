import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { BeneficiaryRecord } from '../../core/beneficiary.js'
import type { Storage } from '../../core/ports/storage.js'
import type { CurrentStorage } from './contract-harness.js'
import { SECOND, T0, clientRecord, insertBeneficiary, sessionRecord } from './storage-fixtures.js'

const TOKEN_EXPIRY = T0 + 3600 * SECOND

/** Registers every behaviour of `SessionStore` (D4, D5). */
export function describeSessionStoreContract(storage: CurrentStorage): void {
  const store = () => storage().sessions

  async function insertClientWithSessions(): Promise<void> {
    await storage().clients.insert(clientRecord())
    await store().insert(sessionRecord())
    await store().insert(
      sessionRecord({ id: 'session-2', refresh_token_hash: 'hash-of-refresh-token-2' }),
    )
  }

  const records = new WeakMap<Storage, Promise<BeneficiaryRecord>>()
  /** One record per storage, for `expectActive` to read. */
  function recordOf(current: Storage): Promise<BeneficiaryRecord> {
    let record = records.get(current)
    if (record === undefined) records.set(current, (record = insertBeneficiary(current)))
    return record
  }

  /**
   * Asserts what `isTokenActive` answers and, for a store with `getForToken`, that it answers
   * the same, with the record (an existing one and a missing one) only when active.
   */
  async function expectActive(
    sessionId: string,
    jti: string,
    active: boolean,
    clientId = 'client-1',
  ): Promise<void> {
    assert.equal(await store().isTokenActive(sessionId, jti, clientId), active)
    const beneficiaries = storage().beneficiaries
    if (beneficiaries.getForToken === undefined) return
    const record = await recordOf(storage())
    const token = { sessionId, jti, clientId }
    assert.deepEqual(
      await beneficiaries.getForToken(record.id, token),
      active ? { active, record } : { active },
    )
    assert.deepEqual(
      await beneficiaries.getForToken(record.id + 1000, token),
      active ? { active, record: undefined } : { active },
    )
  }

  describe('sessions (D4, D5)', () => {
    it('finds a session by its refresh-token hash, every field as inserted (D4)', async () => {
      await insertClientWithSessions()
      assert.deepEqual(
        await store().findByRefreshTokenHash('hash-of-refresh-token-1'),
        sessionRecord(),
      )
      assert.equal(
        (await store().findByRefreshTokenHash('hash-of-refresh-token-2'))?.id,
        'session-2',
      )
    })

    it('answers undefined for an unknown refresh-token hash (D4)', async () => {
      await insertClientWithSessions()
      assert.equal(await store().findByRefreshTokenHash('hash-unknown'), undefined)
    })

    it('still finds a revoked session, with its revocation time (D4)', async () => {
      await insertClientWithSessions()
      await store().revoke('session-1', T0 + SECOND)
      assert.deepEqual(
        await store().findByRefreshTokenHash('hash-of-refresh-token-1'),
        sessionRecord({ revoked_at: T0 + SECOND }),
      )
    })

    it('keeps the first revocation time when a session is revoked again (D5)', async () => {
      await insertClientWithSessions()
      await store().revoke('session-1', T0 + SECOND)
      await store().revoke('session-1', T0 + 2 * SECOND, { jti: 'jti-1', expiresAt: TOKEN_EXPIRY })
      const session = await store().findByRefreshTokenHash('hash-of-refresh-token-1')
      assert.equal(session?.revoked_at, T0 + SECOND)
    })

    it('answers true for a token of a live session of a live client, with a live jti', async () => {
      await insertClientWithSessions()
      await expectActive('session-1', 'jti-1', true)
    })

    it('answers false for a token whose session does not exist', async () => {
      await insertClientWithSessions()
      await expectActive('session-unknown', 'jti-1', false)
    })

    it('answers false for every token of a revoked session, and for no other session (D5)', async () => {
      await insertClientWithSessions()
      await store().revoke('session-1', T0 + SECOND)
      await expectActive('session-1', 'jti-1', false)
      await expectActive('session-1', 'jti-never-seen', false)
      await expectActive('session-2', 'jti-2', true)
    })

    it('answers false for every token of a revoked client (D1)', async () => {
      await insertClientWithSessions()
      await storage().clients.insert(clientRecord({ id: 'client-2' }))
      await store().insert(
        sessionRecord({ id: 'session-3', client_id: 'client-2', refresh_token_hash: 'hash-3' }),
      )
      assert.equal(await storage().clients.revoke('client-1', T0 + SECOND), true)
      await expectActive('session-1', 'jti-1', false)
      await expectActive('session-2', 'jti-2', false)
      await expectActive('session-3', 'jti-3', true, 'client-2')
    })

    it("answers false for a token whose session is another client's: sid is bound to sub", async () => {
      await insertClientWithSessions()
      await storage().clients.insert(clientRecord({ id: 'client-2' }))
      await store().insert(
        sessionRecord({ id: 'session-3', client_id: 'client-2', refresh_token_hash: 'hash-3' }),
      )
      // Each asked first as its own client, so that a memo of active tokens is tried too.
      await expectActive('session-1', 'jti-1', true, 'client-1')
      await expectActive('session-1', 'jti-1', false, 'client-2')
      await expectActive('session-3', 'jti-3', true, 'client-2')
      await expectActive('session-3', 'jti-3', false, 'client-1')
      await expectActive('session-3', 'jti-3', false, 'client-unknown')
    })

    it('answers false for a revoked jti, and only for that jti (D5)', async () => {
      await insertClientWithSessions()
      await store().revoke('session-2', T0 + SECOND, {
        jti: 'jti-revoked',
        expiresAt: TOKEN_EXPIRY,
      })
      await expectActive('session-2', 'jti-revoked', false)
      await expectActive('session-1', 'jti-revoked', false)
      await expectActive('session-1', 'jti-1', true)
    })

    it('revokes the session along with the token (D5)', async () => {
      await insertClientWithSessions()
      await store().revoke('session-1', T0 + SECOND, { jti: 'jti-1', expiresAt: TOKEN_EXPIRY })
      const session = await store().findByRefreshTokenHash('hash-of-refresh-token-1')
      assert.equal(session?.revoked_at, T0 + SECOND)
      await expectActive('session-1', 'jti-other', false)
      await expectActive('session-2', 'jti-2', true)
    })

    it('reads back a session inserted as already revoked, and refuses its tokens', async () => {
      await storage().clients.insert(clientRecord())
      const session = sessionRecord({ revoked_at: T0 })
      await store().insert(session)
      assert.deepEqual(await store().findByRefreshTokenHash(session.refresh_token_hash), session)
      await expectActive(session.id, 'jti-1', false)
    })
  })
}
