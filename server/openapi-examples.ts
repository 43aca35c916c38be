import type { OperationName } from '../core/operations.js'
import type { Json } from './openapi-components.js'
import type { ServerOperation } from './route.js'

// The examples of the OpenAPI document: the real answers of a session like the README's first
// one, so that what a reader sees is what the server says. The document's tests check each one
// against its schema.

const ADDRESS = { street: 'Via Roma 1', city: 'Roma', postal_code: '00184', country: 'IT' }
const CREATED_AT = '2026-11-22T06:19:31.124Z'
const UPDATED_AT = '2026-11-22T06:19:31.160Z'
const CHANGED_AT = '2026-11-22T06:19:31.173Z'
const CLIENT_ID = 'cl_wZW0k_8Rjt0qlF38'
const ACCESS_TOKEN =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6ImF0K2p3dCIsImtpZCI6Ik5tWUFNbW1LZmlUUCJ9.eyJzY29wZSI6InJlYWQgd3JpdGUiLCJzaWQiOiJ5TEEzX1hhS25sSG1mZ2ItRVk0YXF3IiwiaXNzIjoiYmVuZWZpY2lhcnktc2VydmljZSIsImF1ZCI6ImJlbmVmaWNpYXJ5LXNlcnZpY2UiLCJzdWIiOiJjbF93Wlcwa184Ump0MHFsRjM4IiwiaWF0IjoxNzk1MzI4MzcxLCJleHAiOjE3OTUzMzE5NzEsImp0aSI6Im0wdzc5RkRnU1QxN3dFaXZnQ1VQeEEifQ.h1b2oj_Cl_u6g-tE3fcWNsHIDSFhhUTfuLJC6p1_Ef8'
const REFRESH_TOKEN = '9zpTlyxNSOD4ubrRN0oVCbR5FErNoLmPWXFke7MgjDU'

const CREATED = {
  id: 1,
  first_name: 'Maria',
  last_name: 'Rossi',
  email: 'maria.rossi@example.org',
  status: 'pending',
  created_at: CREATED_AT,
}

const DETAIL = {
  id: 1,
  first_name: 'Maria',
  last_name: 'Rossi',
  email: 'maria.rossi@example.org',
  phone: null,
  date_of_birth: '1985-12-10',
  fiscal_code: 'RSSMRA85T10A562S',
  address: ADDRESS,
  status: 'pending',
  metadata: {},
  created_at: CREATED_AT,
  updated_at: CREATED_AT,
}

const UPDATED = {
  ...DETAIL,
  phone: '+390612345678',
  metadata: { source: 'desk' },
  updated_at: UPDATED_AT,
}

const links = (path: string, query: string) => ({
  first: `/v3${path}?page=1&${query}`,
  last: `/v3${path}?page=1&${query}`,
  prev: null,
  next: null,
})

/** One named example. */
const one = (summary: string, value: unknown): Json => ({
  [exampleName(summary)]: { summary, value },
})

function exampleName(summary: string): string {
  return summary.toLowerCase().replaceAll(/[^a-z0-9]+/g, '-')
}

/** The examples of each operation's request body, by name. */
export const REQUEST_EXAMPLES: Readonly<Partial<Record<OperationName, Json>>> = {
  login: {
    ...one('Client credentials', { client_id: CLIENT_ID, client_secret: 'moDWYHR7Sgr_mNsR' }),
    ...one('Narrowed to read', {
      client_id: CLIENT_ID,
      client_secret: 'moDWYHR7Sgr_mNsR',
      scope: 'read',
    }),
  },
  refresh: one('Refresh token', { refresh_token: REFRESH_TOKEN }),
  logout: {
    ...one('No body needed', {}),
    ...one('With the refresh token', { refresh_token: REFRESH_TOKEN }),
  },
  create: {
    ...one('Required fields only', {
      first_name: 'Maria',
      last_name: 'Rossi',
      email: 'maria.rossi@example.org',
    }),
    ...one('Every field', {
      first_name: 'Maria',
      last_name: 'Rossi',
      email: 'maria.rossi@example.org',
      phone: '+390612345678',
      date_of_birth: '1985-12-10',
      fiscal_code: 'RSSMRA85T10A562S',
      address: ADDRESS,
      metadata: { source: 'desk' },
    }),
  },
  update: {
    ...one('Phone and metadata', { phone: '+390612345678', metadata: { source: 'desk' } }),
    ...one('Clear the address', { address: null }),
  },
  setStatus: one('Activate', { status: 'active', reason: 'documents checked' }),
  match: {
    ...one('Names the other way round, another e-mail', {
      first_name: 'Rossi',
      last_name: 'Maria',
      email: 'm.rossi@example.com',
      date_of_birth: '1985-12-10',
    }),
    ...one('Phone only, national', { phone: '0612345678' }),
  },
}

/** An import job just started (D39). */
const IMPORT_JOB_EXAMPLE = {
  id: 'imp_3Xf2TQteaFoZ-OwFXOAyQ',
  state: 'queued',
  format: 'csv',
  rows: 0,
  created: 0,
  existing: 0,
  refused: 0,
  error: null,
  created_at: '2026-03-01T09:00:00.000Z',
  updated_at: '2026-03-01T09:00:00.000Z',
  finished_at: null,
}

/** The example of each operation's success body; `undefined` for an answer without one. */
export const SUCCESS_EXAMPLES: Readonly<
  Record<OperationName | Exclude<ServerOperation, 'docs' | 'index'>, Json | undefined>
> = {
  login: one('Token set', {
    access_token: ACCESS_TOKEN,
    token_type: 'Bearer',
    expires_in: 3600,
    refresh_token: REFRESH_TOKEN,
    scope: 'read write',
  }),
  refresh: one('New access token', {
    access_token: ACCESS_TOKEN,
    token_type: 'Bearer',
    expires_in: 3600,
  }),
  logout: undefined,
  exportRecords: undefined,
  startImport: one('A queued job', IMPORT_JOB_EXAMPLE),
  getImport: one('A job done, first page of its report', {
    ...IMPORT_JOB_EXAMPLE,
    state: 'done',
    rows: 2,
    created: 1,
    refused: 1,
    updated_at: '2026-03-01T09:00:04.000Z',
    finished_at: '2026-03-01T09:00:04.000Z',
    report: {
      data: [
        { row: 1, outcome: 'created', id: 42 },
        {
          row: 2,
          outcome: 'refused',
          error: {
            error: 'validation_failed',
            message: 'The request has invalid fields.',
            code: 422,
            details: [{ field: 'email', message: 'is not a valid e-mail address' }],
          },
        },
      ],
      meta: { current_page: 1, total_pages: 1, total_count: 2, per_page: 20 },
      links: {
        first: '/v3/imports/imp_3Xf2TQteaFoZ-OwFXOAyQ?page=1&per_page=20',
        last: '/v3/imports/imp_3Xf2TQteaFoZ-OwFXOAyQ?page=1&per_page=20',
        prev: null,
        next: null,
      },
    },
  }),
  list: one('A page of one', {
    data: [
      {
        id: 1,
        first_name: 'Maria',
        last_name: 'Rossi',
        email: 'maria.rossi@example.org',
        phone: null,
        status: 'pending',
        created_at: CREATED_AT,
        updated_at: CREATED_AT,
      },
    ],
    meta: { current_page: 1, total_pages: 1, total_count: 1, per_page: 5 },
    links: links('/beneficiaries', 'per_page=5&search=ross&status=pending'),
  }),
  create: one('Created', CREATED),
  get: one('Detail', DETAIL),
  update: one('Updated', UPDATED),
  remove: undefined,
  setStatus: one('Activated', { ...UPDATED, status: 'active', updated_at: CHANGED_AT }),
  history: one('Created, updated, activated', {
    data: [
      {
        at: CREATED_AT,
        action: 'created',
        client_id: CLIENT_ID,
        request_id: 'ffcfc001-4b50-4a9f-b7d7-b054c0503397',
        changes: [
          { field: 'first_name', old: null, new: 'Maria' },
          { field: 'last_name', old: null, new: 'Rossi' },
          { field: 'email', old: null, new: 'maria.rossi@example.org' },
          { field: 'date_of_birth', old: null, new: '1985-12-10' },
          { field: 'fiscal_code', old: null, new: 'RSSMRA85T10A562S' },
          { field: 'address', old: null, new: ADDRESS },
          { field: 'status', old: null, new: 'pending' },
        ],
      },
      {
        at: UPDATED_AT,
        action: 'updated',
        client_id: CLIENT_ID,
        request_id: '4eda0aa9-1813-4253-80b0-5c855ff9e4d7',
        changes: [
          { field: 'phone', old: null, new: '+390612345678' },
          { field: 'metadata', old: {}, new: { source: 'desk' } },
        ],
      },
      {
        at: CHANGED_AT,
        action: 'status_changed',
        client_id: CLIENT_ID,
        request_id: '9e463cf0-7e9e-4d85-8d93-0cc6eed7f593',
        changes: [
          { field: 'status', old: 'pending', new: 'active' },
          { field: 'reason', old: null, new: 'documents checked' },
        ],
      },
    ],
    meta: { current_page: 1, total_pages: 1, total_count: 3, per_page: 20 },
    links: links('/beneficiaries/1/history', 'per_page=20'),
  }),
  openapi: one('This document, abridged', {
    openapi: '3.1.0',
    info: { title: 'Beneficiary service', version: '3.0.3' },
    paths: {},
  }),
  match: one('One possible duplicate', {
    data: [
      {
        id: 1,
        first_name: 'Maria',
        last_name: 'Rossi',
        email: 'maria.rossi@example.org',
        phone: '+390612345678',
        status: 'pending',
        created_at: CREATED_AT,
        updated_at: UPDATED_AT,
        score: 0.65,
        reasons: [
          { rule: 'name', weight: 0.35 },
          { rule: 'date_of_birth', weight: 0.3 },
        ],
      },
    ],
  }),
  matches: one('None', { data: [] }),
  health: one('Up', { status: 'ok' }),
  ready: {
    ...one('Ready', { status: 'ready' }),
    ...one('Degraded', { status: 'degraded', degraded: ['rate_limits'] }),
  },
  accessLog: one('Read twice', {
    data: [
      {
        at: UPDATED_AT,
        client_id: CLIENT_ID,
        request_id: '4eda0aa9-1813-4253-80b0-5c855ff9e4d7',
        operation: 'update',
        purpose: null,
      },
      {
        at: '2026-11-23T09:02:11.480Z',
        client_id: CLIENT_ID,
        request_id: '1b0f1f8e-8a55-4b0e-9d0c-5f6c2f1a7d42',
        operation: 'get',
        purpose: 'eligibility review',
      },
    ],
    meta: { current_page: 1, total_pages: 1, total_count: 2, per_page: 20 },
    links: links('/beneficiaries/1/access-log', 'per_page=20'),
  }),
  export: one('Subject-access export', {
    beneficiary: UPDATED,
    history: [
      {
        at: UPDATED_AT,
        action: 'updated',
        client_id: CLIENT_ID,
        request_id: '4eda0aa9-1813-4253-80b0-5c855ff9e4d7',
        changes: [{ field: 'phone', old: null, new: '+390612345678' }],
      },
    ],
    access_log: [
      {
        at: '2026-11-23T09:02:11.480Z',
        client_id: CLIENT_ID,
        request_id: '1b0f1f8e-8a55-4b0e-9d0c-5f6c2f1a7d42',
        operation: 'get',
        purpose: 'eligibility review',
      },
    ],
    exported_at: '2026-11-24T10:00:00.000Z',
  }),
  events: one('Created, then updated', {
    data: [
      {
        id: 'ZTEuMQ',
        type: 'beneficiary.created',
        beneficiary_id: 1,
        occurred_at: CREATED_AT,
        client_id: CLIENT_ID,
        request_id: 'ffcfc001-4b50-4a9f-b7d7-b054c0503397',
        changed_fields: ['first_name', 'last_name', 'email', 'status'],
      },
      {
        id: 'ZTEuMg',
        type: 'beneficiary.updated',
        beneficiary_id: 1,
        occurred_at: UPDATED_AT,
        client_id: CLIENT_ID,
        request_id: '2d0f7c59-3f8e-4b58-9a53-3c1f0a4f9e11',
        changed_fields: ['phone'],
      },
    ],
    next: 'ZTEuMg',
  }),
  metrics: one(
    'Samples',
    '# HELP beneficiary_http_requests_total Requests answered, by route pattern, method and status.\n# TYPE beneficiary_http_requests_total counter\nbeneficiary_http_requests_total{route="/v3/beneficiaries/{id}",method="GET",status="200"} 42\n',
  ),
}

/**
 * Examples of the parameters a reader fills in. Optional filters and headers have none on
 * purpose: a reference page fills a parameter's example into its "try it" form, and a
 * pre-filled Idempotency-Key or If-Match would replay or refuse the reader's own requests.
 */
export const PARAMETER_EXAMPLES: Readonly<Record<string, number>> = {
  id: 1,
  page: 1,
  per_page: 20,
}
