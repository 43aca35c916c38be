import type { ClientAdmin } from './beneficiary-service.js'
import { randomToken, sha256, type Sha256 } from './crypto.js'
import { ValidationError, type FieldProblem } from './errors.js'
import type { Clock } from './ports/clock.js'
import type { Storage } from './ports/storage.js'
import type { ClientInfo, ProvisionedClient } from './shapes.js'
import { systemClock } from './system-clock.js'
import { isoTime } from './time.js'

/** Options of `createClientAdmin`. Only `storage` is required. */
export interface ClientAdminOptions {
  /** Where clients are kept: a whole `Storage`, or anything with its `clients` store. */
  readonly storage: Pick<Storage, 'clients'>
  /** Where time comes from. Default: the system clock. */
  readonly clock?: Clock
  /** Hashes client secrets; see `BeneficiaryServiceOptions.sha256`. Default: Web Crypto. */
  readonly sha256?: Sha256
}

/** `audit` (D37) only when asked for by name: no default grants it. */
const SCOPES: readonly string[] = ['read', 'write', 'audit']

/**
 * The operator's functions for API clients (D1), on their own: no signing key and no service
 * are needed to provision, list or revoke a client. `BeneficiaryService.clients` is the same.
 *
 * @example
 * const admin = createClientAdmin({ storage })
 * const { client_id, client_secret } = await admin.create({ name: 'ops', scopes: ['read'] })
 */
export function createClientAdmin(options: ClientAdminOptions): ClientAdmin {
  return new ClientAdministration(
    options.storage,
    options.clock ?? systemClock,
    options.sha256 ?? sha256,
  )
}

class ClientAdministration implements ClientAdmin {
  readonly #storage: Pick<Storage, 'clients'>
  readonly #clock: Clock
  readonly #sha256: Sha256

  constructor(storage: Pick<Storage, 'clients'>, clock: Clock, hash: Sha256) {
    this.#storage = storage
    this.#clock = clock
    this.#sha256 = hash
  }

  async create(input: { name: string; scopes: readonly string[] }): Promise<ProvisionedClient> {
    const name = typeof input.name === 'string' ? input.name.trim() : ''
    const problems: FieldProblem[] = []
    if (name.length === 0 || name.length > 100)
      problems.push({ field: 'name', message: 'must be 1 to 100 characters' })
    const scopes = [...new Set(input.scopes)]
    if (scopes.length === 0 || !scopes.every((scope) => SCOPES.includes(scope))) {
      problems.push({
        field: 'scopes',
        message: "must be one or more of 'read', 'write' and 'audit'",
      })
    }
    if (problems.length > 0) throw new ValidationError(problems)
    const clientId = `cl_${randomToken(12)}`
    const secret = randomToken(32)
    await this.#storage.clients.insert({
      id: clientId,
      name,
      secret_hash: await this.#sha256(secret),
      scopes,
      created_at: this.#clock.now(),
      revoked_at: null,
    })
    return { client_id: clientId, client_secret: secret, scopes }
  }

  async list(): Promise<readonly ClientInfo[]> {
    const clients = await this.#storage.clients.list()
    return clients.map((client) => ({
      client_id: client.id,
      name: client.name,
      scopes: client.scopes,
      created_at: isoTime(client.created_at),
      revoked_at: client.revoked_at === null ? null : isoTime(client.revoked_at),
    }))
  }

  revoke(clientId: string): Promise<boolean> {
    return this.#storage.clients.revoke(clientId, this.#clock.now())
  }
}
