import { Transform, type Readable, type TransformCallback } from 'node:stream'
import { parse, type CsvError } from 'csv-parse'
import { ASSIGNED_FIELDS, WRITABLE_FIELDS } from '../../core/beneficiary.js'
import { parseJsonBody } from '../json-body.js'
import { MAX_BODY_BYTES } from '../transports/transport.js'

/** The formats an import reads: CSV with a header row, or one JSON object per line. */
export type ImportFormat = 'csv' | 'ndjson'

/**
 * One row of an import file: its number (CSV: the data record, header not counted; NDJSON: the
 * line), and either the create body it stands for, or why it cannot be one (a line that is not
 * JSON, a CSV record that does not fit the header): a 400 as a POST with that body would get.
 */
export type ImportRow =
  | { readonly row: number; readonly body: unknown }
  | {
      readonly row: number
      readonly problem: { readonly status: 400 | 413; readonly message: string }
    }

/** The whole file cannot be imported: an unknown column, invalid UTF-8, an empty file. */
export class ImportFileError extends Error {
  override readonly name = 'ImportFileError'
}

/** How an import reads its rows. */
export interface ImportRowsOptions {
  /** The format; detected from the first byte that is not a BOM or white space when absent. */
  readonly format?: ImportFormat | undefined
  /**
   * Drop the fields the service assigns (`id`, `status`, `created_at`, `updated_at`) from every
   * row, so that an export imports as it is. Without it they are refused, as a POST refuses them.
   */
  readonly ignoreAssigned?: boolean | undefined
}

const BOM = [0xef, 0xbb, 0xbf]
const ASSIGNED = new Set<string>(ASSIGNED_FIELDS)
const ADDRESS_COLUMNS = ['address.street', 'address.city', 'address.postal_code', 'address.country']

/**
 * The columns a CSV import knows, in the order an export writes them: the writable fields, the
 * address as four dotted columns, `metadata` as a JSON object, and the assigned fields.
 */
export const CSV_COLUMNS: readonly string[] = Object.freeze([
  'id',
  ...WRITABLE_FIELDS.flatMap((field) => (field === 'address' ? ADDRESS_COLUMNS : [field])),
  'status',
  'created_at',
  'updated_at',
])
const KNOWN_COLUMNS = new Set(CSV_COLUMNS)

/**
 * The rows of an import file read from `input`, one at a time, in constant memory: the file is
 * never held whole. CSV is parsed by csv-parse (quotes, embedded line breaks, CRLF), with the
 * delimiter of its header line: `;` when it has more semicolons than commas (as Excel writes in
 * Italian and other locales), else `,`. A UTF-8 byte order mark is skipped; bytes that are not
 * UTF-8 stop the import with an `ImportFileError`, as does a header with an unknown or
 * repeated column.
 *
 * CSV cells map to the create body: an empty cell is an absent field; `address.street` … the
 * four parts of `address` (present when any is); `metadata` a JSON object (text that is not JSON
 * stays text, which validation then refuses as not an object).
 */
export async function* importRows(
  input: Readable,
  options: ImportRowsOptions = {},
): AsyncGenerator<ImportRow> {
  const checked = input.pipe(new Utf8Check())
  input.on('error', (error) => checked.destroy(error))
  const iterator = checked[Symbol.asyncIterator]() as AsyncIterator<Buffer>
  // The first chunks, up to the first line's end, tell the format and the delimiter.
  const head: Buffer[] = []
  let headBytes = 0
  for (;;) {
    const next = await iterator.next()
    if (next.done === true) break
    head.push(next.value)
    headBytes += next.value.byteLength
    if (next.value.includes(0x0a) || headBytes > MAX_BODY_BYTES) break
  }
  const start = stripBom(head.length === 1 ? head[0]! : Buffer.concat(head))
  const format = options.format ?? detectFormat(start)
  const rest = (async function* () {
    yield start
    for (;;) {
      const next = await iterator.next()
      if (next.done === true) return
      yield next.value
    }
  })()
  if (format === 'ndjson') {
    yield* ndjsonRows(rest, options.ignoreAssigned === true)
  } else {
    yield* csvRows(rest, delimiterOf(start), options.ignoreAssigned === true)
  }
}

function stripBom(bytes: Buffer): Buffer {
  return bytes[0] === BOM[0] && bytes[1] === BOM[1] && bytes[2] === BOM[2]
    ? bytes.subarray(3)
    : bytes
}

/** NDJSON when the first character that is not white space is `{`; CSV otherwise. */
export function detectFormat(start: Buffer): ImportFormat {
  const text = stripBom(start).toString('utf8', 0, Math.min(start.byteLength, 4096))
  return text.trimStart().startsWith('{') ? 'ndjson' : 'csv'
}

/** `;` when the first line has more semicolons than commas, outside double quotes; else `,`. */
function delimiterOf(start: Buffer): string {
  const end = start.indexOf(0x0a)
  const line = start.toString('utf8', 0, end === -1 ? start.byteLength : end)
  let commas = 0
  let semicolons = 0
  let quoted = false
  for (const char of line) {
    if (char === '"') quoted = !quoted
    else if (!quoted && char === ',') commas++
    else if (!quoted && char === ';') semicolons++
  }
  return semicolons > commas ? ';' : ','
}

/** The create body of one NDJSON line, parsed as a POST body is (D12), or its 400. */
async function* ndjsonRows(
  chunks: AsyncIterable<Buffer>,
  ignoreAssigned: boolean,
): AsyncGenerator<ImportRow> {
  let line = 0
  for await (const bytes of lines(chunks)) {
    line++
    if (isBlank(bytes)) continue
    if (bytes === TOO_LONG) {
      yield {
        row: line,
        problem: { status: 413, message: `The line is larger than ${MAX_BODY_BYTES} bytes.` },
      }
      continue
    }
    const parsed = parseJsonBody(bytes)
    if (!parsed.ok) {
      yield { row: line, problem: { status: 400, message: lineMessage(parsed.message) } }
      continue
    }
    yield { row: line, body: ignoreAssigned ? withoutAssigned(parsed.value) : parsed.value }
  }
}

/** "The request body is not valid JSON." as said of a line. */
function lineMessage(message: string): string {
  return message.replace('The request body', 'The line')
}

function withoutAssigned(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value
  const copy: Record<string, unknown> = {}
  for (const key of Object.keys(value)) {
    if (ASSIGNED.has(key)) continue
    Object.defineProperty(copy, key, {
      value: (value as Record<string, unknown>)[key],
      enumerable: true,
      writable: true,
      configurable: true,
    })
  }
  return copy
}

const TOO_LONG = Buffer.alloc(0)

function isBlank(bytes: Buffer): boolean {
  if (bytes === TOO_LONG) return false
  for (const byte of bytes) {
    if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0d) return false
  }
  return true
}

/**
 * The lines of a byte stream, without their `\n` (or `\r\n`), as bytes: a line longer than a
 * POST body may be comes out as `TOO_LONG`, its bytes dropped as they arrive.
 */
async function* lines(chunks: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  let pending: Buffer[] = []
  let pendingBytes = 0
  let tooLong = false
  for await (const chunk of chunks) {
    let from = 0
    for (;;) {
      const end = chunk.indexOf(0x0a, from)
      if (end === -1) break
      const piece = chunk.subarray(from, end)
      if (tooLong || pendingBytes + piece.byteLength > MAX_BODY_BYTES) {
        yield TOO_LONG
      } else {
        const line = pending.length === 0 ? piece : Buffer.concat([...pending, piece])
        yield trimCr(line)
      }
      pending = []
      pendingBytes = 0
      tooLong = false
      from = end + 1
    }
    const tail = chunk.subarray(from)
    if (tooLong) continue
    if (pendingBytes + tail.byteLength > MAX_BODY_BYTES) {
      tooLong = true
      pending = []
      pendingBytes = 0
      continue
    }
    if (tail.byteLength > 0) {
      // A copy: the chunk may be a slice of a buffer the stream reuses.
      pending.push(Buffer.from(tail))
      pendingBytes += tail.byteLength
    }
  }
  if (tooLong) yield TOO_LONG
  else if (pendingBytes > 0) yield trimCr(Buffer.concat(pending))
}

function trimCr(line: Buffer): Buffer {
  return line.byteLength > 0 && line[line.byteLength - 1] === 0x0d
    ? line.subarray(0, line.byteLength - 1)
    : line
}

/** A CSV record that could not be parsed, kept until the records before it are out. */
interface Skipped {
  readonly line: number
  readonly message: string
}

/** The create bodies of a CSV file's records, by its header. */
async function* csvRows(
  chunks: AsyncIterable<Buffer>,
  delimiter: string,
  ignoreAssigned: boolean,
): AsyncGenerator<ImportRow> {
  const skipped: Skipped[] = []
  const parser = parse({
    delimiter,
    bom: true,
    relax_column_count: true,
    relax_quotes: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    info: true,
    max_record_size: MAX_BODY_BYTES,
  })
  parser.on('skip', (error: CsvError) => {
    const lines = (error as { lines?: unknown }).lines
    skipped.push({ line: typeof lines === 'number' ? lines : 0, message: csvMessage(error) })
  })
  const feeding = (async () => {
    for await (const chunk of chunks) {
      if (!parser.write(chunk)) await new Promise((resolve) => parser.once('drain', resolve))
    }
    parser.end()
  })()
  feeding.catch((error: unknown) => parser.destroy(error as Error))
  let header: Header | undefined
  let row = 0
  for await (const { record, info } of parser as AsyncIterable<{
    record: string[]
    info: { lines: number }
  }>) {
    if (header === undefined) {
      header = headerOf(record, ignoreAssigned)
      continue
    }
    while (skipped.length > 0 && skipped[0]!.line < info.lines) {
      row++
      yield { row, problem: { status: 400, message: skipped.shift()!.message } }
    }
    row++
    if (record.length !== header.columns.length) {
      yield {
        row,
        problem: {
          status: 400,
          message: `The record has ${record.length} cells; the header has ${header.columns.length}.`,
        },
      }
      continue
    }
    yield { row, body: bodyOf(header, record) }
  }
  await feeding
  if (header === undefined) throw new ImportFileError('the file has no header row')
  for (const { message } of skipped) {
    row++
    yield { row, problem: { status: 400, message } }
  }
}

/** What csv-parse says of a record it could not read, without the record's text. */
function csvMessage(error: CsvError): string {
  switch (error.code) {
    case 'CSV_QUOTE_NOT_CLOSED':
      return 'The record has a quote that is never closed.'
    case 'CSV_INVALID_CLOSING_QUOTE':
      return 'The record has a character right after a closing quote.'
    case 'CSV_MAX_RECORD_SIZE':
      return `The record is larger than ${MAX_BODY_BYTES} bytes.`
    default:
      return 'The record is not valid CSV.'
  }
}

/** The header of a CSV file: each cell's column, `undefined` for an assigned one dropped. */
interface Header {
  readonly columns: readonly (string | undefined)[]
}

function headerOf(cells: readonly string[], ignoreAssigned: boolean): Header {
  const seen = new Set<string>()
  const columns = cells.map((cell) => {
    const name = cell.trim()
    if (!KNOWN_COLUMNS.has(name)) {
      throw new ImportFileError(
        `the header names an unknown column ${JSON.stringify(name.slice(0, 64))}; the columns are ${CSV_COLUMNS.join(', ')}`,
      )
    }
    if (seen.has(name)) throw new ImportFileError(`the header names the column ${name} twice`)
    seen.add(name)
    if (ASSIGNED.has(name)) {
      if (ignoreAssigned) return undefined
      // Kept, so that every row is refused as a POST naming it would be (D9).
    }
    return name
  })
  return { columns }
}

/** The create body of one CSV record: empty cells are absent fields. */
function bodyOf(header: Header, record: readonly string[]): unknown {
  const body: Record<string, unknown> = {}
  let address: Record<string, unknown> | undefined
  for (let i = 0; i < record.length; i++) {
    const column = header.columns[i]
    const cell = record[i]!
    if (column === undefined || cell === '') continue
    if (column.startsWith('address.')) {
      address ??= {}
      address[column.slice('address.'.length)] = cell
    } else if (column === 'metadata') {
      const parsed = parseJsonBody(Buffer.from(cell, 'utf8'))
      body['metadata'] = parsed.ok ? parsed.value : cell
    } else {
      body[column] = cell
    }
  }
  if (address !== undefined) body['address'] = address
  return body
}

/**
 * Passes bytes through unchanged, failing with an `ImportFileError` at the first that is not
 * UTF-8 (a sequence cut between two chunks is carried over, not refused).
 */
class Utf8Check extends Transform {
  readonly #decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
  #offset = 0

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    try {
      this.#decoder.decode(chunk, { stream: true })
    } catch {
      done(new ImportFileError(`the file is not UTF-8 (near byte ${this.#offset})`))
      return
    }
    this.#offset += chunk.byteLength
    done(null, chunk)
  }

  override _flush(done: TransformCallback): void {
    try {
      this.#decoder.decode()
    } catch {
      done(new ImportFileError('the file is not UTF-8: it ends within a character'))
      return
    }
    done()
  }
}
