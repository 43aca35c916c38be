import type { WebhookEndpoint, WebhookState, WebhookStore } from '../../core/ports/webhook-store.js'

interface Lease {
  readonly owner: string
  readonly until: number
}

/** The webhook endpoints of `MemoryStorage` (D34): one process, so the lease is a field. */
export class MemoryWebhookStore implements WebhookStore {
  readonly #assertOpen: () => void
  readonly #endpoints = new Map<string, WebhookEndpoint>()
  readonly #leases = new Map<string, Lease>()

  constructor(assertOpen: () => void) {
    this.#assertOpen = assertOpen
  }

  async add(endpoint: WebhookEndpoint): Promise<void> {
    this.#assertOpen()
    if (this.#endpoints.has(endpoint.id)) throw new Error('an endpoint with this id exists')
    this.#endpoints.set(endpoint.id, copy(endpoint))
  }

  async list(): Promise<readonly WebhookEndpoint[]> {
    this.#assertOpen()
    return [...this.#endpoints.values()]
      .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .map(copy)
  }

  async remove(id: string): Promise<boolean> {
    this.#assertOpen()
    this.#leases.delete(id)
    return this.#endpoints.delete(id)
  }

  async lease(id: string, owner: string, now: number, until: number): Promise<boolean> {
    this.#assertOpen()
    if (!this.#endpoints.has(id)) return false
    const held = this.#leases.get(id)
    if (held !== undefined && held.owner !== owner && held.until > now) return false
    this.#leases.set(id, { owner, until })
    return true
  }

  async save(id: string, owner: string, state: WebhookState): Promise<boolean> {
    this.#assertOpen()
    const endpoint = this.#endpoints.get(id)
    if (endpoint === undefined || this.#leases.get(id)?.owner !== owner) return false
    this.#endpoints.set(id, { ...endpoint, state: { ...state } })
    return true
  }
}

function copy(endpoint: WebhookEndpoint): WebhookEndpoint {
  return Object.freeze({
    ...endpoint,
    types: Object.freeze([...endpoint.types]),
    state: Object.freeze({ ...endpoint.state }),
  })
}
