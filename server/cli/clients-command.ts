import { nodeSha256 } from '../node-sha256.js'
import { createClientAdmin, isDomainError, type ClientAdmin } from '../../core/index.js'
import { CommandFailedError, UsageError } from './cli-error.js'
import { COMMON_OPTIONS, parseCommand, type CliIo } from './cli-io.js'
import { openCliDatabase, storageTarget } from './storage-target.js'
import { didYouMean, nearest } from './did-you-mean.js'
import {
  CLIENTS_CREATE_HELP,
  CLIENTS_HELP,
  CLIENTS_LIST_HELP,
  CLIENTS_REVOKE_HELP,
} from './help.js'
import { Settings } from './settings.js'

const OPTIONS = {
  ...COMMON_OPTIONS,
  name: { type: 'string' },
  scopes: { type: 'string' },
} as const

const ACTION_HELP = {
  create: CLIENTS_CREATE_HELP,
  list: CLIENTS_LIST_HELP,
  revoke: CLIENTS_REVOKE_HELP,
} as const

const ACTIONS = Object.keys(ACTION_HELP)

/**
 * `beneficiaries clients create|list|revoke` (D1). `create` prints the new client's id and
 * secret as JSON, the only time the secret is shown.
 * @throws UsageError for a missing subcommand, name or id, or invalid scopes;
 *   CommandFailedError when revoking an unknown client.
 */
export async function clientsCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommand(args, OPTIONS, 2)
  const [action, id] = positionals
  if (action === undefined) {
    if (values['help'] !== true) throw new UsageError('say create, list or revoke')
    io.out(CLIENTS_HELP)
    return 0
  }
  if (action !== 'create' && action !== 'list' && action !== 'revoke') {
    const hint = didYouMean(nearest(action, ACTIONS).map((name) => `"clients ${name}"`))
    throw new UsageError(
      `unknown clients command ${JSON.stringify(action)}: say create, list or revoke${hint === '' ? '' : `. ${hint}`}`,
    )
  }
  if (values['help'] === true) {
    io.out(ACTION_HELP[action])
    return 0
  }
  if (action !== 'revoke' && id !== undefined)
    throw new UsageError(`unexpected argument ${JSON.stringify(id)}`)
  const settings = new Settings(values, io.env)
  // Only create makes a database: listing or revoking in one that is not there is a mistake.
  const database = await openCliDatabase(storageTarget(settings), {
    use: action === 'create' ? 'create' : 'existing',
  })
  const storage = database.storage
  try {
    // Client administration signs nothing, so it needs no signing key (and creates none).
    const clients = createClientAdmin({ storage, sha256: nodeSha256 })
    switch (action) {
      case 'create':
        return await create(clients, values, io)
      case 'list':
        io.out(JSON.stringify(await clients.list(), null, 2))
        return 0
      case 'revoke':
        if (id === undefined) throw new UsageError('clients revoke needs the client id')
        if (!(await clients.revoke(id)))
          throw new CommandFailedError(`no live client has the id ${id}`)
        io.out(JSON.stringify({ client_id: id, revoked: true }))
        return 0
    }
  } finally {
    await database.close()
  }
}

async function create(
  clients: ClientAdmin,
  values: Readonly<Record<string, unknown>>,
  io: CliIo,
): Promise<number> {
  const name = values['name']
  if (typeof name !== 'string') throw new UsageError('clients create needs --name NAME')
  const scopes = (typeof values['scopes'] === 'string' ? values['scopes'] : 'read write')
    .split(/[\s,]+/)
    .filter((scope) => scope !== '')
  try {
    const client = await clients.create({ name, scopes })
    io.out(
      JSON.stringify({
        client_id: client.client_id,
        client_secret: client.client_secret,
        scopes: client.scopes,
      }),
    )
    return 0
  } catch (error) {
    if (isDomainError(error) && error.code === 'validation_failed') {
      const problem = error.details[0]
      throw new UsageError(problem?.message ?? error.message, `--${problem?.field ?? 'scopes'}`)
    }
    throw error
  }
}
