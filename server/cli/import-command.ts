import { createHash } from 'node:crypto'
import { createReadStream, createWriteStream, statSync, type WriteStream } from 'node:fs'
import { once } from 'node:events'
import { Transform, type TransformCallback } from 'node:stream'
import { systemClock } from '../../core/system-clock.js'
import { ImportFileError, importRows, type ImportFormat } from '../bulk/import-rows.js'
import { RowImporter, type RowOutcome } from '../bulk/row-importer.js'
import { DEFAULT_IMPORT_BATCH, runImport, type ImportCounts } from '../bulk/run-import.js'
import { nodeSha256 } from '../node-sha256.js'
import { IMPORT_HELP } from './bulk-help.js'
import { CommandFailedError, UsageError } from './cli-error.js'
import { COMMON_OPTIONS, parseCommand, type CliIo } from './cli-io.js'
import { Settings } from './settings.js'
import { describeTarget, openCliDatabase, storageTarget } from './storage-target.js'

const FORMATS: readonly ImportFormat[] = ['csv', 'ndjson']
const IMPORT_ID = /^[A-Za-z0-9._-]{1,64}$/

/**
 * `beneficiaries import --file F`: creates a record for every valid row of a CSV or NDJSON file,
 * validated as a POST is, and reports every row's outcome as NDJSON (standard output, or
 * `--report FILE`). The rows are claimed under the import's id (by default the SHA-256 of the
 * file), so the same command again, after a crash or not, creates only what is not in yet.
 */
export async function importCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseCommand(args, {
    ...COMMON_OPTIONS,
    file: { type: 'string' },
    format: { type: 'string' },
    report: { type: 'string' },
    'import-id': { type: 'string' },
    'ignore-assigned': { type: 'boolean' },
    'batch-size': { type: 'string' },
  })
  if (values['help'] === true) {
    io.out(IMPORT_HELP)
    return 0
  }
  const settings = new Settings(values, io.env)
  const file = values['file']
  if (typeof file !== 'string' || file === '') throw new UsageError('import needs --file FILE')
  const format = values['format']
  if (format !== undefined && !FORMATS.includes(format as ImportFormat)) {
    throw new UsageError('must be csv or ndjson', '--format')
  }
  const givenId = values['import-id']
  if (typeof givenId === 'string' && !IMPORT_ID.test(givenId)) {
    throw new UsageError(
      'must be 1 to 64 letters, digits, dots, dashes or underscores',
      '--import-id',
    )
  }
  const batchSize = settings.integer('batch-size', undefined, DEFAULT_IMPORT_BATCH, 1, 10_000)
  let size: number
  try {
    size = statSync(file).size
  } catch (error) {
    throw new CommandFailedError(`cannot read ${file}: ${(error as Error).message}`)
  }
  const target = storageTarget(settings)
  const importId = typeof givenId === 'string' ? givenId : await fileHash(file)
  const database = await openCliDatabase(target)
  const reportPath = values['report']
  const report = typeof reportPath === 'string' && reportPath !== '-' ? reportPath : undefined
  const out = report === undefined ? undefined : await openReport(report)
  const progress = new ImportProgress(size, io)
  try {
    io.err(`import: ${file} into ${describeTarget(target)}, import id ${importId}`)
    const counted = new ByteCount()
    const input = createReadStream(file, { highWaterMark: 256 * 1024 })
    input.on('error', (error) => counted.destroy(error))
    input.pipe(counted)
    const rows = importRows(counted, {
      format: format as ImportFormat | undefined,
      ignoreAssigned: values['ignore-assigned'] === true,
    })
    const importer = new RowImporter(database.storage.beneficiaries, systemClock, nodeSha256, {
      importId,
      clientId: 'import',
      requestId: `import-${importId.slice(0, 48)}`,
    })
    const started = performance.now()
    const counts = await runImport(
      rows,
      importer,
      {
        outcomes: async (outcomes, counts) => {
          const text = outcomes.map(line).join('\n')
          if (out === undefined) io.out(text)
          else if (!out.write(`${text}\n`)) await once(out, 'drain')
          progress.advance(counted.bytes, counts)
        },
      },
      batchSize,
    )
    progress.close()
    const seconds = Math.round((performance.now() - started) / 10) / 100
    io.err(`import: ${summary(counts)} in ${seconds} s`)
    if (out !== undefined) {
      await new Promise<void>((resolve, reject) =>
        out.end((error?: Error) => (error ? reject(error) : resolve())),
      )
      io.out(JSON.stringify({ import_id: importId, ...counts, seconds, report }))
    }
    return 0
  } catch (error) {
    if (error instanceof ImportFileError) {
      throw new CommandFailedError(`${file}: ${error.message}`)
    }
    throw error
  } finally {
    progress.close()
    out?.destroy()
    await database.close()
  }
}

function line(outcome: RowOutcome): string {
  return JSON.stringify(outcome)
}

function summary(counts: ImportCounts): string {
  const n = (value: number): string => value.toLocaleString('en-US')
  return `${n(counts.rows)} rows: ${n(counts.created)} created, ${n(counts.existing)} already in from an earlier run, ${n(counts.refused)} refused`
}

/** The file's SHA-256, hex, cut to 32 characters: the default import id. */
async function fileHash(file: string): Promise<string> {
  const hash = createHash('sha256')
  try {
    for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 })) {
      hash.update(chunk as Buffer)
    }
  } catch (error) {
    throw new CommandFailedError(`cannot read ${file}: ${(error as Error).message}`)
  }
  return hash.digest('hex').slice(0, 32)
}

async function openReport(path: string): Promise<WriteStream> {
  const stream = createWriteStream(path, { mode: 0o600 })
  try {
    await once(stream, 'open')
  } catch (error) {
    throw new CommandFailedError(`cannot write the report ${path}: ${(error as Error).message}`)
  }
  return stream
}

/** Counts the bytes that pass, for the progress. */
class ByteCount extends Transform {
  bytes = 0
  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.byteLength
    done(null, chunk)
  }
}

const REDRAW_EVERY_MS = 100
const LINE_EVERY_MS = 5_000

/** How far the import is, by the bytes of the file read: a bar on a terminal, else a line every 5 s. */
class ImportProgress {
  readonly #total: number
  readonly #io: CliIo
  readonly #started = performance.now()
  #reported = 0
  #open = false

  constructor(total: number, io: CliIo) {
    this.#total = total
    this.#io = io
  }

  advance(bytes: number, counts: Readonly<ImportCounts>): void {
    const now = performance.now()
    const terminal = this.#io.terminal
    if (now - this.#reported < (terminal === undefined ? LINE_EVERY_MS : REDRAW_EVERY_MS)) return
    this.#reported = now
    const share = this.#total === 0 ? 1 : Math.min(1, bytes / this.#total)
    const elapsed = now - this.#started
    const left =
      share > 0 && share < 1 && elapsed > 1000
        ? `, about ${Math.ceil((elapsed * (1 - share)) / share / 1000)} s left`
        : ''
    const text = `${Math.floor(share * 100)}%  ${summary(counts)}${left}`
    if (terminal === undefined) {
      this.#io.err(`import: ${text}`)
      return
    }
    const room = Math.min(30, terminal.columns - text.length - 'import  '.length - 1)
    const bar = room >= 10 ? '█'.repeat(Math.round(share * room)).padEnd(room, '░') : ''
    terminal.write(`\rimport ${bar} ${text}\u001b[K`)
    this.#open = true
  }

  close(): void {
    if (!this.#open) return
    this.#open = false
    this.#io.terminal?.write('\n')
  }
}
