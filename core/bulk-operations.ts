import type { Admission } from './admission.js'
import type { BeneficiaryRecord } from './beneficiary.js'
import type { QueryInput, RequestBody, RequestContext, Result } from './beneficiary-service.js'
import { randomToken } from './crypto.js'
import { NotFoundError, ValidationError, type FieldProblem } from './errors.js'
import { pageOf } from './pagination.js'
import type { Clock } from './ports/clock.js'
import type { ImportJob } from './ports/import-job-store.js'
import { bodyOf } from './request-body.js'
import type { Paged } from './shapes.js'
import { isoTime } from './time.js'
import type { BulkStore, SnapshotFilter } from './ports/bulk-store.js'
import type { Storage } from './ports/storage.js'
import { searchTerms } from './search-terms.js'
import { DAY_MS } from './time.js'
import { parseHistoryQuery, parseListQuery } from './validation/index.js'
import type { ListQueryInput } from './validation/index.js'

/** The formats of an export (D39). */
export type ExportFormat = 'ndjson' | 'csv'

const FORMATS: readonly string[] = ['ndjson', 'csv']

/**
 * Records per page read from the snapshot. A page's records live across the wait for the reader,
 * so V8 moves them to its old generation, which is collected late: with 500 a page, the CLI's
 * CSV export of 1,000,000 records peaked at 142–202 MiB from run to run; with 100, at 137–158,
 * in no more time.
 */
export const EXPORT_PAGE = 100

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
    return this.#admission.admit('exportRecords', ctx, async ({ claims, rateLimit }) => {
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

/** What `POST /imports` uploads: the file, its format, and whether to drop assigned fields. */
export interface ImportUpload {
  readonly format: 'csv' | 'ndjson'
  readonly file: Uint8Array
  readonly ignoreAssigned: boolean
}

/** An import job as the API shows it (D39). */
export interface ImportJobView {
  readonly id: string
  readonly state: ImportJob['state']
  readonly format: 'csv' | 'ndjson'
  readonly rows: number
  readonly created: number
  readonly existing: number
  readonly refused: number
  readonly error: string | null
  readonly created_at: string
  readonly updated_at: string
  readonly finished_at: string | null
}

/** A job with a page of its report: one outcome per row, by row. */
export interface ImportJobReport extends ImportJobView {
  readonly report: Paged<unknown>
}

/** The most rows an import job may have, by default (D39). */
export const MAX_IMPORT_ROWS = 1_000_000

/** How the import operations are set. */
export interface ImportSettings {
  /** The most rows a job may have. */
  readonly maxRows: number
  /** Prefix of the paths in pagination links. */
  readonly basePath: string
}

/** The view of a stored job. */
export function importJobView(job: ImportJob): ImportJobView {
  return {
    id: job.id,
    state: job.state,
    format: job.format,
    ...job.counts,
    error: job.error,
    created_at: isoTime(job.createdAt),
    updated_at: isoTime(job.updatedAt),
    finished_at: job.finishedAt === null ? null : isoTime(job.finishedAt),
  }
}

/** The import operations of the API (D39): a job is stored here, and run by a worker. */
export class ImportOperations {
  readonly #storage: Storage
  readonly #admission: Admission
  readonly #clock: Clock
  readonly #settings: ImportSettings

  constructor(storage: Storage, admission: Admission, clock: Clock, settings: ImportSettings) {
    this.#storage = storage
    this.#admission = admission
    this.#clock = clock
    this.#settings = settings
  }

  /**
   * Stores an import job for the file (scope `write`, limit class `bulk`), `queued`; a worker
   * runs it. A file of more than `maxRows` lines is refused whole.
   * @throws ValidationError; NotFoundError when the storage keeps no jobs.
   */
  startImport(
    ctx: RequestContext,
    body: RequestBody<ImportUpload>,
  ): Promise<Result<ImportJobView>> {
    return this.#admission.admit('startImport', ctx, async ({ claims, rateLimit }) => {
      const imports = this.#storage.imports
      if (imports === undefined) throw new NotFoundError('This storage does not keep imports.')
      const upload = bodyOf(body) as ImportUpload
      const lines = lineCount(upload.file)
      const header = upload.format === 'csv' ? 1 : 0
      if (lines - header > this.#settings.maxRows) {
        throw new ValidationError([
          {
            field: 'body',
            message: `must have at most ${this.#settings.maxRows} rows`,
          },
        ])
      }
      const job = await imports.create({
        id: `imp_${randomToken(16)}`,
        clientId: claims.clientId,
        requestId: ctx.requestId ?? randomToken(12),
        format: upload.format,
        ignoreAssigned: upload.ignoreAssigned,
        file: upload.file,
        createdAt: this.#clock.now(),
      })
      return { value: importJobView(job), rateLimit, clientId: claims.clientId }
    })
  }

  /**
   * A job of the caller's, with a page of its report (`page`, `per_page` as the history's).
   * Another client's job is 404, as a job that does not exist.
   * @throws NotFoundError, ValidationError
   */
  getImport(
    ctx: RequestContext,
    id: string,
    query: QueryInput = {},
  ): Promise<Result<ImportJobReport>> {
    return this.#admission.admit('getImport', ctx, async ({ claims, rateLimit }) => {
      const params = parseHistoryQuery(query)
      const imports = this.#storage.imports
      const job = imports === undefined ? undefined : await imports.get(id)
      if (imports === undefined || job === undefined || job.clientId !== claims.clientId) {
        throw new NotFoundError()
      }
      const page = await imports.outcomes(id, (params.page - 1) * params.perPage, params.perPage)
      const paging = pageOf(
        `${this.#settings.basePath}/imports/${encodeURIComponent(id)}`,
        params.page,
        params.perPage,
        page.total,
      )
      return {
        value: {
          ...importJobView(job),
          report: {
            data: page.items.map((item) => JSON.parse(item.json) as unknown),
            ...paging,
          },
        },
        rateLimit,
        clientId: claims.clientId,
      }
    })
  }
}

/** The lines of a file: its line feeds, and one more for a last line without one. */
function lineCount(file: Uint8Array): number {
  let lines = 0
  let at = file.indexOf(0x0a)
  let last = -1
  while (at !== -1) {
    lines++
    last = at
    at = file.indexOf(0x0a, at + 1)
  }
  return last === file.byteLength - 1 ? lines : lines + 1
}
