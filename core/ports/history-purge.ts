/**
 * Retention of the history (D37): deletes the oldest history entries, of any record, older
 * than an instant. Only an operator's explicit maximum age calls it; by default the history is
 * kept while its record exists (D27).
 */
export interface HistoryPurge {
  /** Deletes at most `limit` history entries older than `before`; how many it deleted. */
  purge(before: number, limit: number): Promise<number>
}
