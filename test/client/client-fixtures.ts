import {
  BeneficiaryClient,
  type BeneficiaryClientOptions,
  type ClientEvent,
  type FetchFunction,
} from '../../client/index.js'
import type {
  BeneficiaryService,
  OperationName,
  ProvisionedClient,
  RateLimitOptions,
} from '../../core/index.js'
import { startServer, type RunningServer } from '../../server/start-server.js'
import type { TransportName } from '../../server/transports/transport.js'
import { OpenApiResponseValidator } from '../server/openapi-validator.js'
import { createWorld, delegateTo, type World } from '../server/server-fixtures.js'
import { TRANSPORTS_HERE } from '../support/transports.js'

/** Every transport that runs on this Node.js line: each client test runs against a real server on each. */
export const TRANSPORTS: readonly TransportName[] = TRANSPORTS_HERE

const SERVICE_CALLS = [
  'login',
  'refresh',
  'logout',
  'list',
  'get',
  'create',
  'update',
  'remove',
  'setStatus',
  'history',
] as const satisfies readonly OperationName[]

/** A real server over a memory world on a fake clock, and what its clients did. */
export interface ClientWorld extends World {
  readonly server: RunningServer
  /** The service calls the server made, by operation: each request that reached it counts. */
  readonly calls: Record<(typeof SERVICE_CALLS)[number], number>
  /** The clients' events (retries, logins, refreshes), in order. */
  readonly events: ClientEvent[]
  /** Every wait a client asked for; each one advanced the server's clock instead of sleeping. */
  readonly sleeps: number[]
  /** Live answers that do not match the OpenAPI document. */
  readonly problems: string[]
  /**
   * A client of the writer (or `who`) whose clock is the server's and whose sleep advances it;
   * every answer it gets is checked against the OpenAPI document.
   */
  client(options?: Partial<BeneficiaryClientOptions>, who?: ProvisionedClient): BeneficiaryClient
}

/** Starts a server on `transport` over a fresh world; `overrides` replace service methods. */
export async function startClientWorld(
  transport: TransportName,
  options: {
    limits?: RateLimitOptions
    overrides?: (service: BeneficiaryService) => Partial<BeneficiaryService>
  } = {},
): Promise<ClientWorld> {
  const world = await createWorld(options.limits === undefined ? {} : { limits: options.limits })
  const calls = Object.fromEntries(SERVICE_CALLS.map((name) => [name, 0])) as ClientWorld['calls']
  const replaced = options.overrides?.(world.service) ?? {}
  const counting: Record<string, unknown> = {}
  for (const name of SERVICE_CALLS) {
    // The server lists through `listJson`, the serialised answer of `list`.
    const method = name === 'list' ? 'listJson' : name
    const target = (replaced[method] ?? world.service[method]) as (...args: unknown[]) => unknown
    counting[method] = (...args: unknown[]) => {
      calls[name]++
      return target.apply(world.service, args)
    }
  }
  const service = delegateTo(world.service, counting as Partial<BeneficiaryService>)
  const server = await startServer({ service, transport, host: '127.0.0.1', port: 0 })
  const events: ClientEvent[] = []
  const sleeps: number[] = []
  const problems: string[] = []
  const validator = new OpenApiResponseValidator()
  const checkedFetch: FetchFunction = async (url, init) => {
    const response = await fetch(url, init)
    const text = await response.clone().text()
    const { pathname } = new URL(url)
    problems.push(
      ...validator.check(init.method ?? 'GET', pathname, {
        status: response.status,
        headers: Object.fromEntries(response.headers),
        body: text === '' && response.status === 204 ? undefined : text,
      }),
    )
    return response
  }
  return {
    ...world,
    server,
    calls,
    events,
    sleeps,
    problems,
    client(overrides = {}, who = world.writer) {
      return new BeneficiaryClient({
        baseUrl: `${server.url}/v3`,
        credentials: { clientId: who.client_id, clientSecret: who.client_secret },
        fetch: checkedFetch,
        now: () => world.clock.now(),
        sleep: async (ms) => {
          sleeps.push(ms)
          world.clock.advance(ms)
        },
        onEvent: (event) => events.push(event),
        ...overrides,
      })
    },
  }
}
