const COMBINING_MARKS = /\p{M}+/gu
const WORD_SEPARATORS = /[^\p{L}\p{N}]+/u

/**
 * Splits a name or a search query into the words that search compares (D16): decomposed and
 * stripped of accents, lower-cased, cut at every character that is neither a letter nor a digit.
 * `"D'Angelo Nguyễn"` gives `['d', 'angelo', 'nguyen']`. Storage adapters index names with this
 * function and the core turns queries into terms with it, so both sides always agree.
 *
 * @example
 * searchTerms('mario ros') // ['mario', 'ros']
 */
export function searchTerms(text: string): string[] {
  const folded = text.normalize('NFD').replace(COMBINING_MARKS, '').toLowerCase()
  return folded.split(WORD_SEPARATORS).filter((word) => word.length > 0)
}

/**
 * The primary key of the name sorts (D15): the name's search words joined by one space, so that
 * case and accents do not decide the order (`'Émile'` sorts with `'emile'`, not after `'Zola'`).
 * Ties on it are broken by the raw name, then by id, both compared by Unicode code point. Every
 * storage adapter sorts names by it: the memory adapter compares it directly, SQLite stores it
 * in a column and sorts with its BINARY collation.
 *
 * @example
 * nameSortKey("D'Angelo") // 'd angelo'
 */
export function nameSortKey(name: string): string {
  return searchTerms(name).join(' ')
}
