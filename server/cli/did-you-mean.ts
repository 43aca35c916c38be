/**
 * The candidates a mistyped `word` most likely meant: those at the smallest edit distance
 * (insertions, deletions, substitutions and swaps of two neighbours, case aside), when that
 * distance is small for the word's length (one edit in up to five characters, two up to eight,
 * then one more per four); failing that, those that begin with the word, which is how a
 * shortened option reads. Empty when nothing is close: a wild guess helps nobody.
 *
 * @example
 * nearest('cout', ['count', 'seed', 'db']) // ['count']
 * nearest('rate-limit', ['rate-limit-write', 'rate-limit-auth', 'port']) // both rate limits
 */
export function nearest(word: string, candidates: readonly string[]): string[] {
  const typed = word.toLowerCase()
  const allowed = typed.length <= 5 ? 1 : typed.length <= 8 ? 2 : Math.floor(typed.length / 4)
  let best = allowed + 1
  let found: string[] = []
  for (const candidate of candidates) {
    const distance = editDistance(typed, candidate.toLowerCase())
    if (distance > allowed) continue
    if (distance < best) {
      best = distance
      found = [candidate]
    } else if (distance === best) {
      found.push(candidate)
    }
  }
  if (found.length > 0 || typed.length < 3) return found
  return candidates.filter((candidate) => candidate.toLowerCase().startsWith(typed))
}

/**
 * `names` as a question a message can end with: "Did you mean --count?", "Did you mean --a or
 * --b?"; empty when there are none.
 */
export function didYouMean(names: readonly string[]): string {
  if (names.length === 0) return ''
  const shown = names.slice(0, 4)
  const last = shown.pop()!
  return `Did you mean ${shown.length === 0 ? last : `${shown.join(', ')} or ${last}`}?`
}

/** The optimal-string-alignment distance: Levenshtein's, with a swap of neighbours as one edit. */
function editDistance(a: string, b: string): number {
  const rows: number[][] = []
  for (let i = 0; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) {
      if (i === 0) {
        row.push(j)
        continue
      }
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let distance = Math.min(rows[i - 1]![j]! + 1, row[j - 1]! + 1, rows[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        distance = Math.min(distance, rows[i - 2]![j - 2]! + 1)
      }
      row.push(distance)
    }
    rows.push(row)
  }
  return rows[a.length]![b.length]!
}
