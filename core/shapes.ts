import type { HistoryAction } from './beneficiary.js'

/** `POST /auth/login` response (specification 4.2). */
export interface TokenResponse {
  readonly access_token: string
  readonly token_type: 'Bearer'
  readonly expires_in: number
  readonly refresh_token: string
  /** Space-separated scope names. */
  readonly scope: string
}

/** `POST /auth/refresh` response (specification 4.2): no `refresh_token`, it is not rotated (D4). */
export interface RefreshResponse {
  readonly access_token: string
  readonly token_type: 'Bearer'
  readonly expires_in: number
}

/** `meta` of a paged response (specification 4.3). */
export interface PageMeta {
  readonly current_page: number
  readonly total_pages: number
  readonly total_count: number
  readonly per_page: number
}

/** `links` of a paged response: paths that start with the base path (D18). */
export interface PageLinks {
  readonly first: string
  readonly last: string
  readonly prev: string | null
  readonly next: string | null
}

/** A paged response (specification 4.3). */
export interface Paged<T> {
  readonly data: readonly T[]
  readonly meta: PageMeta
  readonly links: PageLinks
}

/** One entry of `GET /beneficiaries/{id}/history` (D27). */
export interface HistoryItem {
  /** ISO 8601 UTC. */
  readonly at: string
  readonly action: HistoryAction
  readonly client_id: string
  readonly request_id: string
  readonly changes: readonly {
    readonly field: string
    readonly old: unknown
    readonly new: unknown
  }[]
}

/** What `clients.create` returns, the only time the secret is shown (D1). */
export interface ProvisionedClient {
  readonly client_id: string
  readonly client_secret: string
  readonly scopes: readonly string[]
}

/** A client as listed to an operator: never the secret or its hash. */
export interface ClientInfo {
  readonly client_id: string
  readonly name: string
  readonly scopes: readonly string[]
  /** ISO 8601 UTC. */
  readonly created_at: string
  /** ISO 8601 UTC, or `null` while the client is live. */
  readonly revoked_at: string | null
}
