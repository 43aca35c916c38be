import { isDomainError } from '../../core/index.js'

/** What the codes of node-postgres's connection failures mean to an operator. */
const PROBLEMS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'nothing accepts connections at that host and port: is PostgreSQL running there?',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'the host name cannot be looked up at the moment',
  ETIMEDOUT: 'no answer from the host in time',
  EHOSTUNREACH: 'the host cannot be reached',
  ENETUNREACH: 'the network of the host cannot be reached',
  ECONNRESET: 'the server closed the connection',
  ENOENT: 'no such socket',
  '28P01': 'the password was refused',
  '28000': 'the server does not accept this role, or not from this address (pg_hba.conf)',
  '3D000': 'no such database',
  '57P03': 'the server is starting up or shutting down',
  '53300': 'the server has no connection left (max_connections)',
}

/** node-postgres's own failures, which carry no code: fixed texts, with no value in them. */
const DRIVER_MESSAGES: readonly (readonly [RegExp, string])[] = [
  [/timeout/i, 'no answer in time (a connection timeout)'],
  [
    /^Connection terminated unexpectedly$/,
    'the connection ended before the server answered: is this the port of PostgreSQL?',
  ],
]

/**
 * Why node-postgres could not reach a database or log in, for a one-line message: the first
 * error code in the chain of causes (a socket error such as `ECONNREFUSED`, or a SQLSTATE such
 * as `3D000`) with its meaning. Never the driver's message, which may repeat a role or a value;
 * the URL the caller names beside it already says where (without its password).
 */
export function postgresProblem(error: unknown): string | undefined {
  const seen = new Set<unknown>()
  for (let cause = error; cause instanceof Error && !seen.has(cause); cause = cause.cause) {
    seen.add(cause)
    // The domain's own errors have codes too (`service_unavailable`): the driver's is below.
    if (isDomainError(cause)) continue
    const code = (cause as { code?: unknown }).code
    if (typeof code === 'string' && code !== '') {
      const meaning = Object.hasOwn(PROBLEMS, code) ? PROBLEMS[code] : undefined
      return meaning === undefined ? `error code ${code}` : `${meaning} (${code})`
    }
    if (cause.cause === undefined) {
      const known = DRIVER_MESSAGES.find(([pattern]) => pattern.test(cause.message))
      if (known !== undefined) return known[1]
    }
  }
  return undefined
}
