import { stringify } from 'csv-stringify/sync'
import type { BeneficiaryRecord } from '../../core/beneficiary.js'
import type { ExportFormat } from '../../core/bulk-operations.js'
import { detailOf } from '../../core/representation.js'
import { isoTime } from '../../core/time.js'
import { CSV_COLUMNS } from './import-rows.js'

/** The media type of each export format. */
export const EXPORT_MEDIA_TYPES: Readonly<Record<ExportFormat, string>> = Object.freeze({
  ndjson: 'application/x-ndjson; charset=utf-8',
  csv: 'text/csv; charset=utf-8; header=present',
})

/**
 * The export as chunks of UTF-8, one per page of records: NDJSON, one detail object per line (as
 * a GET of the record answers it); or CSV with a header row, in the columns an import reads
 * (`address.street` …, `metadata` as JSON), quoted where needed by csv-stringify. A chunk is
 * made only when the reader asks for it: memory holds a page.
 */
export async function* exportChunks(
  pages: AsyncIterable<readonly BeneficiaryRecord[]>,
  format: ExportFormat,
): AsyncGenerator<Buffer> {
  if (format === 'csv') yield Buffer.from(stringify([CSV_COLUMNS]), 'utf8')
  for await (const records of pages) {
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
