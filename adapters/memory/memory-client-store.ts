import type { ClientRecord, ClientStore } from '../../core/ports/client-store.js'
import { frozenCopy } from './memory-frozen-copy.js'

/**
 * API clients kept in a map by id. Records are stored and returned as frozen copies.
 *
 * Get one from `MemoryStorage`; it is not constructed on its own.
 */
export class MemoryClientStore implements ClientStore {
  readonly #assertOpen: () => void
  readonly #clients = new Map<string, ClientRecord>()

  /** @param assertOpen Throws when the owning storage is closed; called first by every method. */
  constructor(assertOpen: () => void) {
    this.#assertOpen = assertOpen
  }

  /**
   * Adds a copy of the client.
   * @throws Error when a client with this id exists (the core generates unique ids).
   */
  async insert(client: ClientRecord): Promise<void> {
    this.#assertOpen()
    if (this.#clients.has(client.id)) throw new Error('a client with this id already exists')
    this.#clients.set(
      client.id,
      frozenCopy<ClientRecord>({
        id: client.id,
        name: client.name,
        secret_hash: client.secret_hash,
        scopes: client.scopes,
        created_at: client.created_at,
        revoked_at: client.revoked_at,
      }),
    )
  }

  /** The client with this id, revoked or not, or `undefined`. */
  async get(id: string): Promise<ClientRecord | undefined> {
    this.#assertOpen()
    return this.#clients.get(id)
  }

  /** Every client by ascending `created_at`; clients created at the same instant in insertion order. */
  async list(): Promise<readonly ClientRecord[]> {
    this.#assertOpen()
    return [...this.#clients.values()].sort((a, b) => a.created_at - b.created_at)
  }

  /** Sets `revoked_at` to `at`. False when the client is unknown or already revoked. */
  async revoke(id: string, at: number): Promise<boolean> {
    this.#assertOpen()
    const client = this.#clients.get(id)
    if (client === undefined || client.revoked_at !== null) return false
    this.#clients.set(id, frozenCopy({ ...client, revoked_at: at }))
    return true
  }

  /** Whether the client exists and is not revoked; what `MemorySessionStore` asks. */
  isLive(id: string): boolean {
    return this.#clients.get(id)?.revoked_at === null
  }
}
