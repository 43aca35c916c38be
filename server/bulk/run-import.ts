import type { ImportRow } from './import-rows.js'
import type { RowImporter, RowOutcome } from './row-importer.js'

/** Counts of an import's rows by outcome. */
export interface ImportCounts {
  rows: number
  created: number
  existing: number
  refused: number
}

/** Where an import's run tells what it did. */
export interface ImportSink {
  /** The outcomes of one batch, in row order; awaited before the next batch is read. */
  outcomes(outcomes: readonly RowOutcome[], counts: Readonly<ImportCounts>): void | Promise<void>
}

/** The rows of a batch, at most: one transaction's worth on SQLite, a few statements on PostgreSQL. */
export const DEFAULT_IMPORT_BATCH = 1_000

/**
 * Runs an import: reads `rows` a batch at a time, creates each batch's rows together and hands
 * their outcomes to `sink` before reading on, so that memory holds one batch whatever the size
 * of the file.
 * @throws ImportFileError when the file cannot be read on; StorageUnavailableError when the
 *   storage fails. The batches before it are written, and a run again resumes after them.
 */
export async function runImport(
  rows: AsyncIterable<ImportRow>,
  importer: RowImporter,
  sink: ImportSink,
  batchSize = DEFAULT_IMPORT_BATCH,
): Promise<ImportCounts> {
  const counts: ImportCounts = { rows: 0, created: 0, existing: 0, refused: 0 }
  let batch: ImportRow[] = []
  const flush = async (): Promise<void> => {
    const outcomes = await importer.importBatch(batch)
    batch = []
    for (const outcome of outcomes) {
      counts.rows++
      counts[outcome.outcome]++
    }
    await sink.outcomes(outcomes, counts)
  }
  for await (const row of rows) {
    batch.push(row)
    if (batch.length >= batchSize) await flush()
  }
  if (batch.length > 0) await flush()
  return counts
}
