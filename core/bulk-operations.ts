import type { Admission } from './admission.js'
import type { BeneficiaryRecord } from './beneficiary.js'
import type { QueryInput, RequestContext, Result } from './beneficiary-service.js'
import { NotFoundError, ValidationError, type FieldProblem } from './errors.js'
import type { BulkStore, SnapshotFilter } from './ports/bulk-store.js'
import type { Storage } from './ports/storage.js'
import { searchTerms } from './search-terms.js'
import { DAY_MS } from './time.js'
import { parseListQuery } from './validation/index.js'
import type { ListQueryInput } from './validation/index.js'

/** The formats of an export (D39). */
export type ExportFormat = 'ndjson' | 'csv'

const FORMATS: readonly string[] = ['ndjson', 'csv']

/** Records per page read from the snapshot. */
export const EXPORT_PAGE = 500

/** Which records an export takes: the storage's filter, and the list's search on top. */
export interface ExportQuery {
  readonly filter: SnapshotFilter
  /** The list's search terms (D16): every one a prefix of a word of the names. */
  readonly search?: readonly string[] | undefined
}

/** An admitted export: what to read, in which format; nothing is read until `pages` is iterated. */
export interface RecordExport {
  readonly format: ExportFormat
  readonly query: ExportQuery
  /** The records, a page at a time, from one snapshot; leave the iteration to end it. */
  pages(): AsyncIterable<readonly BeneficiaryRecord[]>
}

/**
 * The export's query from the list's own parameters (`status`, `created_from`, `created_to`,
 * `search`), validated as the list validates them (D10, D16, D17).
 * @throws ValidationError naming each parameter at fault.
 */
export function exportQueryOf(input: ListQueryInput): ExportQuery {
  const params = parseListQuery(input)
  return {
    filter: {
      status: params.status,
      createdFrom: params.createdFrom === undefined ? undefined : Date.parse(params.createdFrom),
      createdBefore:
        params.createdTo === undefined ? undefined : Date.parse(params.createdTo) + DAY_MS,
    },
    search: params.search === undefined ? undefined : searchTerms(params.search),
  }
}

/**
 * The pages of `query` from `bulk`: the snapshot's pages, the list's search applied to each
 * (every term a prefix of a word of the names, as the stores match it).
 */
export async function* exportPages(
  bulk: BulkStore,
  query: ExportQuery,
): AsyncGenerator<readonly BeneficiaryRecord[]> {
  const terms = query.search
  for await (const page of bulk.snapshot(query.filter, EXPORT_PAGE)) {
    if (terms === undefined) {
      yield page
      continue
    }
    const matching = page.filter((record) => {
      const words = searchTerms(`${record.first_name} ${record.last_name}`)
      return terms.every((term) => words.some((word) => word.startsWith(term)))
    })
    if (matching.length > 0) yield matching
  }
}

/** The bulk operations of the API (D39). */
export class BulkOperations {
  readonly #storage: Storage
  readonly #admission: Admission

  constructor(storage: Storage, admission: Admission) {
    this.#storage = storage
    this.#admission = admission
  }

  /**
   * Admits an export (scope `read`, limit class `bulk`) and validates its parameters: `format`
   * and the list's filters, every problem named at once.
   * @throws ValidationError; NotFoundError when the storage has no exports.
   */
  exportRecords(ctx: RequestContext, query: QueryInput): Promise<Result<RecordExport>> {
    return this.#admission.admit('export', ctx, async ({ claims, rateLimit }) => {
      const problems: FieldProblem[] = []
      const format = query['format'] ?? 'ndjson'
      if (!FORMATS.includes(format)) {
        problems.push({ field: 'format', message: 'must be ndjson or csv' })
      }
      let exportQuery: ExportQuery | undefined
      try {
        exportQuery = exportQueryOf(query as ListQueryInput)
      } catch (error) {
        if (!(error instanceof ValidationError)) throw error
        problems.push(...error.details)
      }
      if (problems.length > 0 || exportQuery === undefined) throw new ValidationError(problems)
      const bulk = this.#storage.bulk
      if (bulk === undefined) throw new NotFoundError('This storage does not export.')
      const chosen = exportQuery
      return {
        value: {
          format: format as ExportFormat,
          query: chosen,
          pages: () => exportPages(bulk, chosen),
        },
        rateLimit,
        clientId: claims.clientId,
      }
    })
  }
}
