import type { BeneficiaryListItem } from '../core/index.js'
import type {
  ApiResult,
  BeneficiaryClientOptions,
  CallOptions,
  ClientCredentials,
  ConditionalOptions,
  CreateOptions,
} from './client-options.js'
import type { BodyOf, ClientOperation, QueryOf, ResponseOf } from './client-routes.js'
import { HttpExchange } from './http-exchange.js'

const NO_OPTIONS: CallOptions = Object.freeze({})

/** What a call of `operation` resolves to. */
type Answer<Operation extends ClientOperation> = Promise<ApiResult<ResponseOf<Operation>>>

/**
 * A typed client of the /v3 API over `fetch`, with no dependency: every operation of the
 * specification and of DECISIONS.md as a method whose body, query and answer types are the
 * service's own. It logs in with client credentials when a call first needs a token, renews the
 * token before it expires and once when the server refuses it, waits out `Retry-After` on 429 and
 * 503 a bounded number of times (idempotent calls, and creates carrying an Idempotency-Key,
 * which it adds by default), and throws `ApiError` with the standard error body.
 *
 * @example
 * import { BeneficiaryClient } from 'beneficiary-service/client'
 *
 * const client = new BeneficiaryClient({
 *   baseUrl: 'http://127.0.0.1:8080/v3',
 *   credentials: { clientId: process.env.CLIENT_ID, clientSecret: process.env.CLIENT_SECRET },
 * })
 * const { value: created } = await client.create({ first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.org' })
 * const { value, etag } = await client.get(created.id)
 * await client.update(created.id, { phone: '+44 20 7946 0000' }, { ifMatch: etag })
 *
 * @throws TypeError from the constructor for a malformed `baseUrl` or option.
 */
export class BeneficiaryClient {
  readonly #exchange: HttpExchange
  readonly #autoKey: boolean
  #credentials: ClientCredentials | undefined

  constructor(options: BeneficiaryClientOptions) {
    this.#credentials = options.credentials
    this.#autoKey = options.autoIdempotencyKey ?? true
    this.#exchange = new HttpExchange(options, () => this.#credentials)
  }

  /**
   * Logs in (specification 4.2) and keeps the tokens for the calls that follow. Other calls log
   * in by themselves; call this to fail early on bad credentials, or to switch credentials.
   * @throws ApiError `invalid_credentials` (401), `insufficient_scope` (403), `rate_limit_exceeded` (429)
   */
  async login(credentials?: ClientCredentials, options: CallOptions = NO_OPTIONS): Answer<'login'> {
    if (credentials !== undefined) this.#credentials = credentials
    const result = await this.#exchange.login(options)
    this.#exchange.tokens.store(result.value)
    return result
  }

  /**
   * Renews the access token now with the refresh token from the login (D4).
   * @throws ApiError `invalid_token` (401) for a refresh token the server no longer takes
   */
  async refresh(options: CallOptions = NO_OPTIONS): Answer<'refresh'> {
    const token = this.#exchange.tokens.refreshToken
    if (token === undefined)
      throw new TypeError('BeneficiaryClient: no refresh token; log in first')
    const result = await this.#exchange.refresh(token, options)
    this.#exchange.tokens.store(result.value)
    return result
  }

  /** Ends the login session (D5) and forgets its tokens; a later call logs in again. */
  async logout(options: CallOptions = NO_OPTIONS): Answer<'logout'> {
    const result = await this.#exchange.send('logout', {}, options)
    this.#exchange.tokens.forget()
    return result
  }

  /**
   * One page of beneficiaries (specification 4.3, D15–D18).
   * @throws ApiError `validation_failed` naming each bad parameter
   */
  list(query: QueryOf<'list'> = {}, options: CallOptions = NO_OPTIONS): Answer<'list'> {
    return this.#exchange.send('list', { query }, options)
  }

  /** Every beneficiary matching `query`, page after page, following `links.next` to the end. */
  async *listAll(
    query: QueryOf<'list'> = {},
    options: CallOptions = NO_OPTIONS,
  ): AsyncGenerator<BeneficiaryListItem, void, undefined> {
    let page = (await this.list(query, options)).value
    yield* page.data
    while (page.links.next !== null) {
      page = (await this.#exchange.send('list', { link: page.links.next }, options)).value
      yield* page.data
    }
  }

  /**
   * Every beneficiary of one snapshot that matches the list's filters, in id order, in the
   * detail shape (D39): read from the NDJSON stream of `GET /beneficiaries/export` as it
   * arrives, so memory holds what the caller has not taken yet. Leaving the loop early closes
   * the stream. Draws from the `bulk` limit class.
   * @throws ApiError `validation_failed` naming every bad filter (422), `rate_limit_exceeded`
   */
  async *exportRecords(
    query: QueryOf<'exportRecords'> = {},
    options: CallOptions = NO_OPTIONS,
  ): AsyncGenerator<ResponseOf<'exportRecords'>> {
    const response = await this.#exchange.answer(
      'exportRecords',
      { query: { ...query, format: 'ndjson' } },
      options,
      'application/x-ndjson',
    )
    if (response.body === null) return
    const decoder = new TextDecoder()
    let pending = ''
    const reader = response.body.getReader()
    try {
      for (;;) {
        const { done, value } = await reader.read()
        pending += done ? decoder.decode() : decoder.decode(value, { stream: true })
        const lines = pending.split('\n')
        pending = lines.pop() ?? ''
        for (const line of lines) {
          if (line !== '') yield JSON.parse(line) as ResponseOf<'exportRecords'>
        }
        if (done) break
      }
      if (pending !== '') yield JSON.parse(pending) as ResponseOf<'exportRecords'>
    } finally {
      await reader.cancel().catch(() => undefined)
    }
  }

  /**
   * Starts an import job for a CSV or NDJSON file (D39): answered 202 with the job, which the
   * server runs in the background; follow it with `getImport`. Draws from the `bulk` class.
   * @throws ApiError `validation_failed` (more rows than allowed), `payload_too_large` (413)
   */
  startImport(
    file: BodyOf<'startImport'>,
    format: 'csv' | 'ndjson',
    query: QueryOf<'startImport'> = {},
    options: CallOptions = NO_OPTIONS,
  ): Answer<'startImport'> {
    const contentType = format === 'csv' ? 'text/csv' : 'application/x-ndjson'
    return this.#exchange.send('startImport', { body: file, contentType, query }, options)
  }

  /**
   * One of your import jobs, with a page of its report: one outcome per row, by row (D39).
   * @throws ApiError `not_found` (404)
   */
  getImport(
    id: string,
    query: QueryOf<'getImport'> = {},
    options: CallOptions = NO_OPTIONS,
  ): Answer<'getImport'> {
    return this.#exchange.send('getImport', { id, query }, options)
  }

  /**
   * One beneficiary in the detail shape, with its ETag (specification 4.4, D23).
   * @throws ApiError `not_found` (404)
   */
  get(id: number, options: CallOptions = NO_OPTIONS): Answer<'get'> {
    return this.#exchange.send('get', { id }, options)
  }

  /**
   * Creates a beneficiary in status `pending` (specification 4.5). Without an `idempotencyKey`
   * a random one is sent (unless `autoIdempotencyKey` is off), so a retry never creates twice.
   * @throws ApiError `validation_failed` naming every bad field (422), `idempotency_key_reused` (422)
   */
  create(body: BodyOf<'create'>, options: CreateOptions = NO_OPTIONS): Answer<'create'> {
    const key =
      options.idempotencyKey ?? (this.#autoKey ? globalThis.crypto.randomUUID() : undefined)
    const headers = key === undefined ? {} : { 'idempotency-key': key }
    return this.#exchange.send('create', { body, headers }, options)
  }

  /**
   * Partial update (D11): `null` clears an optional field. Pass the ETag as `ifMatch` to refuse
   * a change based on a stale read.
   * @throws ApiError `not_found`, `validation_failed`, `precondition_failed` (412)
   */
  update(
    id: number,
    body: BodyOf<'update'>,
    options: ConditionalOptions = NO_OPTIONS,
  ): Answer<'update'> {
    return this.#exchange.send('update', { id, body, headers: ifMatch(options) }, options)
  }

  /**
   * Deletes a beneficiary for good (D13).
   * @throws ApiError `not_found`, `precondition_failed`
   */
  remove(id: number, options: ConditionalOptions = NO_OPTIONS): Answer<'remove'> {
    return this.#exchange.send('remove', { id, headers: ifMatch(options) }, options)
  }

  /**
   * Moves a beneficiary between statuses (D14). Not retried on 429 or 503 (a POST).
   * @throws ApiError `not_found`, `invalid_transition` (422), `precondition_failed`
   */
  setStatus(
    id: number,
    body: BodyOf<'setStatus'>,
    options: ConditionalOptions = NO_OPTIONS,
  ): Answer<'setStatus'> {
    return this.#exchange.send('setStatus', { id, body, headers: ifMatch(options) }, options)
  }

  /**
   * A beneficiary's history, oldest first, paged like the list (D27).
   * @throws ApiError `not_found`, `validation_failed`
   */
  history(
    id: number,
    query: QueryOf<'history'> = {},
    options: CallOptions = NO_OPTIONS,
  ): Answer<'history'> {
    return this.#exchange.send('history', { id, query }, options)
  }

  /**
   * A beneficiary's access log (D35): who read the record, when, how and why, oldest first,
   * paged like the history. Needs a client with the `audit` scope.
   * @throws ApiError `not_found`, `validation_failed`, `insufficient_scope` (403)
   */
  accessLog(
    id: number,
    query: QueryOf<'accessLog'> = {},
    options: CallOptions = NO_OPTIONS,
  ): Answer<'accessLog'> {
    return this.#exchange.send('accessLog', { id, query }, options)
  }

  /**
   * Everything held about a beneficiary (D36): the record, its whole history and its access
   * log, for a subject-access request. Needs the `audit` scope.
   * @throws ApiError `not_found`, `insufficient_scope` (403)
   */
  exportBeneficiary(id: number, options: CallOptions = NO_OPTIONS): Answer<'export'> {
    return this.#exchange.send('export', { id }, options)
  }

  /**
   * The change feed (D33): events after `query.after`, and `next`, where to resume. With
   * `wait`, the server holds an empty answer up to that many seconds until an event arrives.
   * @throws ApiError `validation_failed`, `cursor_expired` (the cursor is older than the events kept)
   */
  events(query: QueryOf<'events'> = {}, options: CallOptions = NO_OPTIONS): Answer<'events'> {
    return this.#exchange.send('events', { query }, options)
  }

  /**
   * The existing records that may be the same person as `candidate` (D38): at most 20, best
   * first, each with its `score` and `reasons`. Every field optional; at least a fiscal code,
   * an e-mail address, a phone number or both names.
   * @throws ApiError `validation_failed` naming every bad field (422)
   */
  match(candidate: BodyOf<'match'>, options: CallOptions = NO_OPTIONS): Answer<'match'> {
    return this.#exchange.send('match', { body: candidate }, options)
  }

  /**
   * The records that may be the same person as the beneficiary `id`, itself left out (D38).
   * @throws ApiError `not_found`
   */
  matches(id: number, options: CallOptions = NO_OPTIONS): Answer<'matches'> {
    return this.#exchange.send('matches', { id }, options)
  }

  /** The server's OpenAPI document. */
  openapi(options: CallOptions = NO_OPTIONS): Answer<'openapi'> {
    return this.#exchange.send('openapi', {}, options)
  }

  /** Liveness (`GET /healthz`). */
  health(options: CallOptions = NO_OPTIONS): Answer<'health'> {
    return this.#exchange.send('health', {}, options)
  }

  /** Readiness (`GET /readyz`): an `ApiError` `service_unavailable` when the database does not answer. */
  ready(options: CallOptions = NO_OPTIONS): Answer<'ready'> {
    return this.#exchange.send('ready', {}, options)
  }
}

function ifMatch(options: ConditionalOptions): Record<string, string> {
  return options.ifMatch === undefined ? {} : { 'if-match': options.ifMatch }
}
