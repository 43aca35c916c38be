import type { SigningKey, SigningKeyStore } from '../../core/ports/signing-key-store.js'
import { frozenCopy } from './memory-frozen-copy.js'

/**
 * Signing keys in a list. Records are stored and returned as frozen copies.
 *
 * Get one from `MemoryStorage`; it is not constructed on its own.
 */
export class MemorySigningKeyStore implements SigningKeyStore {
  readonly #assertOpen: () => void
  readonly #keys: SigningKey[] = []

  /** @param assertOpen Throws when the owning storage is closed; called first by every method. */
  constructor(assertOpen: () => void) {
    this.#assertOpen = assertOpen
  }

  /** Every key by ascending `created_at`; keys created at the same instant in insertion order. */
  async list(): Promise<readonly SigningKey[]> {
    this.#assertOpen()
    return this.#keys.slice().sort((a, b) => a.created_at - b.created_at)
  }

  /** Adds a copy of the key, unless a key with its `kid` exists: then the stored one stays. */
  async insert(key: SigningKey): Promise<void> {
    this.#assertOpen()
    if (this.#keys.some((existing) => existing.kid === key.kid)) return
    this.#keys.push(
      frozenCopy<SigningKey>({ kid: key.kid, secret: key.secret, created_at: key.created_at }),
    )
  }
}
