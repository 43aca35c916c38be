/**
 * The rules of duplicate matching as data (D38): which facts count as evidence that two records
 * are the same person, how much each weighs, and the score from which a record is a match. The
 * default set ships as `default-match-rules.json`; an operator replaces it with a file of the
 * same shape (`serve --match-rules FILE`), checked whole at start.
 */
import { DEFAULT_MATCH_RULES_JSON } from './default-match-rules.js'

/** The kinds of rule, each a comparison of one fact of the candidate and a stored record. */
export const MATCH_RULE_KINDS = [
  'fiscal_code',
  'email',
  'phone',
  'name',
  'date_of_birth',
  'date_of_birth_swapped',
  'date_of_birth_differs',
] as const

/** A kind of rule. */
export type MatchRuleKind = (typeof MATCH_RULE_KINDS)[number]

/** One rule: what fires it and its weight, added to the score when it fires. */
export interface MatchRule {
  readonly rule: MatchRuleKind
  /** From -1 to 1; a negative weight is evidence against (a different date of birth). */
  readonly weight: number
  /** `name` only: the least similarity (0–1) of the folded names that fires the rule. */
  readonly min_similarity?: number
}

/** A rule set: the rules, and the score (0–1) from which a record is a match. */
export interface MatchRules {
  readonly threshold: number
  readonly rules: readonly MatchRule[]
}

/** What is wrong with a rules file: where (line and field) and what. */
export class MatchRulesError extends Error {
  /** 1-based line of the file where the problem is. */
  readonly line: number
  /** The field at fault, dotted (`rules.2.weight`), or empty for the file as a whole. */
  readonly field: string

  constructor(line: number, field: string, problem: string) {
    super(`line ${line}${field === '' ? '' : `, ${field}`}: ${problem}`)
    this.name = 'MatchRulesError'
    this.line = line
    this.field = field
  }
}

const RULE_KEYS = new Set(['rule', 'weight', 'min_similarity'])
const TOP_KEYS = new Set(['threshold', 'rules'])
const KINDS = new Set<string>(MATCH_RULE_KINDS)

/**
 * Parses and checks a rules file's text: JSON of the shape of `default-match-rules.json`.
 * Every problem is reported with the line it is on and the field at fault.
 *
 * @throws MatchRulesError naming the line and field of the first problem.
 *
 * @example
 * parseMatchRules('{"threshold": 0.5, "rules": [{"rule": "email", "weight": 0.6}]}')
 */
export function parseMatchRules(text: string): MatchRules {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new MatchRulesError(lineOfParseError(text), '', 'is not valid JSON')
  }
  const fail = (path: readonly (string | number)[], problem: string): never => {
    throw new MatchRulesError(lineOfPath(text, path), path.join('.'), problem)
  }
  if (!isObject(value)) return fail([], 'must be a JSON object with threshold and rules')
  for (const key of Object.keys(value)) {
    if (!TOP_KEYS.has(key)) fail([key], 'is not a known field (threshold, rules)')
  }
  const threshold = value.threshold
  if (typeof threshold !== 'number' || !(threshold > 0 && threshold <= 1)) {
    fail(['threshold'], 'must be a number greater than 0 and at most 1')
  }
  const rules = value.rules
  if (!Array.isArray(rules) || rules.length === 0) {
    return fail(['rules'], 'must be a non-empty array of rules')
  }
  const seen = new Set<string>()
  const parsed: MatchRule[] = []
  rules.forEach((rule: unknown, index) => {
    if (!isObject(rule)) return fail(['rules', index], 'must be an object')
    for (const key of Object.keys(rule)) {
      if (!RULE_KEYS.has(key)) fail(['rules', index, key], 'is not a known field')
    }
    const kind = rule.rule
    if (typeof kind !== 'string' || !KINDS.has(kind)) {
      fail(['rules', index, 'rule'], `must be one of: ${MATCH_RULE_KINDS.join(', ')}`)
    }
    if (seen.has(kind as string)) fail(['rules', index, 'rule'], 'is given twice')
    seen.add(kind as string)
    const weight = rule.weight
    if (typeof weight !== 'number' || !(weight >= -1 && weight <= 1) || weight === 0) {
      fail(['rules', index, 'weight'], 'must be a number from -1 to 1, not 0')
    }
    const min = rule.min_similarity
    if (min !== undefined && kind !== 'name') {
      fail(['rules', index, 'min_similarity'], 'applies to the name rule only')
    }
    if (min !== undefined && (typeof min !== 'number' || !(min > 0 && min <= 1))) {
      fail(['rules', index, 'min_similarity'], 'must be a number greater than 0 and at most 1')
    }
    parsed.push(
      Object.freeze({
        rule: kind as MatchRuleKind,
        weight: weight as number,
        ...(kind === 'name' && { min_similarity: (min as number | undefined) ?? 0.8 }),
      }),
    )
  })
  if (!parsed.some((rule) => rule.weight > 0)) {
    fail(['rules'], 'must have at least one rule of positive weight')
  }
  return Object.freeze({ threshold: threshold as number, rules: Object.freeze(parsed) })
}

/** The default rule set, as `default-match-rules.json` states it. */
export const DEFAULT_MATCH_RULES: MatchRules = parseMatchRules(DEFAULT_MATCH_RULES_JSON)

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * The line of the first syntax error of `text`, which JSON.parse refused: V8's message names
 * the position only on some versions, so the text is scanned again to find it.
 */
function lineOfParseError(text: string): number {
  return lineAt(text, syntaxErrorOffset(text))
}

/** The offset where `text` stops being JSON (a minimal recursive-descent scan). */
function syntaxErrorOffset(text: string): number {
  let i = 0
  const space = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++
  }
  const fail = (): never => {
    throw i
  }
  const value = (): void => {
    space()
    const c = text[i]
    if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']'
      i++
      space()
      if (text[i] === close) {
        i++
        return
      }
      for (;;) {
        if (c === '{') {
          space()
          if (text[i] !== '"') fail()
          value()
          space()
          if (text[i] !== ':') fail()
          i++
        }
        value()
        space()
        if (text[i] === ',') i++
        else if (text[i] === close) {
          i++
          return
        } else fail()
      }
    }
    if (c === '"') {
      const end = /^"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/.exec(
        text.slice(i),
      )
      if (end === null) fail()
      i += end![0].length
      return
    }
    const literal =
      /^(?:true|false|null|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)/.exec(
        text.slice(i),
      )
    if (literal === null) fail()
    i += literal![0].length
  }
  try {
    value()
    space()
    if (i < text.length) fail()
  } catch (offset) {
    if (typeof offset === 'number') return offset
    throw offset
  }
  return i
}

function lineAt(text: string, offset: number): number {
  let line = 1
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++
  return line
}

/**
 * The line where the value at `path` is written: found by walking the JSON text, which is known
 * to parse. A key that is absent points at the line of its object.
 */
function lineOfPath(text: string, path: readonly (string | number)[]): number {
  let offset = skipSpace(text, 0)
  for (const step of path) {
    const found = childOffset(text, offset, step)
    if (found === undefined) break
    offset = found
  }
  return lineAt(text, offset)
}

function skipSpace(text: string, offset: number): number {
  while (offset < text.length && /\s/.test(text[offset]!)) offset++
  return offset
}

/** Offset of the member `step` of the object or array starting at `offset`. */
function childOffset(text: string, offset: number, step: string | number): number | undefined {
  const open = text[offset]
  if (open !== '{' && open !== '[') return undefined
  let i = skipSpace(text, offset + 1)
  let index = 0
  while (i < text.length && text[i] !== '}' && text[i] !== ']') {
    if (open === '{') {
      const keyEnd = endOfValue(text, i)
      const key = JSON.parse(text.slice(i, keyEnd)) as string
      i = skipSpace(text, keyEnd)
      i = skipSpace(text, i + 1) // the colon
      if (key === step) return i
    } else if (index === step) return i
    i = skipSpace(text, endOfValue(text, i))
    if (text[i] === ',') i = skipSpace(text, i + 1)
    index++
  }
  return undefined
}

/** The offset just past the JSON value starting at `offset`. */
function endOfValue(text: string, offset: number): number {
  const first = text[offset]
  if (first === '"') {
    let i = offset + 1
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1
    return i + 1
  }
  if (first === '{' || first === '[') {
    let depth = 0
    let i = offset
    while (i < text.length) {
      const c = text[i]!
      if (c === '"') {
        i = endOfValue(text, i)
        continue
      }
      if (c === '{' || c === '[') depth++
      else if (c === '}' || c === ']') {
        depth--
        if (depth === 0) return i + 1
      }
      i++
    }
    return i
  }
  let i = offset
  while (i < text.length && !/[\s,}\]]/.test(text[i]!)) i++
  return i
}
