import type { ProblemList } from './problem-list.js'

// \p{Cs} catches lone surrogates: in a `u` regular expression a well-formed pair is one code
// point and never matches.
const FORBIDDEN = /[\p{Cc}\p{Cs}]/u

/**
 * NFC-normalises and trims a string, recording a problem for `field` when what is left contains a
 * control character or a lone surrogate (D8). Anything that is not a string comes back unchanged,
 * for the schema to report its type.
 */
export function normaliseText(value: unknown, field: string, problems: ProblemList): unknown {
  if (typeof value !== 'string') return value
  const text = value.normalize('NFC').trim()
  if (FORBIDDEN.test(text)) problems.add(field, 'must not contain control characters')
  return text
}

/** True when `text` holds a control character or a lone surrogate (D8). */
export function hasControlCharacters(text: string): boolean {
  return FORBIDDEN.test(text)
}
