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
