import { createWriteStream, type WriteStream } from 'node:fs'
import { once } from 'node:events'
import { ValidationError } from '../../core/errors.js'
import {
  exportPages,
  exportQueryOf,
  type ExportFormat,
  type ExportQuery,
} from '../../core/bulk-operations.js'
import { exportChunks } from '../bulk/export-records.js'
import { EXPORT_HELP } from './bulk-help.js'
import { CommandFailedError, UsageError } from './cli-error.js'
import { COMMON_OPTIONS, parseCommand, type CliIo } from './cli-io.js'
import { Settings } from './settings.js'
import { describeTarget, openCliDatabase, storageTarget } from './storage-target.js'

const FORMATS: readonly ExportFormat[] = ['ndjson', 'csv']

/**
 * `beneficiaries export`: every record of one snapshot, in id order, as NDJSON or CSV, to
 * `--out FILE` or standard output, with the list's filters. Memory holds one page.
 */
export async function exportCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseCommand(args, {
    ...COMMON_OPTIONS,
    format: { type: 'string' },
    out: { type: 'string' },
    status: { type: 'string' },
    'created-from': { type: 'string' },
    'created-to': { type: 'string' },
    search: { type: 'string' },
  })
  if (values['help'] === true) {
    io.out(EXPORT_HELP)
    return 0
  }
  const settings = new Settings(values, io.env)
  const format = (values['format'] ?? 'ndjson') as ExportFormat
  if (!FORMATS.includes(format)) throw new UsageError('must be ndjson or csv', '--format')
  let query: ExportQuery
  try {
    query = exportQueryOf({
      ...(typeof values['status'] === 'string' && { status: values['status'] }),
      ...(typeof values['created-from'] === 'string' && { created_from: values['created-from'] }),
      ...(typeof values['created-to'] === 'string' && { created_to: values['created-to'] }),
      ...(typeof values['search'] === 'string' && { search: values['search'] }),
    } as Parameters<typeof exportQueryOf>[0])
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error
    const first = error.details[0]!
    throw new UsageError(first.message, `--${first.field.replace('_', '-')}`)
  }
  const target = storageTarget(settings)
  const database = await openCliDatabase(target, { use: 'existing' })
  const bulk = database.storage.bulk
  const path = values['out']
  let out: WriteStream | undefined
  try {
    if (bulk === undefined) throw new CommandFailedError('this storage cannot export')
    if (typeof path === 'string' && path !== '-') {
      out = createWriteStream(path, { mode: 0o600 })
      await once(out, 'open').catch((error: Error) => {
        throw new CommandFailedError(`cannot write ${path}: ${error.message}`)
      })
    }
    const stream = out ?? process.stdout
    let bytes = 0
    const started = performance.now()
    for await (const chunk of exportChunks(exportPages(bulk, query), format)) {
      bytes += chunk.byteLength
      if (!stream.write(chunk)) await once(stream, 'drain')
    }
    if (out !== undefined) {
      const written = out
      await new Promise<void>((resolve, reject) =>
        written.end((error?: Error | null) => (error ? reject(error) : resolve())),
      )
    }
    const seconds = Math.round((performance.now() - started) / 10) / 100
    io.err(
      `export: ${bytes.toLocaleString('en-US')} bytes of ${format} from ${describeTarget(target)} in ${seconds} s`,
    )
    return 0
  } finally {
    out?.destroy()
    await database.close()
  }
}
