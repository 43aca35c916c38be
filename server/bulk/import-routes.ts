import Type from 'typebox'
import type { ImportJobView, ImportUpload } from '../../core/bulk-operations.js'
import { ValidationError } from '../../core/errors.js'
import { HistoryQueryParams } from '../../core/validation/index.js'
import type { Upload } from '../request-body.js'
import { defineRoute, type ServiceRoute } from '../route.js'

/** Query parameters of `POST /imports` (D39). */
export const ImportQueryParams = Type.Object({
  ignore_assigned: Type.Optional(
    Type.Enum(['true', 'false'], {
      default: 'false',
      description:
        'true drops id, status, created_at and updated_at from every row (to import an export); otherwise they are refused, as a POST refuses them.',
    }),
  ),
})

/** `POST /imports` and `GET /imports/{id}` (D39). */
export const IMPORT_ROUTES: readonly ServiceRoute[] = [
  defineRoute({
    method: 'POST',
    path: '/imports',
    operation: 'startImport',
    summary:
      'Start an import job for a CSV or NDJSON file: every row validated as a POST would be and reported; run in the background, resumed after a restart, never a row twice. Limit class bulk.',
    tag: 'beneficiaries',
    status: 202,
    response: 'ImportJob',
    location: (job: ImportJobView) => `/imports/${job.id}`,
    invoke: (service, ctx, _params, body, query) =>
      service.startImport(ctx, () => uploadOf(body() as Upload, query['ignore_assigned'])),
    requestBody: { schema: 'ImportFile', required: true },
    uploads: ['text/csv', 'application/x-ndjson'],
    query: ImportQueryParams,
    etag: false,
    ifMatch: false,
    idempotencyKey: false,
    errors: [422],
  }),
  defineRoute({
    method: 'GET',
    path: '/imports/{id}',
    operation: 'getImport',
    summary: 'An import job of yours: its progress, and a page of its report, one outcome per row.',
    tag: 'beneficiaries',
    status: 200,
    response: 'ImportJobReport',
    invoke: (service, ctx, [id], _body, query) => service.getImport(ctx, id, query),
    requestBody: undefined,
    query: HistoryQueryParams,
    etag: false,
    ifMatch: false,
    idempotencyKey: false,
    errors: [404, 422],
  }),
]

function uploadOf(upload: Upload, ignoreAssigned: string | undefined): ImportUpload {
  if (ignoreAssigned !== undefined && ignoreAssigned !== 'true' && ignoreAssigned !== 'false') {
    throw new ValidationError([{ field: 'ignore_assigned', message: 'must be true or false' }])
  }
  return {
    format: upload.contentType === 'text/csv' ? 'csv' : 'ndjson',
    file: upload.bytes,
    ignoreAssigned: ignoreAssigned === 'true',
  }
}
