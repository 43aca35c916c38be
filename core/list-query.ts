import type { ListQuery } from './ports/beneficiary-store.js'
import { searchTerms } from './search-terms.js'
import { DAY_MS } from './time.js'
import type { ListParams } from './validation/index.js'

/** The store's query for validated list parameters (D15–D18). */
export function listQueryOf(params: ListParams): ListQuery {
  return {
    offset: (params.page - 1) * params.perPage,
    limit: params.perPage,
    sort: params.sort,
    descending: params.descending,
    ...(params.status !== undefined && { status: params.status }),
    ...(params.createdFrom !== undefined && { createdFrom: Date.parse(params.createdFrom) }),
    ...(params.createdTo !== undefined && {
      createdBefore: Date.parse(params.createdTo) + DAY_MS,
    }),
    ...(params.search !== undefined && { search: searchTerms(params.search) }),
  }
}
