import Type from 'typebox'
import { BeneficiaryDetail } from '../beneficiary.js'
import { Nullable, Timestamp } from './beneficiary-schemas.js'
import { HistoryItem, pagedSchema } from './response-schemas.js'

/** The operations an access-log entry names (D35), as `AccessOperation` spells them. */
export const ACCESS_OPERATIONS = [
  'get',
  'list',
  'history',
  'update',
  'status',
  'export',
  'match',
] as const

/**
 * One entry of a beneficiary's access log (D35): an answer that carried the record. The ids of
 * the other records the same answer carried (a list page) are not shown here: they are other
 * people's; the operator's `audit` command shows them.
 */
export const AccessLogItem = Type.Object({
  at: Timestamp,
  client_id: Type.String(),
  request_id: Type.String(),
  operation: Type.Enum([...ACCESS_OPERATIONS]),
  purpose: Nullable(
    Type.String({ description: 'What the client gave in `X-Purpose`; null when it gave none.' }),
  ),
})

/** `GET /beneficiaries/{id}/access-log` (D35): paged like the history. */
export const PagedAccessLog = pagedSchema(AccessLogItem)

/** `GET /beneficiaries/{id}/export` (D36): everything held about one person. */
export const BeneficiaryExport = Type.Object({
  beneficiary: BeneficiaryDetail,
  history: Type.Array(HistoryItem, { description: 'Every history entry, oldest first.' }),
  access_log: Type.Array(AccessLogItem, {
    description: 'Every access-log entry, oldest first, up to the moment of the export.',
  }),
  exported_at: Timestamp,
})
