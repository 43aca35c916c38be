import type { FieldChange, HistoryAction, HistoryEntry } from '../../core/beneficiary.js'

/** The columns of an entry of `beneficiary_history`, in the order {@link entryOf} reads them. */
export const ENTRY_COLUMNS = ['at', 'action', 'client_id', 'request_id', 'changes'] as const

/** The values of an entry's columns, by name: the slots of a statement that appends it. */
export function entryValues(entry: HistoryEntry): {
  readonly [C in (typeof ENTRY_COLUMNS)[number]]: string | number
} {
  return {
    at: entry.at,
    action: entry.action,
    client_id: entry.client_id,
    request_id: entry.request_id,
    changes: JSON.stringify(entry.changes),
  }
}

/** The entry from the values of {@link ENTRY_COLUMNS}, which start at `offset` in `row`. */
export function entryOf(row: readonly unknown[], offset = 0): HistoryEntry {
  const changes = JSON.parse(row[offset + 4] as string) as FieldChange[]
  return {
    at: row[offset] as number,
    action: row[offset + 1] as HistoryAction,
    client_id: row[offset + 2] as string,
    request_id: row[offset + 3] as string,
    changes: changes.map((change) => ({ field: change.field, old: change.old, new: change.new })),
  }
}
