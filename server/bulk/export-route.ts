import Type from 'typebox'
import { ListQueryParams } from '../../core/validation/index.js'
import { StreamedBody } from '../api-response.js'
import { defineRoute, type ServiceRoute } from '../route.js'
import { EXPORT_MEDIA_TYPES, exportChunks } from './export-records.js'

/** Query parameters of `GET /beneficiaries/export` (D39): the list's filters and the format. */
export const ExportQueryParams = Type.Object({
  format: Type.Optional(
    Type.Enum(['ndjson', 'csv'], {
      default: 'ndjson',
      description:
        'ndjson: one detail object per line (application/x-ndjson). csv: a header row, then the columns an import reads (text/csv).',
    }),
  ),
  status: ListQueryParams.properties.status,
  created_from: ListQueryParams.properties.created_from,
  created_to: ListQueryParams.properties.created_to,
  search: ListQueryParams.properties.search,
})

/**
 * `GET /beneficiaries/export` (D39): every record of one snapshot, in id order, streamed; the
 * transport writes each chunk once the client took the last.
 */
export const EXPORT_ROUTE: ServiceRoute = defineRoute({
  method: 'GET',
  path: '/beneficiaries/export',
  operation: 'exportRecords',
  summary:
    'Every beneficiary of one consistent snapshot, in id order, with the list filters: NDJSON (one detail object per line) or CSV, streamed. Limit class bulk.',
  tag: 'beneficiaries',
  status: 200,
  response: 'BeneficiaryDetail',
  mediaType: 'application/x-ndjson',
  invoke: async (service, ctx, _params, _body, query) => {
    const result = await service.exportRecords(ctx, query)
    const { format, pages } = result.value
    return {
      ...result,
      value: new StreamedBody(EXPORT_MEDIA_TYPES[format], exportChunks(pages(), format)),
    }
  },
  requestBody: undefined,
  query: ExportQueryParams,
  etag: false,
  ifMatch: false,
  idempotencyKey: false,
  errors: [422],
})
