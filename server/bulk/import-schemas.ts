/** The OpenAPI schemas of the import jobs (D39), written as JSON by the server. */

type Json = Record<string, unknown>

const COUNT = { type: 'integer', minimum: 0 }
const TIME = { type: 'string', format: 'date-time' }

/** The body of `POST /imports`: the file itself. */
export const IMPORT_FILE: Json = {
  type: 'string',
  description:
    'The file: CSV with a header row (comma or semicolon separated, UTF-8 with or without BOM) as text/csv, or NDJSON (one create body per line) as application/x-ndjson. The columns are in docs/bulk.md.',
}

/** An import job. */
export const IMPORT_JOB: Json = {
  type: 'object',
  required: [
    'id',
    'state',
    'format',
    'rows',
    'created',
    'existing',
    'refused',
    'error',
    'created_at',
    'updated_at',
    'finished_at',
  ],
  properties: {
    id: { type: 'string' },
    state: {
      type: 'string',
      enum: ['queued', 'running', 'done', 'failed'],
      description:
        '`queued` until an instance takes it; `running`; `done` once every row has an outcome; `failed` when the file could not be read on (`error` says why).',
    },
    format: { type: 'string', enum: ['csv', 'ndjson'] },
    rows: { ...COUNT, description: 'Rows with an outcome so far.' },
    created: COUNT,
    existing: { ...COUNT, description: 'Rows an earlier run of the job had created.' },
    refused: COUNT,
    error: { type: ['string', 'null'] },
    created_at: TIME,
    updated_at: TIME,
    finished_at: { type: ['string', 'null'], format: 'date-time' },
  },
}

/** An import job with a page of its report. */
export const IMPORT_JOB_REPORT: Json = {
  ...IMPORT_JOB,
  required: [...(IMPORT_JOB['required'] as string[]), 'report'],
  properties: {
    ...(IMPORT_JOB['properties'] as Json),
    report: {
      type: 'object',
      required: ['data', 'meta', 'links'],
      description:
        'The rows outcomes, by row: `{"row","outcome":"created"|"existing","id"}` or `{"row","outcome":"refused","error":{error body without request_id}}`; paged like the list.',
      properties: {
        data: { type: 'array', items: { type: 'object' } },
        meta: { $ref: '#/components/schemas/PageMeta' },
        links: { $ref: '#/components/schemas/PageLinks' },
      },
    },
  },
}
