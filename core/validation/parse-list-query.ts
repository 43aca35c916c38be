import { Compile } from 'typebox/compile'
import type { BeneficiaryStatus, SortField } from '../beneficiary.js'
import { hasControlCharacters } from './normalise-text.js'
import { ProblemList } from './problem-list.js'
import {
  HistoryQueryParams,
  ListQueryParams,
  type HistoryQueryInput,
  type ListQueryInput,
} from './query-schemas.js'
import { schemaProblems } from './schema-problems.js'

/** Validated paging parameters (D18). */
export interface PageParams {
  /** 1 to 10,000,000; default 1. */
  readonly page: number
  /** 1 to 100; default 20. */
  readonly perPage: number
}

/** Validated list parameters (D15–D18). Filters that were not given are absent. */
export interface ListParams extends PageParams {
  readonly status?: BeneficiaryStatus
  /** `YYYY-MM-DD`, inclusive, UTC. */
  readonly createdFrom?: string
  /** `YYYY-MM-DD`, inclusive, UTC. */
  readonly createdTo?: string
  /** Trimmed and NFC-normalised, never empty. */
  readonly search?: string
  /** Default `id`. */
  readonly sort: SortField
  /** True for a `sort` with a leading `-`. */
  readonly descending: boolean
  /** The `sort` parameter as given, for the links to repeat; absent when there was none. */
  readonly sortParam?: string
}

const listValidator = Compile(ListQueryParams)
const historyValidator = Compile(HistoryQueryParams)
const DIGITS = /^[0-9]+$/
const DATE = 'must be a real calendar date written YYYY-MM-DD'
const MESSAGES = {
  created_from: DATE,
  created_to: DATE,
  sort: 'must be id, created_at, updated_at, last_name or first_name, optionally after -',
}

const PAGING = ['page', 'per_page'] as const
const PASSED_AS_GIVEN = ['status', 'created_from', 'created_to', 'sort'] as const

/** A query as it arrives: typed for an embedder, raw strings from a server, anything from JavaScript. */
type RawQuery = Readonly<Record<string, unknown>>

function param(query: RawQuery, name: string): unknown {
  return Object.hasOwn(query, name) ? query[name] : undefined
}

// A number must be a whole one; a string plain digits: Number() would also take '1e3', ' 2',
// '0x10' or ''.
function decodePaging(query: RawQuery, copy: Record<string, unknown>, problems: ProblemList): void {
  for (const name of PAGING) {
    const raw = param(query, name)
    if (raw === undefined) continue
    if (
      typeof raw === 'number'
        ? Number.isSafeInteger(raw)
        : typeof raw === 'string' && DIGITS.test(raw)
    )
      copy[name] = Number(raw)
    else problems.add(name, 'must be a whole number')
  }
}

function pageParams(copy: Record<string, unknown>): PageParams {
  return { page: (copy.page ?? 1) as number, perPage: (copy.per_page ?? 20) as number }
}

/**
 * Validates the query of `GET /beneficiaries` (D15–D18). Unknown parameters are ignored; an empty
 * or blank `search` counts as absent.
 *
 * @param query - the first value of each parameter, as received; `page` and `per_page` may be
 *   numbers or strings of digits
 * @throws ValidationError `validation_failed` naming every bad parameter at once (D10):
 *   `page` (a whole number, 1–10,000,000), `per_page` (a whole number, 1–100), `status`, `created_from` and
 *   `created_to` (real dates; `created_from` after `created_to` names `created_from`), `search`
 *   (at most 200 characters) and `sort`
 *
 * @example
 * parseListQuery({ per_page: 50, sort: '-created_at' })
 * // { page: 1, perPage: 50, sort: 'created_at', descending: true, sortParam: '-created_at' }
 */
export function parseListQuery(input: ListQueryInput): ListParams {
  const query: RawQuery = input
  const problems = new ProblemList()
  const copy: Record<string, unknown> = {}
  decodePaging(query, copy, problems)
  for (const name of PASSED_AS_GIVEN) {
    const raw = param(query, name)
    if (raw !== undefined) copy[name] = raw
  }
  const raw = param(query, 'search')
  // Anything but a string goes to the schema as it is, which names it.
  const search = typeof raw === 'string' ? raw.normalize('NFC').trim() : raw
  if (search !== undefined && search !== '') {
    if (typeof search === 'string' && hasControlCharacters(search))
      problems.add('search', 'must not contain control characters')
    copy.search = search
  }
  problems.addAll(schemaProblems(listValidator, copy, MESSAGES))

  const from = copy.created_from as string | undefined
  const to = copy.created_to as string | undefined
  const datesValid = !problems.has('created_from') && !problems.has('created_to')
  if (from !== undefined && to !== undefined && datesValid && from > to) {
    problems.add('created_from', 'must not be after created_to')
  }
  problems.throwIfAny()

  const sortParam = copy.sort as string | undefined
  const descending = sortParam?.startsWith('-') ?? false
  const { page, perPage } = pageParams(copy)
  const params: { -readonly [K in keyof ListParams]: ListParams[K] } = {
    page,
    perPage,
    sort: (descending ? sortParam?.slice(1) : (sortParam ?? 'id')) as SortField,
    descending,
  }
  if (copy.status !== undefined) params.status = copy.status as BeneficiaryStatus
  if (from !== undefined) params.createdFrom = from
  if (to !== undefined) params.createdTo = to
  if (copy.search !== undefined) params.search = copy.search as string
  if (sortParam !== undefined) params.sortParam = sortParam
  return params
}

/**
 * Validates the query of `GET /beneficiaries/{id}/history` (D27): `page` and `per_page` as in
 * {@link parseListQuery}; other parameters are ignored.
 *
 * @throws ValidationError `validation_failed` naming `page` and/or `per_page`
 */
export function parseHistoryQuery(input: HistoryQueryInput): PageParams {
  const problems = new ProblemList()
  const copy: Record<string, unknown> = {}
  decodePaging(input, copy, problems)
  problems.addAll(schemaProblems(historyValidator, copy))
  problems.throwIfAny()
  return pageParams(copy)
}
