const COMBINING_MARKS = /\p{M}+/gu
const WORD_SEPARATORS = /[^\p{L}\p{N}]+/u

/**
 * Lower-case letters whose mark is part of the letter, so that decomposing leaves them whole (a
 * stroke, a bar, a missing dot), and ligatures, with the plain letters they are searched as: the
 * Latin letters PostgreSQL's `unaccent` and the Unicode Collation Algorithm at primary strength
 * treat so. `Łódź` is found as `lodz`, `Søren` as `soren`, `Straße` as `strasse`.
 */
const UNDECOMPOSED: Readonly<Record<string, string>> = {
  æ: 'ae',
  ð: 'd',
  ø: 'o',
  þ: 'th',
  ß: 'ss',
  đ: 'd',
  ħ: 'h',
  ı: 'i',
  ĳ: 'ij',
  ŀ: 'l',
  ł: 'l',
  ŋ: 'n',
  œ: 'oe',
  ŧ: 't',
}
const UNDECOMPOSED_LETTERS = new RegExp(`[${Object.keys(UNDECOMPOSED).join('')}]`, 'gu')

/**
 * Splits a name or a search query into the words that search compares (D16): decomposed and
 * stripped of accents, lower-cased, letters that carry their mark within them (`ł`, `ø`, `đ`)
 * and ligatures (`æ`, `œ`, `ß`) folded to plain letters, cut at every character that is neither
 * a letter nor a digit. `"D'Angelo Nguyễn"` gives `['d', 'angelo', 'nguyen']`, `'Łódź'`
 * `['lodz']`. Storage adapters index names with this function and the core turns queries into
 * terms with it, so both sides always agree.
 *
 * @example
 * searchTerms('mario ros') // ['mario', 'ros']
 */
export function searchTerms(text: string): string[] {
  const folded = text
    .normalize('NFD')
    .replace(COMBINING_MARKS, '')
    .toLowerCase()
    .replace(UNDECOMPOSED_LETTERS, (letter) => UNDECOMPOSED[letter]!)
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
