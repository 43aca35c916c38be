import type { ProblemList } from './problem-list.js'

// \p{Cs} catches lone surrogates: in a `u` regular expression a well-formed pair is one code
// point and never matches.
const FORBIDDEN = /[\p{Cc}\p{Cs}]/u

// What can hide or disguise text on screen: format characters (bidi overrides, zero-width
// spaces, tags, the soft hyphen, the byte order mark), the other default-ignorable code points
// (Hangul fillers, variation selectors), line and paragraph separators, private use, unassigned
// code points and noncharacters (U+FFFF). The zero-width joiner and non-joiner are part of the
// spelling in Persian and the Indic scripts, so they stay allowed between two letters (or marks)
// unless the first is Latin, Greek, Cyrillic or common, where they only ever make a look-alike.
const HIDDEN = new RegExp(
  [
    '(?![\\u200C\\u200D])[\\p{Default_Ignorable_Code_Point}\\p{Cf}\\p{Co}\\p{Cn}\\p{Zl}\\p{Zp}]',
    '(?<![\\p{L}\\p{M}])[\\u200C\\u200D]',
    '(?<=[\\p{Script=Latin}\\p{Script=Greek}\\p{Script=Cyrillic}\\p{Script=Common}])[\\u200C\\u200D]',
    '[\\u200C\\u200D](?![\\p{L}\\p{M}])',
  ].join('|'),
  'u',
)
const LETTER = /\p{L}/u

/**
 * NFC-normalises and trims a string, recording a problem for `field` when what is left contains a
 * control character or a lone surrogate, or an invisible or formatting character that could make
 * it read as other text than it holds (D8): the rules of every free-text field, names, address
 * lines, metadata values and a status reason alike. Anything that is not a string comes back
 * unchanged, for the schema to report its type.
 */
export function normaliseText(value: unknown, field: string, problems: ProblemList): unknown {
  if (typeof value !== 'string') return value
  const text = value.normalize('NFC').trim()
  if (FORBIDDEN.test(text)) problems.add(field, 'must not contain control characters')
  else if (HIDDEN.test(text)) {
    problems.add(field, 'must not contain invisible or formatting characters')
  }
  return text
}

/**
 * `normaliseText` for a person's name (D8), which must also hold at least one letter. An empty
 * name is left to the schema's "must not be empty".
 */
export function normaliseName(value: unknown, field: string, problems: ProblemList): unknown {
  const text = normaliseText(value, field, problems)
  if (typeof text !== 'string' || text.length === 0) return text
  if (!problems.has(field) && !LETTER.test(text)) {
    problems.add(field, 'must contain at least one letter')
  }
  return text
}

/** True when `text` holds a control character or a lone surrogate (D8). */
export function hasControlCharacters(text: string): boolean {
  return FORBIDDEN.test(text)
}

/** True when `text` holds an invisible or formatting character, as `normaliseText` refuses (D8). */
export function hasHiddenCharacters(text: string): boolean {
  return HIDDEN.test(text)
}
