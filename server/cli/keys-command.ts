import {
  KEY_RELOAD_SECONDS,
  rotateSigningKey,
  signingKeyStates,
  systemClock,
} from '../../core/index.js'
import { UsageError } from './cli-error.js'
import { COMMON_OPTIONS, parseCommand, type CliIo } from './cli-io.js'
import { didYouMean, nearest } from './did-you-mean.js'
import { KEYS_HELP, KEYS_LIST_HELP, KEYS_ROTATE_HELP } from './help.js'
import { Settings } from './settings.js'
import { openCliDatabase, storageTarget } from './storage-target.js'

const OPTIONS = {
  ...COMMON_OPTIONS,
  'access-token-ttl': { type: 'string' },
} as const

const ACTION_HELP = { rotate: KEYS_ROTATE_HELP, list: KEYS_LIST_HELP } as const

/** The skew allowance the server verifies with (`clockSkewSeconds`' default). */
const CLOCK_SKEW_SECONDS = 5

/**
 * `beneficiaries keys rotate|list`: the access-token signing keys kept in the database (D3),
 * which the server uses unless given JWT_SECRET or JWT_SECRET_FILE. `rotate` adds a new signing
 * key; `list` says where each key stands. Neither ever prints a secret.
 * @throws UsageError for a missing or unknown action; CommandFailedError when the database
 *   does not exist or is not up to date.
 */
export async function keysCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommand(args, OPTIONS, 1)
  const [action] = positionals
  if (action === undefined) {
    if (values['help'] !== true) throw new UsageError('say rotate or list')
    io.out(KEYS_HELP)
    return 0
  }
  if (action !== 'rotate' && action !== 'list') {
    const hint = didYouMean(nearest(action, Object.keys(ACTION_HELP)).map((a) => `"keys ${a}"`))
    throw new UsageError(
      `unknown keys command ${JSON.stringify(action)}: say rotate or list${hint === '' ? '' : `. ${hint}`}`,
    )
  }
  if (values['help'] === true) {
    io.out(ACTION_HELP[action])
    return 0
  }
  const settings = new Settings(values, io.env)
  const ttlSeconds = settings.integer(
    'access-token-ttl',
    'ACCESS_TOKEN_TTL_SECONDS',
    3600,
    1,
    30 * 86_400,
  )
  const database = await openCliDatabase(storageTarget(settings), { use: 'existing' })
  try {
    const store = database.storage.signingKeys
    if (action === 'rotate') {
      const key = await rotateSigningKey(store, systemClock)
      io.out(JSON.stringify({ kid: key.kid, created_at: new Date(key.created_at).toISOString() }))
      io.err(
        `keys: ${key.kid} signs new access tokens on every running server within ${KEY_RELOAD_SECONDS} s (at once on a restart); the keys before it verify until the tokens they signed expire`,
      )
    } else {
      const states = signingKeyStates(await store.list(), systemClock.now(), {
        ttlSeconds,
        clockSkewSeconds: CLOCK_SKEW_SECONDS,
      })
      const listed = states.map((key) => ({
        kid: key.kid,
        created_at: new Date(key.created_at).toISOString(),
        state: key.state,
        ...(key.retires_at !== undefined && {
          retires_at: new Date(key.retires_at).toISOString(),
        }),
      }))
      io.out(JSON.stringify(listed, null, 2))
    }
    const source =
      settings.raw('jwt-secret-file', 'JWT_SECRET_FILE') ?? settings.raw('jwt-secret', 'JWT_SECRET')
    if (source !== undefined) {
      io.err(
        `keys: ${source.name} is set: a server started with it signs and verifies with those secrets, not with the keys kept in the database`,
      )
    }
    return 0
  } finally {
    await database.close()
  }
}
