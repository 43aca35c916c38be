import Type from 'typebox'
import type { TSchema } from 'typebox'
import { BeneficiaryListItem } from '../beneficiary.js'
import { Nullable, Timestamp } from './beneficiary-schemas.js'

// Schemas of the response bodies other than the beneficiary's own shapes (`core/beneficiary.ts`),
// field for field the types in `core/shapes.ts`, for the OpenAPI document.

/** `meta` of a paged response (specification 4.3). */
export const PageMeta = Type.Object({
  current_page: Type.Integer({ minimum: 1 }),
  total_pages: Type.Integer({ minimum: 0 }),
  total_count: Type.Integer({ minimum: 0 }),
  per_page: Type.Integer({ minimum: 1, maximum: 100 }),
})

/** `links` of a paged response: paths starting with `/v3` (D18). */
export const PageLinks = Type.Object({
  first: Type.String(),
  last: Type.String(),
  prev: Nullable(Type.String()),
  next: Nullable(Type.String()),
})

/** One entry of a beneficiary's history (D27). */
export const HistoryItem = Type.Object({
  at: Timestamp,
  action: Type.Enum(['created', 'updated', 'status_changed', 'deleted']),
  client_id: Type.String(),
  request_id: Type.String(),
  changes: Type.Array(
    Type.Object({ field: Type.String(), old: Type.Unknown(), new: Type.Unknown() }),
  ),
})

/**
 * A paged response (specification 4.3) around `item`.
 * @example
 * const PagedClients = pagedSchema(ClientInfo)
 */
export function pagedSchema<T extends TSchema>(item: T) {
  return Type.Object({ data: Type.Array(item), meta: PageMeta, links: PageLinks })
}

/** `GET /beneficiaries` (specification 4.3). */
export const PagedBeneficiaries = pagedSchema(BeneficiaryListItem)

/** `GET /beneficiaries/{id}/history` (D27). */
export const PagedHistory = pagedSchema(HistoryItem)

/** `POST /auth/login` (specification 4.2). */
export const TokenResponse = Type.Object({
  access_token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer(),
  refresh_token: Type.String(),
  scope: Type.String({ description: 'Space-separated scope names.' }),
})

/** `POST /auth/refresh` (specification 4.2, D4): no `refresh_token`, it is not rotated. */
export const RefreshResponse = Type.Object({
  access_token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer(),
})

/** One entry of `details` (D10). */
export const FieldProblemSchema = Type.Object({ field: Type.String(), message: Type.String() })

/**
 * The standard error body (specification 7.1) with the added `request_id` (D24); `retry_after`
 * comes with 429 only.
 */
export const ErrorBody = Type.Object({
  error: Type.String(),
  message: Type.String(),
  code: Type.Integer(),
  details: Type.Optional(Type.Array(FieldProblemSchema)),
  request_id: Type.Optional(Type.String()),
  retry_after: Type.Optional(Type.Integer({ minimum: 1 })),
})
