import { base64urlByteLength, randomToken } from './crypto.js'
import type { Clock } from './ports/clock.js'
import type { SigningKey, SigningKeyStore } from './ports/signing-key-store.js'

/** A key for signing and verifying access tokens (D3). */
export interface AccessTokenKey {
  /** Key id, written into each token's `kid` header. */
  readonly kid: string
  /** At least 32 random bytes, base64url. */
  readonly secret: string
}

/** The kid of the key a service generates for itself when the storage has none (D3). */
const GENERATED_KID = 'generated-1'

/**
 * How often a service on stored keys reads them again (`AccessTokens`): within this long of a
 * rotation every running instance signs with the new key.
 */
export const KEY_RELOAD_SECONDS = 60

/** What decides how long a key that no longer signs is still needed. */
export interface KeyWindow {
  /** Access-token lifetime. */
  readonly ttlSeconds: number
  /** Clock-skew allowance of verification. */
  readonly clockSkewSeconds: number
}

/** Where a stored key stands (`signingKeyStates`). */
export interface SigningKeyState {
  readonly kid: string
  /** Epoch milliseconds. */
  readonly created_at: number
  /**
   * `signing`: the newest key, which signs; `verifying`: replaced, still verifying tokens it
   * may have signed; `retired`: no live token can carry it, so it verifies nothing.
   */
  readonly state: 'signing' | 'verifying' | 'retired'
  /** Epoch milliseconds from which a key that no longer signs is retired. */
  readonly retires_at: number | undefined
}

/**
 * Where each stored key stands at `now`, oldest first. The newest signs. A key replaced by a
 * newer one signed its last token at most `KEY_RELOAD_SECONDS` after that key was made (every
 * instance reads the keys again by then, before it signs), so it verifies until that token's
 * expiry: the newer key's creation plus the reload interval, the token lifetime and the skew
 * allowance. After that it is retired.
 */
export function signingKeyStates(
  stored: readonly SigningKey[],
  now: number,
  window: KeyWindow,
): SigningKeyState[] {
  const sorted = [...stored].sort((a, b) => a.created_at - b.created_at)
  const neededMs = (KEY_RELOAD_SECONDS + window.ttlSeconds + window.clockSkewSeconds) * 1000
  return sorted.map((key, index) => {
    const next = sorted[index + 1]
    if (next === undefined) {
      return { kid: key.kid, created_at: key.created_at, state: 'signing', retires_at: undefined }
    }
    const retiresAt = next.created_at + neededMs
    return {
      kid: key.kid,
      created_at: key.created_at,
      state: now < retiresAt ? 'verifying' : 'retired',
      retires_at: retiresAt,
    }
  })
}

/**
 * The keys kept in the storage that can still verify a live token, newest first (the first one
 * signs); on a storage with none, one is generated and stored first.
 */
export async function loadSigningKeys(
  store: SigningKeyStore,
  clock: Clock,
  window: KeyWindow = { ttlSeconds: 3600, clockSkewSeconds: 5 },
): Promise<AccessTokenKey[]> {
  let stored = await store.list()
  if (stored.length === 0) {
    // A fixed kid: two processes starting at once on a new database insert the same kid, the
    // store keeps the first, and both sign with it (a random kid each left one refusing the
    // other's tokens).
    await store.insert({ kid: GENERATED_KID, secret: randomToken(32), created_at: clock.now() })
    // Another process may have won the race: whatever is stored now is the truth.
    stored = await store.list()
  }
  const states = signingKeyStates(stored, clock.now(), window)
  const live = new Set(states.filter((key) => key.state !== 'retired').map((key) => key.kid))
  // Oldest first, as stored (keys made at one instant in insertion order): reversed, the newest.
  return [...stored]
    .sort((a, b) => a.created_at - b.created_at)
    .reverse()
    .filter((key) => live.has(key.kid))
    .map(({ kid, secret }) => ({ kid, secret }))
}

/**
 * Adds a new signing key to the store, made now: running services sign with it within
 * `KEY_RELOAD_SECONDS`, and keep verifying with the keys before it until they retire
 * (`signingKeyStates`). Returns its kid and creation time, never its secret.
 */
export async function rotateSigningKey(
  store: SigningKeyStore,
  clock: Clock,
): Promise<{ kid: string; created_at: number }> {
  const created_at = clock.now()
  const kid = `k-${new Date(created_at).toISOString().slice(0, 10)}-${randomToken(6)}`
  await store.insert({ kid, secret: randomToken(32), created_at })
  return { kid, created_at }
}

/** @throws TypeError when a key has no kid or a secret shorter than 32 bytes. */
export function checkSigningKeys(keys: readonly AccessTokenKey[]): void {
  for (const key of keys) {
    if (key.kid.length === 0 || base64urlByteLength(key.secret) < 32) {
      throw new TypeError('each key needs a kid and a base64url secret of at least 32 bytes')
    }
  }
}
