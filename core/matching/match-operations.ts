import type { AccessRecorder } from '../access-recorder.js'
import { purposeOf } from '../access-recorder.js'
import type { Admission, Admitted } from '../admission.js'
import type { BeneficiaryListItem, BeneficiaryRecord } from '../beneficiary.js'
import { idOf } from '../beneficiary-id.js'
import type { RequestBody, RequestContext, Result } from '../beneficiary-service.js'
import { NotFoundError, ValidationError, type FieldProblem } from '../errors.js'
import type { Clock } from '../ports/clock.js'
import type { MatchQuery, MatchStore } from '../ports/match-store.js'
import type { BeneficiaryStore } from '../ports/beneficiary-store.js'
import { listItemOf } from '../representation.js'
import { bodyOf } from '../request-body.js'
import { isoTime } from '../time.js'
import { parseUpdateInput } from '../validation/index.js'
import { nameMatchKey } from './match-keys.js'
import type { MatchRules } from './match-rules.js'
import {
  prepareCandidate,
  scoreMatch,
  type MatchCandidate,
  type MatchReason,
} from './match-score.js'

/** At most this many matches in an answer (D38). */
export const MAX_MATCHES = 20
/** At most this many records the store returns for each key (names, dates of birth). */
const CANDIDATES_PER_KEY = 50

/** One match: the list item shape plus its score and the rules that fired (D38). */
export type BeneficiaryMatch = BeneficiaryListItem & {
  readonly score: number
  readonly reasons: readonly MatchReason[]
}

/** The answer of a match: the matches, best first. */
export interface MatchList {
  readonly data: readonly BeneficiaryMatch[]
}

/**
 * Duplicate matching (D38): `POST /beneficiaries/match` for a candidate, and
 * `GET /beneficiaries/{id}/matches` for a stored record. Reads only; never changes a record.
 * An answer carries other people's data: it is recorded in the access log (D35) with the ids
 * of the matches it returned.
 */
export class MatchOperations {
  readonly #store: MatchStore | undefined
  readonly #records: BeneficiaryStore
  readonly #clock: Clock
  readonly #admission: Admission
  readonly #rules: MatchRules
  readonly #access: AccessRecorder

  constructor(
    store: MatchStore | undefined,
    records: BeneficiaryStore,
    clock: Clock,
    admission: Admission,
    rules: MatchRules,
    access: AccessRecorder,
  ) {
    this.#access = access
    this.#store = store
    this.#records = records
    this.#clock = clock
    this.#admission = admission
    this.#rules = rules
  }

  match(ctx: RequestContext, body: RequestBody): Promise<Result<MatchList>> {
    return this.#admission.admit('match', ctx, async ({ claims, rateLimit }) => {
      const purpose = purposeOf(ctx.purpose)
      const fields = parseCandidate(bodyOf(body), isoTime(this.#clock.now()).slice(0, 10))
      const data = await this.#matchesFor(fields, undefined)
      await this.#recorded(ctx, claims.clientId, data, purpose)
      return { value: { data }, rateLimit, clientId: claims.clientId }
    })
  }

  matchesOf(ctx: RequestContext, id: string | number): Promise<Result<MatchList>> {
    const recordId = idOf(id)
    const answer = async (
      { claims, rateLimit }: Admitted,
      record: BeneficiaryRecord | undefined,
    ): Promise<Result<MatchList>> => {
      const purpose = purposeOf(ctx.purpose)
      if (record === undefined) throw new NotFoundError('The beneficiary was not found.')
      const data = await this.#matchesFor(record, record.id)
      await this.#recorded(ctx, claims.clientId, data, purpose)
      return { value: { data }, rateLimit, clientId: claims.clientId }
    }
    const records = this.#records
    // As a get reads its record: with the token's check, in one round trip, where the store can.
    if (records.getForToken !== undefined && recordId !== undefined) {
      return this.#admission.admitWithRead(
        'matches',
        ctx,
        (token) => records.getForToken!(recordId, token),
        answer,
      )
    }
    return this.#admission.admit('matches', ctx, async (admitted) =>
      answer(admitted, recordId === undefined ? undefined : await records.get(recordId)),
    )
  }

  /** Records an answer's matches (D35); waits only when the log's queue is full. */
  async #recorded(
    ctx: RequestContext,
    clientId: string,
    data: readonly BeneficiaryMatch[],
    purpose: string | null,
  ): Promise<void> {
    const wait = this.#access.record(
      ctx,
      clientId,
      'match',
      data.map((match) => match.id),
      purpose,
    )
    if (wait !== undefined) await wait
  }

  async #matchesFor(
    candidate: MatchCandidate,
    excludeId: number | undefined,
  ): Promise<BeneficiaryMatch[]> {
    const store = this.#store
    if (store === undefined) throw new TypeError('the storage has no match store')
    const prepared = prepareCandidate(candidate)
    const query: {
      -readonly [K in keyof MatchQuery]: MatchQuery[K]
    } = { limit: CANDIDATES_PER_KEY }
    if (prepared.fiscalCode !== undefined) query.fiscalCode = prepared.fiscalCode
    if (prepared.email !== undefined) query.email = prepared.email
    if (prepared.phone !== undefined) query.phone = prepared.phone
    if (prepared.first !== undefined && prepared.last !== undefined) {
      query.name = nameMatchKey(candidate.first_name!, candidate.last_name!)
      // A record found by its name alone fires the name rule at most: worth looking up only
      // when that reaches the threshold.
      const name = this.#rules.rules.find((rule) => rule.rule === 'name')
      if (name !== undefined && name.weight >= this.#rules.threshold) query.nearestNames = true
      if (prepared.dateOfBirth !== undefined) {
        query.datesOfBirth =
          prepared.swappedDateOfBirth === undefined
            ? [prepared.dateOfBirth]
            : [prepared.dateOfBirth, prepared.swappedDateOfBirth]
      }
    }
    if (excludeId !== undefined) query.excludeId = excludeId
    const found = await store.candidates(query)
    const scored: { record: BeneficiaryRecord; score: number; reasons: readonly MatchReason[] }[] =
      []
    for (const record of found) {
      if (record.id === excludeId) continue
      const { score, reasons } = scoreMatch(prepared, record, this.#rules)
      if (score >= this.#rules.threshold) scored.push({ record, score, reasons })
    }
    scored.sort((a, b) => b.score - a.score || a.record.id - b.record.id)
    return scored
      .slice(0, MAX_MATCHES)
      .map(({ record, score, reasons }) => ({ ...listItemOf(record), score, reasons }))
  }
}

/**
 * The candidate of a match: the body validated as an update's (the create body's fields, every
 * one optional), carrying a fiscal code, an e-mail address, a phone number, or both names
 * (D38). Every problem is reported at once: the invalid fields, and the names a candidate
 * without an identifying field lacks.
 * @throws ValidationError `validation_failed` naming every field at fault
 */
function parseCandidate(body: unknown, today: string): MatchCandidate {
  let fields: MatchCandidate
  let problems: readonly FieldProblem[] = []
  try {
    fields = parseUpdateInput(body, today)
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error
    problems = error.details
    // What the body holds, for the check of its identifying fields; the values are not used.
    fields = typeof body === 'object' && body !== null ? (body as MatchCandidate) : {}
  }
  const has = (name: keyof MatchCandidate) => {
    const value = fields[name]
    return value !== undefined && value !== null && value !== ''
  }
  const identified =
    has('fiscal_code') || has('email') || has('phone') || (has('first_name') && has('last_name'))
  const message = 'is required unless fiscal_code, email or phone is given'
  const named = new Set(problems.map((problem) => problem.field))
  const missing = identified
    ? []
    : (['first_name', 'last_name'] as const)
        .filter((name) => !has(name) && !named.has(name))
        .map((field) => ({ field, message }))
  if (problems.length > 0 || missing.length > 0) {
    throw new ValidationError([...problems, ...missing])
  }
  return fields
}
