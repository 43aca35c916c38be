import { stringify } from 'csv-stringify/sync'
import type { BeneficiaryRecord } from '../../core/beneficiary.js'
import type { BulkStore, SnapshotFilter } from '../../core/ports/bulk-store.js'
import { detailOf } from '../../core/representation.js'
import { searchTerms } from '../../core/search-terms.js'
import { DAY_MS, isoTime } from '../../core/time.js'
import { parseListQuery } from '../../core/validation/index.js'
import type { ListQueryInput } from '../../core/validation/index.js'
import { CSV_COLUMNS } from './import-rows.js'

/** The formats of an export. */
export type ExportFormat = 'ndjson' | 'csv'

/** Records per page read from the snapshot, and per chunk written. */
export const EXPORT_PAGE = 500

/** Which records an export takes: the storage's filter, and the list's search on top. */
export interface ExportQuery {
  readonly filter: SnapshotFilter
  /** The list's search terms (D16): every one a prefix of a word of the names. */
  readonly search?: readonly string[] | undefined
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

/** Whether `record` matches the list's search `terms`, as the stores match it. */
function matches(record: BeneficiaryRecord, terms: readonly string[]): boolean {
  const words = searchTerms(`${record.first_name} ${record.last_name}`)
  return terms.every((term) => words.some((word) => word.startsWith(term)))
}

/**
 * The export as chunks of UTF-8, one per page of the snapshot: NDJSON, one detail object per
 * line (as a GET of the record answers it); or CSV with a header row, in the columns an import
 * reads (`address.street` …, `metadata` as JSON), quoted where needed by csv-stringify. The
 * caller reads the next chunk only once it has written the last: memory holds a page.
 */
export async function* exportChunks(
  bulk: BulkStore,
  query: ExportQuery,
  format: ExportFormat,
): AsyncGenerator<Buffer> {
  if (format === 'csv') yield Buffer.from(stringify([CSV_COLUMNS]), 'utf8')
  for await (const page of bulk.snapshot(query.filter, EXPORT_PAGE)) {
    const records =
      query.search === undefined ? page : page.filter((record) => matches(record, query.search!))
    if (records.length === 0) continue
    if (format === 'ndjson') {
      let text = ''
      for (const record of records) text += `${JSON.stringify(detailOf(record))}\n`
      yield Buffer.from(text, 'utf8')
    } else {
      yield Buffer.from(stringify(records.map(csvRow)), 'utf8')
    }
  }
}

/** A record's cells in the order of `CSV_COLUMNS`: null as an empty cell. */
function csvRow(record: BeneficiaryRecord): string[] {
  const address = record.address
  const cells: Record<string, string> = {
    id: String(record.id),
    first_name: record.first_name,
    last_name: record.last_name,
    email: record.email,
    phone: record.phone ?? '',
    date_of_birth: record.date_of_birth ?? '',
    fiscal_code: record.fiscal_code ?? '',
    'address.street': address?.street ?? '',
    'address.city': address?.city ?? '',
    'address.postal_code': address?.postal_code ?? '',
    'address.country': address?.country ?? '',
    metadata: JSON.stringify(record.metadata),
    status: record.status,
    created_at: isoTime(record.created_at),
    updated_at: isoTime(record.updated_at),
  }
  return CSV_COLUMNS.map((column) => cells[column]!)
}
