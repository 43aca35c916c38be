import { randomUUID } from 'node:crypto'
import { subjectExport } from '../../core/access-log-operations.js'
import { purposeOf } from '../../core/access-recorder.js'
import { isDomainError, systemClock } from '../../core/index.js'
import type {
  AccessLogCursor,
  AccessLogScan,
  AccessLogStore,
} from '../../core/ports/access-log-store.js'
import { DAY_MS, isoTime } from '../../core/time.js'
import { CommandFailedError, UsageError } from './cli-error.js'
import { COMMON_OPTIONS, parseCommand, type CliIo } from './cli-io.js'
import { AUDIT_EXPORT_HELP, AUDIT_HELP } from './help.js'
import { Settings } from './settings.js'
import { openCliDatabase, storageTarget } from './storage-target.js'

const OPTIONS = {
  ...COMMON_OPTIONS,
  beneficiary: { type: 'string' },
  client: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  purpose: { type: 'string' },
} as const

/** Entries read per query while the log is written out. */
const BATCH = 1000
/** How often the count is redrawn on a terminal. */
const REDRAW_EVERY_MS = 100
/** The `client_id` an export made by an operator is recorded with (D35). */
export const OPERATOR_CLIENT_ID = 'operator:cli'

/**
 * `beneficiaries audit`: the access log (D35) as NDJSON on standard output, one entry a line,
 * oldest first, filtered by record, client and period; on a terminal, a count of the entries
 * written so far on standard error. `beneficiaries audit export ID`: everything held about one
 * person (D36) as one JSON document, recorded in the access log like the API's export.
 * @throws UsageError for a bad option; CommandFailedError for an unknown record or a storage
 *   without an access log.
 */
export async function auditCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommand(args, OPTIONS, 2)
  const [action, id] = positionals
  if (action !== undefined && action !== 'export') {
    throw new UsageError(`unknown audit command ${JSON.stringify(action)}: say export, or nothing`)
  }
  if (values['help'] === true) {
    io.out(action === 'export' ? AUDIT_EXPORT_HELP : AUDIT_HELP)
    return 0
  }
  const settings = new Settings(values, io.env)
  if (action === 'export') {
    const beneficiaryId = recordId(id, 'audit export needs the beneficiary id')
    let purpose: string | null
    try {
      purpose = purposeOf(typeof values['purpose'] === 'string' ? values['purpose'] : undefined)
    } catch {
      throw new UsageError('must be 1 to 200 visible ASCII characters and spaces', '--purpose')
    }
    const database = await openCliDatabase(storageTarget(settings), { use: 'existing' })
    try {
      const log = accessLogOf(database.storage.accessLog)
      const now = systemClock.now()
      const exported = await subjectExport(database.storage.beneficiaries, log, beneficiaryId, now)
      if (exported === undefined) {
        throw new CommandFailedError(`no beneficiary has the id ${beneficiaryId}`)
      }
      const wait = log.record({
        at: now,
        client_id: OPERATOR_CLIENT_ID,
        request_id: randomUUID(),
        operation: 'export',
        beneficiary_ids: [beneficiaryId],
        purpose,
      })
      if (wait !== undefined) await wait
      io.out(JSON.stringify(exported, null, 2))
      return 0
    } finally {
      await database.close()
    }
  }
  const scan = scanOf(values)
  const database = await openCliDatabase(storageTarget(settings), { use: 'existing' })
  try {
    const log = accessLogOf(database.storage.accessLog)
    let written = 0
    let drawnAt = 0
    const draw = (last: boolean): void => {
      const terminal = io.terminal
      if (terminal === undefined) return
      terminal.write(`\r${written.toLocaleString('en')} entries written${last ? '\n' : ''}`)
    }
    for (let after: AccessLogCursor | undefined; ;) {
      const query =
        after === undefined ? { ...scan, limit: BATCH } : { ...scan, after, limit: BATCH }
      const batch = await log.scan(query).catch((error: unknown) => {
        throw isDomainError(error) ? new CommandFailedError(error.message) : error
      })
      for (const entry of batch) {
        io.out(
          JSON.stringify({
            id: entry.id,
            at: isoTime(entry.at),
            client_id: entry.client_id,
            request_id: entry.request_id,
            operation: entry.operation,
            beneficiary_ids: entry.beneficiary_ids,
            purpose: entry.purpose,
          }),
        )
      }
      written += batch.length
      const now = Date.now()
      if (now - drawnAt >= REDRAW_EVERY_MS) {
        drawnAt = now
        draw(false)
      }
      const last = batch.at(-1)
      if (batch.length < BATCH || last === undefined) break
      after = { at: last.at, id: last.id }
    }
    draw(true)
    return 0
  } finally {
    await database.close()
  }
}

function accessLogOf(log: AccessLogStore | undefined): AccessLogStore {
  if (log === undefined) throw new CommandFailedError('this storage keeps no access log')
  return log
}

function recordId(value: string | undefined, missing: string): number {
  if (value === undefined) throw new UsageError(missing)
  const id = /^[1-9][0-9]{0,15}$/.test(value) ? Number(value) : NaN
  if (!Number.isSafeInteger(id))
    throw new UsageError(`not a beneficiary id: ${JSON.stringify(value)}`)
  return id
}

/** The scan the filters ask for: `--from` and `--to` are days (`--to` included) or instants. */
function scanOf(values: Readonly<Record<string, unknown>>): Omit<AccessLogScan, 'limit'> {
  const beneficiary = values['beneficiary']
  const client = values['client']
  const from = values['from']
  const to = values['to']
  const scan: { -readonly [K in keyof AccessLogScan]?: AccessLogScan[K] } = {}
  if (typeof beneficiary === 'string') {
    scan.beneficiaryId = recordId(beneficiary, '--beneficiary needs an id')
  }
  if (typeof client === 'string') scan.clientId = client
  if (typeof from === 'string') scan.from = instant(from, '--from', false)
  if (typeof to === 'string') scan.before = instant(to, '--to', true)
  if (scan.from !== undefined && scan.before !== undefined && scan.before <= scan.from) {
    throw new UsageError('must come after --from', '--to')
  }
  return scan
}

/** `YYYY-MM-DD` (its start, or the next day's when `through`) or an ISO 8601 instant. */
function instant(text: string, option: string, through: boolean): number {
  const day = /^\d{4}-\d{2}-\d{2}$/.test(text)
  const at = Date.parse(day ? `${text}T00:00:00Z` : text)
  if (Number.isNaN(at) || !/^\d{4}-\d{2}-\d{2}/.test(text)) {
    throw new UsageError('must be a date (2026-11-30) or an ISO 8601 instant', option)
  }
  return day && through ? at + DAY_MS : at
}
