import { randomBytes } from 'node:crypto'
import { systemClock, type WebhookEndpoint } from '../../core/index.js'
import { changeEventOf } from '../../core/events.js'
import { newEndpointState } from '../../core/ports/webhook-store.js'
import { webhookHeaders, newWebhookSecret } from '../webhooks/webhook-signature.js'
import { DELIVERY_TIMEOUT_MS } from '../webhooks/webhook-deliverer.js'
import { CommandFailedError, UsageError } from './cli-error.js'
import { COMMON_OPTIONS, parseCommand, type CliIo } from './cli-io.js'
import { openCliDatabase, storageTarget } from './storage-target.js'
import { Settings } from './settings.js'

const OPTIONS = {
  ...COMMON_OPTIONS,
  url: { type: 'string' },
  events: { type: 'string' },
  'allow-http': { type: 'boolean' },
} as const

/** The event types an endpoint may ask for (D33). */
export const WEBHOOK_EVENT_TYPES = [
  'beneficiary.created',
  'beneficiary.updated',
  'beneficiary.status_changed',
  'beneficiary.deleted',
] as const

export const WEBHOOKS_HELP = `Usage: beneficiaries webhooks <add|list|remove|test> [options]

  webhooks add --url URL [--events TYPES] [--allow-http]
      Registers an endpoint that receives each event of TYPES (comma-separated, default all:
      ${WEBHOOK_EVENT_TYPES.join(', ')}) as a signed POST (Standard Webhooks), from
      the next change on. Prints {"id","url","events","secret"} as JSON: the signing secret is
      shown this once only. The URL must be https:// unless --allow-http is given (loopback
      tests, private networks).
  webhooks list
      Prints every endpoint and where its deliveries stand (never the secret): delivered and
      failed attempts, the last error, the next retry, and disabled_at after a day of failures.
  webhooks remove ID
      Deletes the endpoint; nothing more is sent to it.
  webhooks test ID
      Sends one signed "webhook.test" event to the endpoint now and prints its answer's status.

Every command takes --db PATH or --database-url URL as serve does.`

/**
 * `beneficiaries webhooks add|list|remove|test` (D34).
 * @throws UsageError for a missing subcommand, URL, id or a bad option; CommandFailedError for
 *   an unknown endpoint or a failed test delivery.
 */
export async function webhooksCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommand(args, OPTIONS, 2)
  const [action, id] = positionals
  if (values['help'] === true) {
    io.out(WEBHOOKS_HELP)
    return 0
  }
  if (action !== 'add' && action !== 'list' && action !== 'remove' && action !== 'test') {
    throw new UsageError('say add, list, remove or test')
  }
  if ((action === 'add' || action === 'list') && id !== undefined)
    throw new UsageError(`unexpected argument ${JSON.stringify(id)}`)
  if ((action === 'remove' || action === 'test') && id === undefined)
    throw new UsageError(`webhooks ${action} needs the endpoint id`)
  const settings = new Settings(values, io.env)
  const database = await openCliDatabase(storageTarget(settings), {
    use: action === 'add' ? 'create' : 'existing',
  })
  try {
    const { webhooks, events } = database.storage
    if (webhooks === undefined || events === undefined)
      throw new CommandFailedError('this storage keeps no webhooks')
    switch (action) {
      case 'add': {
        const endpoint = newEndpoint(values, await events.end())
        await webhooks.add(endpoint)
        io.out(
          JSON.stringify({
            id: endpoint.id,
            url: endpoint.url,
            events: endpoint.types,
            secret: endpoint.secret,
          }),
        )
        return 0
      }
      case 'list':
        io.out(JSON.stringify((await webhooks.list()).map(describe), null, 2))
        return 0
      case 'remove':
        if (!(await webhooks.remove(id!)))
          throw new CommandFailedError(`no endpoint has the id ${id}`)
        io.out(JSON.stringify({ id, removed: true }))
        return 0
      case 'test': {
        const endpoint = (await webhooks.list()).find((candidate) => candidate.id === id)
        if (endpoint === undefined) throw new CommandFailedError(`no endpoint has the id ${id}`)
        const status = await sendTest(endpoint)
        io.out(JSON.stringify({ id, status }))
        if (status < 200 || status > 299)
          throw new CommandFailedError(`the endpoint answered ${status}, not 2xx`)
        return 0
      }
    }
  } finally {
    await database.close()
  }
}

function newEndpoint(values: Readonly<Record<string, unknown>>, cursor: string): WebhookEndpoint {
  const url = values['url']
  if (typeof url !== 'string') throw new UsageError('webhooks add needs --url URL')
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new UsageError('is not a URL', '--url')
  }
  const allowHttp = values['allow-http'] === true
  if (parsed.protocol !== 'https:' && !(allowHttp && parsed.protocol === 'http:')) {
    throw new UsageError(
      allowHttp ? 'must be http:// or https://' : 'must be https:// (or give --allow-http)',
      '--url',
    )
  }
  const given =
    typeof values['events'] === 'string' ? values['events'] : WEBHOOK_EVENT_TYPES.join(',')
  const types = [...new Set(given.split(/[\s,]+/).filter((type) => type !== ''))]
  const unknown = types.filter((type) => !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(type))
  if (types.length === 0 || unknown.length > 0) {
    throw new UsageError(`must be among ${WEBHOOK_EVENT_TYPES.join(', ')}`, '--events')
  }
  return {
    id: `wh_${randomBytes(9).toString('base64url')}`,
    url: parsed.href,
    secret: newWebhookSecret(),
    types,
    createdAt: systemClock.now(),
    state: newEndpointState(cursor),
  }
}

/** An endpoint as `webhooks list` prints it: no secret, times in ISO 8601. */
function describe(endpoint: WebhookEndpoint): Record<string, unknown> {
  const { state } = endpoint
  const iso = (ms: number | null): string | null =>
    ms === null ? null : new Date(ms).toISOString()
  return {
    id: endpoint.id,
    url: endpoint.url,
    events: endpoint.types,
    created_at: iso(endpoint.createdAt),
    status: state.disabledAt !== null ? 'disabled' : state.failingSince !== null ? 'failing' : 'ok',
    delivered: state.delivered,
    failed: state.failed,
    last_error: state.lastError,
    failing_since: iso(state.failingSince),
    next_attempt_at: state.failingSince === null ? null : iso(state.nextAttemptAt),
    disabled_at: iso(state.disabledAt),
  }
}

async function sendTest(endpoint: WebhookEndpoint): Promise<number> {
  const now = systemClock.now()
  const id = `test_${randomBytes(9).toString('base64url')}`
  const event = {
    ...changeEventOf({
      position: '0',
      action: 'created',
      beneficiaryId: 0,
      at: now,
      clientId: '',
      requestId: '',
      changedFields: [],
    }),
    id,
    type: 'webhook.test',
  }
  const body = JSON.stringify(event)
  try {
    const response = await fetch(endpoint.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...webhookHeaders(endpoint.secret, id, Math.floor(now / 1000), body),
      },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
    })
    await response.body?.cancel()
    return response.status
  } catch (error) {
    const name = (error as { name?: unknown }).name
    throw new CommandFailedError(
      name === 'TimeoutError'
        ? 'the endpoint did not answer within 10 s'
        : 'the endpoint could not be reached',
    )
  }
}
