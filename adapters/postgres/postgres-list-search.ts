/**
 * The tsquery of search terms (D16): each term a quoted prefix of a word, all required.
 * `undefined` when a term can be no indexed word's prefix (the search finds nothing).
 *
 * The words are `searchTerms()` output (letters and digits of any script, lower case), stored
 * with `array_to_tsvector`, which keeps them as they are; the query is tsquery input, not text
 * a parser splits, and every term is quoted with its quotes and backslashes escaped, so no
 * input is read as tsquery syntax.
 */
export function searchQuery(terms: readonly string[]): string | undefined {
  if (terms.length === 0 || !terms.every(isSearchable)) return undefined
  return [...new Set(terms)].map((term) => `${quote(term)}:*`).join(' & ')
}

function quote(text: string): string {
  return `'${text.replace(/['\\]/g, (character) => `\\${character}`)}'`
}

/**
 * Whether a term can be the prefix of an indexed word: words are `searchTerms()` output, only
 * letters and digits, lower case. Any other term matches nothing, as in the memory adapter, and
 * never reaches PostgreSQL (whose text type refuses NUL, for one).
 */
function isSearchable(term: string): boolean {
  return SEARCHABLE.test(term) && !ASCII_CAPITALS.test(term)
}

const SEARCHABLE = /^[\p{L}\p{N}]+$/u
const ASCII_CAPITALS = /[A-Z]/
