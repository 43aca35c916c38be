/**
 * Compares by Unicode code point, which is also UTF-8 byte order (SQLite's BINARY collation).
 * JavaScript's `<` compares UTF-16 code units instead, which puts astral characters (surrogate
 * pairs, D800–DFFF) before U+E000–U+FFFF.
 */
export function compareCodePoints(a: string, b: string): number {
  const length = Math.min(a.length, b.length)
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x !== y) return codePointRank(x) - codePointRank(y)
  }
  return a.length - b.length
}

// Moves surrogates above U+E000–U+FFFF and those down by the same gap, keeping everything below
// U+D800 in place: comparing the results of two differing code units then gives code-point order.
function codePointRank(unit: number): number {
  if (unit < 0xd800) return unit
  return unit >= 0xe000 ? unit - 0x800 : unit + 0x2000
}
