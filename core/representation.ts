import type { BeneficiaryRecord, BeneficiarySummary, HistoryEntry } from './beneficiary.js'
import type { HistoryItem } from './shapes.js'
import type { BeneficiaryCreated, BeneficiaryDetail, BeneficiaryListItem } from './beneficiary.js'
import { LIST_ITEM_FIELDS } from './beneficiary-fields.js'
import type { JsonBytes } from './json-bytes.js'
import { isoTime } from './time.js'
import { utf8Encoder } from './utf8.js'

/** The detail shape of a stored record (specification 2.1). */
export function detailOf(record: BeneficiaryRecord): BeneficiaryDetail {
  return {
    id: record.id,
    first_name: record.first_name,
    last_name: record.last_name,
    email: record.email,
    phone: record.phone,
    date_of_birth: record.date_of_birth,
    fiscal_code: record.fiscal_code,
    address: record.address,
    status: record.status,
    metadata: record.metadata,
    created_at: isoTime(record.created_at),
    updated_at: isoTime(record.updated_at),
  }
}

/** The list item shape (specification 2.1). */
export function listItemOf(summary: BeneficiarySummary): BeneficiaryListItem {
  return {
    id: summary.id,
    first_name: summary.first_name,
    last_name: summary.last_name,
    email: summary.email,
    phone: summary.phone,
    status: summary.status,
    created_at: isoTime(summary.created_at),
    updated_at: isoTime(summary.updated_at),
  }
}

type ListItemField = (typeof LIST_ITEM_FIELDS)[number]

/**
 * The JSON before each value of a list item, as UTF-8: `{"id":`, then `,"first_name":` and so on
 * in the order of `listItemOf` (the specification's table), for `writeListItems`.
 */
const LIST_ITEM_KEYS = Object.freeze(
  Object.fromEntries(
    LIST_ITEM_FIELDS.map((field, place) => [
      field,
      utf8Encoder.encode(`${place === 0 ? '{' : ','}"${field}":`),
    ]),
  ) as Record<ListItemField, Uint8Array>,
)

/** `}`, `[`, `]` and `,` of a JSON array of list items. */
const [CLOSE, OPEN_ARRAY, CLOSE_ARRAY, COMMA] = [0x7d, 0x5b, 0x5d, 0x2c]

/**
 * The list items of `summaries` as a JSON array, written into `out`: the bytes of
 * `JSON.stringify(summaries.map(listItemOf))` in UTF-8, without the objects and the string.
 */
export function writeListItems(out: JsonBytes, summaries: readonly BeneficiarySummary[]): void {
  const keys = LIST_ITEM_KEYS
  out.char(OPEN_ARRAY)
  for (let i = 0; i < summaries.length; i++) {
    const summary = summaries[i]!
    if (i > 0) out.char(COMMA)
    out.raw(keys.id)
    out.number(summary.id)
    out.raw(keys.first_name)
    out.string(summary.first_name)
    out.raw(keys.last_name)
    out.string(summary.last_name)
    out.raw(keys.email)
    out.string(summary.email)
    out.raw(keys.phone)
    out.string(summary.phone)
    out.raw(keys.status)
    out.string(summary.status)
    out.raw(keys.created_at)
    out.isoTime(summary.created_at)
    out.raw(keys.updated_at)
    out.isoTime(summary.updated_at)
    out.char(CLOSE)
  }
  out.char(CLOSE_ARRAY)
}

/** The create response shape (specification 4.5). */
export function createdOf(
  id: number,
  fields: { first_name: string; last_name: string; email: string },
  createdAt: number,
): BeneficiaryCreated {
  return {
    id,
    first_name: fields.first_name,
    last_name: fields.last_name,
    email: fields.email,
    status: 'pending',
    created_at: isoTime(createdAt),
  }
}

/** One history entry as `GET /beneficiaries/{id}/history` shows it (D27). */
export function historyItemOf(entry: HistoryEntry): HistoryItem {
  return {
    at: isoTime(entry.at),
    action: entry.action,
    client_id: entry.client_id,
    request_id: entry.request_id,
    changes: entry.changes,
  }
}
