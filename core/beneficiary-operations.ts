import type { AccessTokenClaims } from './access-tokens.js'
import { AccessRecorder, purposeOf } from './access-recorder.js'
import type { Admission, Admitted } from './admission.js'
import {
  type BeneficiaryCreated,
  type BeneficiaryDetail,
  type BeneficiaryListItem,
  type BeneficiaryRecord,
  type BeneficiarySummary,
  type FieldChange,
  type HistoryAction,
  type HistoryEntry,
} from './beneficiary.js'
import {
  creationChanges,
  decideStatusChange,
  decideUpdate,
  type Decision,
} from './beneficiary-changes.js'
import { idOf, parseId } from './beneficiary-id.js'
import type { RequestBody, RequestContext, Result } from './beneficiary-service.js'
import { canonicalJson } from './canonical-json.js'
import { randomToken, type Sha256 } from './crypto.js'
import {
  IdempotencyKeyReusedError,
  NotFoundError,
  PreconditionFailedError,
  ValidationError,
} from './errors.js'
import { etagOf, historyEtagOf, ifMatchAdmits } from './etag.js'
import { JsonBytes, SerializedJson } from './json-bytes.js'
import { listQueryOf } from './list-query.js'
import { pageOf } from './pagination.js'
import type { AccessOperation } from './ports/access-log-store.js'
import type { Clock } from './ports/clock.js'
import type { BeneficiaryStore } from './ports/beneficiary-store.js'
import { createdOf, detailOf, historyItemOf, listItemOf, writeListItems } from './representation.js'
import { bodyOf } from './request-body.js'
import type { HistoryItem, Paged } from './shapes.js'
import { isoTime } from './time.js'
import { utf8Encoder } from './utf8.js'
import type { HistoryQueryInput, ListQueryInput } from './validation/index.js'
import {
  parseCreateInput,
  parseHistoryQuery,
  parseListQuery,
  parseStatusInput,
  parseUpdateInput,
} from './validation/index.js'

/** The settings the beneficiary operations read. */
export interface BeneficiarySettings {
  /** How long an Idempotency-Key is remembered (D22). */
  readonly idempotencyTtlSeconds: number
  /** Prefix of the paths in pagination links (D18). */
  readonly basePath: string
}

const MAX_UPDATE_ATTEMPTS = 8
/** The version of a record as `create` stores it. */
const CREATED_VERSION = 1
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/
/** `{"data":`, the start of a list's JSON. */
const DATA_KEY = utf8Encoder.encode('{"data":')

/** The beneficiary resource's operations (specification 4.3–4.7, D7–D18, D22, D23, D27). */
export class BeneficiaryOperations {
  readonly #store: BeneficiaryStore
  readonly #clock: Clock
  readonly #admission: Admission
  readonly #sha256: Sha256
  readonly #settings: BeneficiarySettings
  readonly #json = new JsonBytes()
  readonly #access: AccessRecorder

  /** @param access Records the answers that carry personal data (D35); none by default. */
  constructor(
    store: BeneficiaryStore,
    clock: Clock,
    admission: Admission,
    hash: Sha256,
    settings: BeneficiarySettings,
    access: AccessRecorder = new AccessRecorder(undefined, clock),
  ) {
    this.#store = store
    this.#clock = clock
    this.#admission = admission
    this.#sha256 = hash
    this.#settings = settings
    this.#access = access
  }

  list(ctx: RequestContext, query: ListQueryInput): Promise<Result<Paged<BeneficiaryListItem>>> {
    return this.#listed(ctx, query, (items, { meta, links }) => ({
      data: items.map(listItemOf),
      meta,
      links,
    }))
  }

  /**
   * `list`'s answer serialised: the UTF-8 bytes of `JSON.stringify` of its value, the items
   * written from their summaries (`writeListItems`) without their objects and strings.
   */
  listJson(ctx: RequestContext, query: ListQueryInput): Promise<Result<SerializedJson>> {
    return this.#listed(ctx, query, (items, { meta, links }) => {
      // Written in one turn, after the last await: the writer is shared by the requests in
      // flight, and reset in case an earlier text failed midway.
      const out = this.#json
      out.reset()
      out.raw(DATA_KEY)
      writeListItems(out, items)
      out.text(`,"meta":${JSON.stringify(meta)},"links":${JSON.stringify(links)}}`)
      return new SerializedJson(out.take())
    })
  }

  /** A page of the list (D15–D18), its `meta` and `links`, as `represent` makes them the answer. */
  #listed<T>(
    ctx: RequestContext,
    query: ListQueryInput,
    represent: (items: readonly BeneficiarySummary[], paging: Omit<Paged<unknown>, 'data'>) => T,
  ): Promise<Result<T>> {
    return this.#admission.admit('list', ctx, async ({ claims, rateLimit }) => {
      const params = parseListQuery(query)
      const purpose = purposeOf(ctx.purpose)
      const page = await this.#store.list(listQueryOf(params))
      const items = page.items
      const ids = new Array<number>(items.length)
      for (let i = 0; i < items.length; i++) ids[i] = items[i]!.id
      const wait = this.#access.record(ctx, claims.clientId, 'list', ids, purpose)
      if (wait !== undefined) await wait
      const paging = pageOf(
        `${this.#settings.basePath}/beneficiaries`,
        params.page,
        params.perPage,
        page.total,
        [
          ['search', params.search],
          ['status', params.status],
          ['created_from', params.createdFrom],
          ['created_to', params.createdTo],
          ['sort', params.sortParam],
        ],
      )
      return { value: represent(page.items, paging), rateLimit, clientId: claims.clientId }
    })
  }

  get(ctx: RequestContext, id: string | number): Promise<Result<BeneficiaryDetail>> {
    return this.#admitWithRecord('get', ctx, id, async (admitted, read) => {
      const purpose = purposeOf(ctx.purpose)
      return this.#detailRecorded(ctx, admitted, 'get', purpose, await read())
    })
  }

  create(ctx: RequestContext, body: RequestBody): Promise<Result<BeneficiaryCreated>> {
    return this.#admission.admit('create', ctx, async ({ claims, rateLimit }) => {
      const key = ctx.idempotencyKey
      if (key !== undefined && !IDEMPOTENCY_KEY.test(key)) {
        throw new ValidationError([
          { field: 'Idempotency-Key', message: 'must be 1 to 255 visible ASCII characters' },
        ])
      }
      const now = this.#clock.now()
      const fields = parseCreateInput(bodyOf(body), isoTime(now).slice(0, 10))
      const entry = this.#entry(ctx, claims, now, 'created', creationChanges(fields))
      const claim =
        key === undefined
          ? undefined
          : {
              clientId: claims.clientId,
              key,
              fingerprint: await this.#sha256(canonicalJson(fields)),
              expiresAt: now + this.#settings.idempotencyTtlSeconds * 1000,
              now,
            }
      const outcome = await this.#store.create(
        { ...fields, status: 'pending', created_at: now, updated_at: now },
        entry,
        claim,
      )
      if (outcome.kind === 'created') {
        const { record } = outcome
        return {
          value: createdOf(record.id, record, record.created_at),
          etag: etagOf(record.version),
          rateLimit,
          clientId: claims.clientId,
        }
      }
      if (outcome.fingerprint !== claim?.fingerprint) throw new IdempotencyKeyReusedError()
      // Same key, same body: the original 201 again. Its fields are this request's, by the
      // fingerprint, and its ETag the one of a new record (the store contract: version 1).
      return {
        value: createdOf(outcome.beneficiaryId, fields, outcome.createdAt),
        etag: etagOf(CREATED_VERSION),
        replayed: true,
        rateLimit,
        clientId: claims.clientId,
      }
    })
  }

  update(
    ctx: RequestContext,
    id: string | number,
    body: RequestBody,
  ): Promise<Result<BeneficiaryDetail>> {
    return this.#admitWithRecord('update', ctx, id, async (admitted, read) => {
      const patch = parseUpdateInput(bodyOf(body), isoTime(this.#clock.now()).slice(0, 10))
      const purpose = purposeOf(ctx.purpose)
      const record = await this.#change(ctx, admitted.claims, read, 'updated', (current) =>
        decideUpdate(current, patch),
      )
      return this.#detailRecorded(ctx, admitted, 'update', purpose, record)
    })
  }

  setStatus(
    ctx: RequestContext,
    id: string | number,
    body: RequestBody,
  ): Promise<Result<BeneficiaryDetail>> {
    return this.#admitWithRecord('setStatus', ctx, id, async (admitted, read) => {
      const input = parseStatusInput(bodyOf(body))
      const purpose = purposeOf(ctx.purpose)
      const record = await this.#change(ctx, admitted.claims, read, 'status_changed', (current) =>
        decideStatusChange(current, input),
      )
      return this.#detailRecorded(ctx, admitted, 'status', purpose, record)
    })
  }

  remove(ctx: RequestContext, id: string | number): Promise<Result<null>> {
    return this.#admission.admit('remove', ctx, async ({ claims, rateLimit }) => {
      let expectedVersion: number | undefined
      if (ctx.ifMatch !== undefined) {
        const current = await this.#find(id)
        if (!ifMatchAdmits(ctx.ifMatch, etagOf(current.version)))
          throw new PreconditionFailedError()
        expectedVersion = current.version
      }
      const entry = this.#entry(ctx, claims, this.#clock.now(), 'deleted', [])
      const outcome = await this.#store.remove(parseId(id), expectedVersion, entry)
      if (outcome === 'missing') throw new NotFoundError('The beneficiary was not found.')
      if (outcome === 'conflict') throw new PreconditionFailedError()
      return { value: null, rateLimit, clientId: claims.clientId }
    })
  }

  history(
    ctx: RequestContext,
    id: string | number,
    query: HistoryQueryInput,
  ): Promise<Result<Paged<HistoryItem>>> {
    return this.#admission.admit('history', ctx, async ({ claims, rateLimit }) => {
      const beneficiaryId = parseId(id)
      const params = parseHistoryQuery(query)
      const purpose = purposeOf(ctx.purpose)
      const page = await this.#store.history(
        beneficiaryId,
        (params.page - 1) * params.perPage,
        params.perPage,
      )
      if (page === undefined) throw new NotFoundError('The beneficiary was not found.')
      const wait = this.#access.record(ctx, claims.clientId, 'history', [beneficiaryId], purpose)
      if (wait !== undefined) await wait
      const path = `${this.#settings.basePath}/beneficiaries/${beneficiaryId}/history`
      const { meta, links } = pageOf(path, params.page, params.perPage, page.total)
      return {
        value: { data: page.items.map(historyItemOf), meta, links },
        etag: historyEtagOf(page.total),
        rateLimit,
        clientId: claims.clientId,
      }
    })
  }

  /**
   * Admits `operation` for work that starts from the record `id`, which it reads with `read`
   * (`NotFoundError` when there is none; the first call may answer from the admission, later
   * calls read again). When the store has `getForToken`, the token's check and the first read
   * are one call (one round trip on a database server); else the token is checked first and
   * `read` gets the record.
   */
  #admitWithRecord<T>(
    operation: 'get' | 'update' | 'setStatus',
    ctx: RequestContext,
    id: string | number,
    work: (admitted: Admitted, read: () => Promise<BeneficiaryRecord>) => Promise<Result<T>>,
  ): Promise<Result<T>> {
    const store = this.#store
    const beneficiaryId = idOf(id)
    if (store.getForToken === undefined || beneficiaryId === undefined) {
      return this.#admission.admit(operation, ctx, (admitted) =>
        work(admitted, () => this.#find(id)),
      )
    }
    return this.#admission.admitWithRead(
      operation,
      ctx,
      (token) => store.getForToken!(beneficiaryId, token),
      (admitted, first) => {
        let fresh: BeneficiaryRecord | undefined = first
        return work(admitted, () => {
          const record = fresh
          fresh = undefined
          return record === undefined ? this.#find(beneficiaryId) : Promise.resolve(record)
        })
      },
    )
  }

  /**
   * The detail shape of `record` with its ETag, as get, update and status changes answer, once
   * the answer is recorded (D35): at once, unless the access log's queue is full.
   */
  #detailRecorded(
    ctx: RequestContext,
    { claims, rateLimit }: Admitted,
    operation: AccessOperation,
    purpose: string | null,
    record: BeneficiaryRecord,
  ): Result<BeneficiaryDetail> | Promise<Result<BeneficiaryDetail>> {
    const wait = this.#access.record(ctx, claims.clientId, operation, [record.id], purpose)
    const result: Result<BeneficiaryDetail> = {
      value: detailOf(record),
      etag: etagOf(record.version),
      rateLimit,
      clientId: claims.clientId,
    }
    return wait === undefined ? result : wait.then(() => result)
  }

  async #find(id: string | number): Promise<BeneficiaryRecord> {
    const record = await this.#store.get(parseId(id))
    if (record === undefined) throw new NotFoundError('The beneficiary was not found.')
    return record
  }

  /**
   * Reads, decides and writes with compare-and-swap on the version, so that two racing changes
   * never lose one another: a write that lost the race is decided again on the fresh record,
   * unless the caller pinned the version with If-Match (then it is a 412).
   */
  async #change(
    ctx: RequestContext,
    claims: AccessTokenClaims,
    read: () => Promise<BeneficiaryRecord>,
    action: HistoryAction,
    decide: (current: BeneficiaryRecord) => Decision,
  ): Promise<BeneficiaryRecord> {
    for (let attempt = 0; attempt < MAX_UPDATE_ATTEMPTS; attempt++) {
      const current = await read()
      if (ctx.ifMatch !== undefined && !ifMatchAdmits(ctx.ifMatch, etagOf(current.version))) {
        throw new PreconditionFailedError()
      }
      const { next, changes } = decide(current)
      if (changes.length === 0) return current
      const now = this.#clock.now()
      // Any change moves updated_at (D11), even when the clock has not moved since the last one.
      const updated = {
        ...next,
        updated_at: Math.max(now, current.updated_at + 1),
        version: current.version + 1,
      }
      const outcome = await this.#store.update(
        current,
        updated,
        this.#entry(ctx, claims, now, action, changes),
      )
      if (outcome === 'done') return updated
      if (outcome === 'missing') throw new NotFoundError('The beneficiary was not found.')
      if (ctx.ifMatch !== undefined) throw new PreconditionFailedError()
    }
    throw new Error('the beneficiary kept changing during the update')
  }

  #entry(
    ctx: RequestContext,
    claims: AccessTokenClaims,
    at: number,
    action: HistoryAction,
    changes: readonly FieldChange[],
  ): HistoryEntry {
    return {
      at,
      action,
      client_id: claims.clientId,
      request_id: ctx.requestId ?? randomToken(12),
      changes,
    }
  }
}
