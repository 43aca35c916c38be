import type { BeneficiaryRecord } from '../beneficiary.js'
import { searchTerms } from '../search-terms.js'
import { emailMatchKey, phoneMatchKey, swappedDate } from './match-keys.js'
import type { MatchRuleKind, MatchRules } from './match-rules.js'

/** The facts of a candidate that matching compares; each may be missing. */
export interface MatchCandidate {
  readonly first_name?: string | null | undefined
  readonly last_name?: string | null | undefined
  readonly email?: string | null | undefined
  readonly phone?: string | null | undefined
  readonly date_of_birth?: string | null | undefined
  readonly fiscal_code?: string | null | undefined
}

/** A rule that fired, with its weight (D38). */
export interface MatchReason {
  readonly rule: MatchRuleKind
  readonly weight: number
}

/** How far a record matches a candidate: its score (0–1) and the rules that fired. */
export interface MatchScore {
  readonly score: number
  readonly reasons: readonly MatchReason[]
}

/** A candidate's facts folded once, to be compared with many records. */
export interface PreparedCandidate {
  readonly fiscalCode: string | undefined
  readonly email: string | undefined
  readonly phone: string | undefined
  readonly first: string | undefined
  readonly last: string | undefined
  readonly dateOfBirth: string | undefined
  readonly swappedDateOfBirth: string | undefined
}

/** Folds a candidate's facts for {@link scoreMatch}. */
export function prepareCandidate(candidate: MatchCandidate): PreparedCandidate {
  const present = (value: string | null | undefined) =>
    value === null || value === undefined || value === '' ? undefined : value
  const dob = present(candidate.date_of_birth)
  const phone = present(candidate.phone)
  const email = present(candidate.email)
  const first = present(candidate.first_name)
  const last = present(candidate.last_name)
  return {
    fiscalCode: present(candidate.fiscal_code)?.toUpperCase(),
    email: email === undefined ? undefined : emailMatchKey(email),
    phone: phone === undefined ? undefined : phoneMatchKey(phone),
    first: first === undefined ? undefined : searchTerms(first).join(' '),
    last: last === undefined ? undefined : searchTerms(last).join(' '),
    dateOfBirth: dob,
    swappedDateOfBirth: dob === undefined ? undefined : swappedDate(dob),
  }
}

/**
 * Scores a stored record against a prepared candidate with `rules`: the sum of the weights of
 * the rules that fire, kept within 0–1, with those rules as the reasons, in the rule set's order.
 * A rule fires only when both sides have the facts it compares:
 *
 * - `fiscal_code`: the same fiscal code;
 * - `email`: the same address, compared lower-cased;
 * - `phone`: the same number in E.164 (a national number read as Italian);
 * - `name`: first and last names similar (see {@link nameSimilarity}) at least `min_similarity`,
 *   also when one side has them the other way round;
 * - `date_of_birth`: the same date; `date_of_birth_swapped`: the same with day and month
 *   swapped; `date_of_birth_differs`: neither.
 */
export function scoreMatch(
  candidate: PreparedCandidate,
  record: BeneficiaryRecord,
  rules: MatchRules,
): MatchScore {
  const reasons: MatchReason[] = []
  let total = 0
  for (const { rule, weight, min_similarity } of rules.rules) {
    if (fires(rule, candidate, record, min_similarity ?? 0.8)) {
      reasons.push({ rule, weight })
      total += weight
    }
  }
  const score = Math.round(Math.min(1, Math.max(0, total)) * 1000) / 1000
  return { score, reasons }
}

function fires(
  rule: MatchRuleKind,
  candidate: PreparedCandidate,
  record: BeneficiaryRecord,
  minSimilarity: number,
): boolean {
  switch (rule) {
    case 'fiscal_code':
      return candidate.fiscalCode !== undefined && candidate.fiscalCode === record.fiscal_code
    case 'email':
      return candidate.email !== undefined && candidate.email === emailMatchKey(record.email)
    case 'phone':
      return (
        candidate.phone !== undefined &&
        record.phone !== null &&
        samePhone(candidate.phone, record.phone)
      )
    case 'name':
      return (
        candidate.first !== undefined &&
        candidate.last !== undefined &&
        nameSimilarity(
          candidate.first,
          candidate.last,
          searchTerms(record.first_name).join(' '),
          searchTerms(record.last_name).join(' '),
        ) >= minSimilarity
      )
    case 'date_of_birth':
      return candidate.dateOfBirth !== undefined && candidate.dateOfBirth === record.date_of_birth
    case 'date_of_birth_swapped':
      return (
        candidate.swappedDateOfBirth !== undefined &&
        candidate.swappedDateOfBirth === record.date_of_birth
      )
    case 'date_of_birth_differs':
      return (
        candidate.dateOfBirth !== undefined &&
        record.date_of_birth !== null &&
        candidate.dateOfBirth !== record.date_of_birth &&
        candidate.swappedDateOfBirth !== record.date_of_birth
      )
  }
}

/**
 * Whether a stored phone is the number `e164`. Parsing costs tens of microseconds, and most
 * candidates' phones differ: a number's last digits survive every way of writing it, so a
 * phone whose last six digits differ is another number without being parsed.
 */
function samePhone(e164: string, phone: string): boolean {
  if (phone === e164) return true
  if (phone.slice(-6) !== e164.slice(-6)) return false
  return phoneMatchKey(phone) === e164
}

/**
 * How alike two people's folded names are, 0–1: the mean of the similarities of the first names
 * and of the last names, or of each with the other's, whichever is higher (names given the
 * other way round). The similarity of two words is 1 less their optimal-string-alignment
 * distance (an insertion, deletion, substitution or swap of two neighbours counts one) over the
 * longer one's length: `rossi`/`rosi` is 0.8, `maria`/`mraia` 0.8.
 */
export function nameSimilarity(
  first: string,
  last: string,
  otherFirst: string,
  otherLast: string,
): number {
  const straight = (similarity(first, otherFirst) + similarity(last, otherLast)) / 2
  if (straight === 1) return 1
  const crossed = (similarity(first, otherLast) + similarity(last, otherFirst)) / 2
  return Math.max(straight, crossed)
}

/** 1 less the optimal-string-alignment distance of `a` and `b` over the longer length. */
export function similarity(a: string, b: string): number {
  if (a === b) return 1
  const longest = Math.max(a.length, b.length)
  if (longest === 0) return 1
  return 1 - osaDistance(a, b) / longest
}

// Three rows of the dynamic programme, kept between calls: names are short.
let rows: [Int32Array, Int32Array, Int32Array] = [
  new Int32Array(64),
  new Int32Array(64),
  new Int32Array(64),
]

/** The optimal-string-alignment distance (Damerau–Levenshtein without repeated edits). */
function osaDistance(a: string, b: string): number {
  const m = a.length
  const n = b.length
  if (n + 1 > rows[0].length) {
    rows = [new Int32Array(n + 1), new Int32Array(n + 1), new Int32Array(n + 1)]
  }
  let [before, previous, current] = rows
  for (let j = 0; j <= n; j++) previous[j] = j
  for (let i = 1; i <= m; i++) {
    current[0] = i
    const ai = a.charCodeAt(i - 1)
    for (let j = 1; j <= n; j++) {
      const bj = b.charCodeAt(j - 1)
      const cost = ai === bj ? 0 : 1
      let value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost)
      if (i > 1 && j > 1 && ai === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === bj) {
        value = Math.min(value, before[j - 2]! + 1)
      }
      current[j] = value
    }
    ;[before, previous, current] = [previous, current, before]
  }
  return previous[n]!
}
