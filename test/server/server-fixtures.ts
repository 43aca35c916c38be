import { MemoryStorage } from '../../adapters/memory/index.js'
import {
  createBeneficiaryService,
  FakeClock,
  type BeneficiaryService,
  type ProvisionedClient,
  type RateLimitOptions,
} from '../../core/index.js'
import type { ApiRequest } from '../../server/api-request.js'
import type { ApiResponse } from '../../server/api-response.js'
import { bodyText } from './body-text.js'
import { createHandler, type ApiHandler, type HandlerLogger } from '../../server/handler.js'

/** A full beneficiary body: every field, valid together (the fiscal code encodes the birth date). */
export const MARIO = Object.freeze({
  first_name: 'Mario',
  last_name: 'Rossi',
  email: 'mario.rossi@example.org',
  phone: '+39 333 123 4567',
  date_of_birth: '1985-12-10',
  fiscal_code: 'RSSMRA85T10A562S',
  address: { street: 'Via Roma 1', city: 'Pisa', postal_code: '56100', country: 'IT' },
  metadata: { source: 'web', campaign_id: 'spring-2026', notes: 'first contact by phone' },
})

/** A service on memory storage and a fake clock, with a read-write and a read-only client. */
export interface World {
  readonly service: BeneficiaryService
  readonly storage: MemoryStorage
  readonly clock: FakeClock
  readonly writer: ProvisionedClient
  readonly reader: ProvisionedClient
}

/** Builds a `World`; the auth limit is raised unless `limits` says otherwise, so tests can log in freely. */
export async function createWorld(options: { limits?: RateLimitOptions } = {}): Promise<World> {
  const storage = new MemoryStorage()
  const clock = new FakeClock(Date.UTC(2026, 0, 1, 9, 0, 0))
  const service = await createBeneficiaryService({
    storage,
    clock,
    limits: options.limits ?? { auth: 1000, write: 1000, standard: 1000 },
  })
  const writer = await service.clients.create({ name: 'Case workers', scopes: ['read', 'write'] })
  const reader = await service.clients.create({ name: 'Auditors', scopes: ['read'] })
  return { service, storage, clock, writer, reader }
}

/** A response with its body as text (bytes decoded as UTF-8), and parsed when it is JSON. */
export interface Answer extends ApiResponse {
  readonly body: string | undefined
  readonly json: Record<string, unknown> | undefined
}

/** What a test says about a request; everything but the method and path has a default. */
export interface Call {
  readonly token?: string
  readonly body?: unknown
  readonly raw?: Uint8Array
  readonly contentType?: string
  readonly query?: string
  readonly headers?: Record<string, string>
  readonly remoteAddress?: string
  readonly bodyError?: ApiRequest['bodyError']
}

/** Calls the handler with a plain request built from `call`. */
export async function send(
  handler: ApiHandler,
  method: string,
  path: string,
  call: Call = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...call.headers }
  if (call.token !== undefined) headers['authorization'] = `Bearer ${call.token}`
  let body = call.raw
  if (call.body !== undefined) body = new TextEncoder().encode(JSON.stringify(call.body))
  if (body !== undefined) headers['content-type'] ??= call.contentType ?? 'application/json'
  const response = await handler({
    method,
    path,
    query: call.query ?? '',
    headers,
    body,
    remoteAddress: call.remoteAddress ?? '127.0.0.1',
    ...(call.bodyError !== undefined && { bodyError: call.bodyError }),
  })
  const text = bodyText(response)
  const json =
    text !== undefined && response.headers['content-type']?.startsWith('application/json')
      ? (JSON.parse(text) as Record<string, unknown>)
      : undefined
  return { ...response, body: text, json }
}

/** Logs in `client` through the handler and returns its access and refresh tokens. */
export async function login(
  handler: ApiHandler,
  client: ProvisionedClient,
  remoteAddress = '192.0.2.1',
): Promise<{ access: string; refresh: string }> {
  const answer = await send(handler, 'POST', '/v3/auth/login', {
    body: { client_id: client.client_id, client_secret: client.client_secret },
    remoteAddress,
  })
  if (answer.status !== 200) throw new Error(`login failed with ${answer.status}`)
  return {
    access: String(answer.json!['access_token']),
    refresh: String(answer.json!['refresh_token']),
  }
}

/** A logger that keeps every line, as pino would write it. */
export class MemoryLogger implements HandlerLogger {
  readonly lines: string[] = []

  info(fields: object): void {
    this.lines.push(JSON.stringify({ level: 30, ...fields }))
  }

  error(fields: object): void {
    this.lines.push(JSON.stringify({ level: 50, ...fields }))
  }

  /** Every logged object. */
  get entries(): Record<string, unknown>[] {
    return this.lines.map((line) => JSON.parse(line) as Record<string, unknown>)
  }
}

/** A handler over a fresh world. */
export async function createTestHandler(
  options: {
    limits?: RateLimitOptions
    trustProxy?: readonly string[]
    logger?: HandlerLogger
  } = {},
): Promise<World & { handler: ApiHandler }> {
  const world = await createWorld(options.limits === undefined ? {} : { limits: options.limits })
  const handler = createHandler(world.service, {
    ...(options.trustProxy !== undefined && { trustProxy: options.trustProxy }),
    ...(options.logger !== undefined && { logger: options.logger }),
  })
  return { ...world, handler }
}

/** A service that answers like `service` except for the methods in `overrides`. */
export function delegateTo(
  service: BeneficiaryService,
  overrides: Partial<BeneficiaryService>,
): BeneficiaryService {
  return {
    login: (ctx, body) => service.login(ctx, body),
    refresh: (ctx, body) => service.refresh(ctx, body),
    logout: (ctx, body) => service.logout(ctx, body),
    list: (ctx, query) => service.list(ctx, query),
    listJson: (ctx, query) => service.listJson(ctx, query),
    get: (ctx, id) => service.get(ctx, id),
    accessLog: (ctx, id, query) => service.accessLog(ctx, id, query),
    export: (ctx, id) => service.export(ctx, id),
    create: (ctx, body) => service.create(ctx, body),
    update: (ctx, id, body) => service.update(ctx, id, body),
    remove: (ctx, id) => service.remove(ctx, id),
    setStatus: (ctx, id, body) => service.setStatus(ctx, id, body),
    history: (ctx, id, query) => service.history(ctx, id, query),
    events: (ctx, query) => service.events(ctx, query),
    match: (ctx, body) => service.match(ctx, body),
    matches: (ctx, id) => service.matches(ctx, id),
    exportRecords: (ctx, query) => service.exportRecords(ctx, query),
    startImport: (ctx, body) => service.startImport(ctx, body),
    getImport: (ctx, id, query) => service.getImport(ctx, id, query),
    ready: () => service.ready(),
    clients: service.clients,
    ...overrides,
  }
}
