import type { BeneficiaryRecord, BeneficiarySummary, HistoryEntry } from './beneficiary.js'
import type { HistoryItem } from './shapes.js'
import type { BeneficiaryCreated, BeneficiaryDetail, BeneficiaryListItem } from './beneficiary.js'
import { isoTime } from './time.js'

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
