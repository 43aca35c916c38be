import Type from 'typebox'
import type { Static } from 'typebox'
import { BENEFICIARY_STATUSES } from '../beneficiary.js'
import type { SortField } from '../beneficiary.js'

/** Every field the list may be sorted on (D15). */
export const SORT_FIELDS = [
  'id',
  'created_at',
  'updated_at',
  'last_name',
  'first_name',
] as const satisfies readonly SortField[]

/** A value of `sort`: a sort field, optionally after `-` for descending order (D15). */
export type SortValue = SortField | `-${SortField}`

/** Every value `sort` accepts: a sort field, optionally after `-` for descending order (D15). */
export const SORT_VALUES: readonly SortValue[] = SORT_FIELDS.flatMap((field) => [
  field,
  `-${field}` as const,
])

/** Highest `page` accepted (D18): far past any real list, low enough to keep offsets exact. */
export const MAX_PAGE = 10_000_000

const Page = Type.Integer({
  minimum: 1,
  maximum: MAX_PAGE,
  default: 1,
  description: 'Starts at 1.',
})
const PerPage = Type.Integer({ minimum: 1, maximum: 100, default: 20 })
const Day = Type.String({ format: 'date', description: 'Inclusive calendar day in UTC.' })

/**
 * Query parameters of `GET /beneficiaries` (specification 4.3, D15–D18), as numbers and strings
 * after decoding. `page` and `per_page` must be written as plain digits. Unknown parameters are
 * ignored.
 */
export const ListQueryParams = Type.Object({
  page: Type.Optional(Page),
  per_page: Type.Optional(PerPage),
  status: Type.Optional(Type.Enum(BENEFICIARY_STATUSES)),
  created_from: Type.Optional(Day),
  created_to: Type.Optional(Day),
  search: Type.Optional(
    Type.String({
      maxLength: 200,
      description:
        'Word prefixes of first and last name, every word matching, case- and accent-insensitively; trimmed, empty means no search.',
    }),
  ),
  sort: Type.Optional(
    Type.Enum(SORT_VALUES, {
      default: 'id',
      description: 'A leading - sorts descending; ties are broken by id.',
    }),
  ),
})

/** Query parameters of `GET /beneficiaries/{id}/history` (D27): paged like the list. */
export const HistoryQueryParams = Type.Object({
  page: Type.Optional(Page),
  per_page: Type.Optional(PerPage),
})

/** A query as a caller writes it: `page` and `per_page` as numbers or as the digits of one. */
type AsGiven<Params> = {
  readonly [K in keyof Params]?:
    (NonNullable<Params[K]> extends number ? number | string : Params[K]) | undefined
}

/**
 * What `list` takes (specification 4.3, D15–D18), derived from `ListQueryParams`: a parameter
 * the service does not know does not compile. `page` and `per_page` are numbers, or strings of
 * digits as a query string carries them; the service checks every value at run time.
 *
 * @example
 * const query: ListQueryInput = { page: 2, per_page: 50, status: 'active', sort: '-created_at' }
 */
export type ListQueryInput = AsGiven<Static<typeof ListQueryParams>>

/** What `history` takes (D27): `page` and `per_page`, as numbers or strings of digits. */
export type HistoryQueryInput = AsGiven<Static<typeof HistoryQueryParams>>
