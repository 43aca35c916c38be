import type { Admission } from './admission.js'
import type { BeneficiaryDetail } from './beneficiary.js'
import type { RequestContext, Result } from './beneficiary-service.js'
import { parseId } from './beneficiary-id.js'
import { purposeOf, type AccessRecorder } from './access-recorder.js'
import { NotFoundError, StorageUnavailableError } from './errors.js'
import { pageOf } from './pagination.js'
import type {
  AccessLogStore,
  AccessOperation,
  StoredAccessLogEntry,
} from './ports/access-log-store.js'
import type { BeneficiaryStore } from './ports/beneficiary-store.js'
import type { Clock } from './ports/clock.js'
import { detailOf, historyItemOf } from './representation.js'
import type { HistoryItem, Paged } from './shapes.js'
import { isoTime } from './time.js'
import type { HistoryQueryInput } from './validation/index.js'
import { parseHistoryQuery } from './validation/index.js'

/** One entry of `GET /beneficiaries/{id}/access-log` (D35). */
export interface AccessLogItem {
  /** ISO 8601 UTC. */
  readonly at: string
  readonly client_id: string
  readonly request_id: string
  readonly operation: AccessOperation
  readonly purpose: string | null
}

/** `GET /beneficiaries/{id}/export` (D36): everything held about one person. */
export interface BeneficiaryExport {
  readonly beneficiary: BeneficiaryDetail
  readonly history: readonly HistoryItem[]
  readonly access_log: readonly AccessLogItem[]
  /** ISO 8601 UTC. */
  readonly exported_at: string
}

/** Entries read per call while an export gathers a whole history or log. */
const EXPORT_BATCH = 1000

/** The settings the access-log operations read. */
export interface AccessLogSettings {
  /** Prefix of the paths in pagination links (D18). */
  readonly basePath: string
}

/** `GET /beneficiaries/{id}/access-log` (D35) and `GET /beneficiaries/{id}/export` (D36). */
export class AccessLogOperations {
  readonly #store: BeneficiaryStore
  readonly #log: AccessLogStore | undefined
  readonly #admission: Admission
  readonly #recorder: AccessRecorder
  readonly #clock: Clock
  readonly #settings: AccessLogSettings

  constructor(
    store: BeneficiaryStore,
    log: AccessLogStore | undefined,
    admission: Admission,
    recorder: AccessRecorder,
    clock: Clock,
    settings: AccessLogSettings,
  ) {
    this.#store = store
    this.#log = log
    this.#admission = admission
    this.#recorder = recorder
    this.#clock = clock
    this.#settings = settings
  }

  /** A page of the record's access log, oldest first; 404 when the record does not exist. */
  accessLog(
    ctx: RequestContext,
    id: string | number,
    query: HistoryQueryInput,
  ): Promise<Result<Paged<AccessLogItem>>> {
    return this.#admission.admit('accessLog', ctx, async ({ claims, rateLimit }) => {
      const beneficiaryId = parseId(id)
      const params = parseHistoryQuery(query)
      const log = this.#requireLog()
      if ((await this.#store.get(beneficiaryId)) === undefined) throw notFound()
      // What this instance queued so far is in the answer.
      await log.flush()
      const offset = (params.page - 1) * params.perPage
      const page = await log.forBeneficiary(beneficiaryId, offset, params.perPage)
      const path = `${this.#settings.basePath}/beneficiaries/${beneficiaryId}/access-log`
      const { meta, links } = pageOf(path, params.page, params.perPage, page.total)
      return {
        value: { data: page.items.map(accessLogItemOf), meta, links },
        rateLimit,
        clientId: claims.clientId,
      }
    })
  }

  /** The record, its whole history and its whole access log (D36); recorded as `export`. */
  export(ctx: RequestContext, id: string | number): Promise<Result<BeneficiaryExport>> {
    return this.#admission.admit('export', ctx, async ({ claims, rateLimit }) => {
      const beneficiaryId = parseId(id)
      const purpose = purposeOf(ctx.purpose)
      const log = this.#requireLog()
      const exported = await subjectExport(this.#store, log, beneficiaryId, this.#clock.now())
      if (exported === undefined) throw notFound()
      const wait = this.#recorder.record(ctx, claims.clientId, 'export', [beneficiaryId], purpose)
      if (wait !== undefined) await wait
      return {
        value: exported,
        rateLimit,
        clientId: claims.clientId,
      }
    })
  }

  #requireLog(): AccessLogStore {
    // A storage written before the access log existed cannot answer for it.
    if (this.#log === undefined) throw new StorageUnavailableError('cannot_open')
    return this.#log
  }
}

/**
 * Everything held about the record `id` (D36): the record in the detail shape, its whole
 * history and its whole access log (flushed first, so that what this process queued is in it),
 * oldest first; `undefined` when the record does not exist. The HTTP export and the CLI's
 * `audit export` both make it here.
 */
export async function subjectExport(
  store: BeneficiaryStore,
  log: AccessLogStore,
  id: number,
  now: number,
): Promise<BeneficiaryExport | undefined> {
  const record = await store.get(id)
  if (record === undefined) return undefined
  const history: HistoryItem[] = []
  for (let offset = 0; ; offset += EXPORT_BATCH) {
    const page = await store.history(id, offset, EXPORT_BATCH)
    if (page === undefined) return undefined
    for (const entry of page.items) history.push(historyItemOf(entry))
    if (page.items.length < EXPORT_BATCH) break
  }
  await log.flush()
  const accessLog: AccessLogItem[] = []
  for (let offset = 0; ; offset += EXPORT_BATCH) {
    const page = await log.forBeneficiary(id, offset, EXPORT_BATCH)
    for (const entry of page.items) accessLog.push(accessLogItemOf(entry))
    if (page.items.length < EXPORT_BATCH) break
  }
  return {
    beneficiary: detailOf(record),
    history,
    access_log: accessLog,
    exported_at: isoTime(now),
  }
}

/** An entry as a beneficiary's access log shows it: without the other records of the answer. */
export function accessLogItemOf(entry: StoredAccessLogEntry): AccessLogItem {
  return {
    at: isoTime(entry.at),
    client_id: entry.client_id,
    request_id: entry.request_id,
    operation: entry.operation,
    purpose: entry.purpose,
  }
}

function notFound(): NotFoundError {
  return new NotFoundError('The beneficiary was not found.')
}
