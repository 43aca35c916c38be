import { Compile } from 'typebox/compile'
import type { Validator } from 'typebox/compile'
import { LoginBody, RefreshBody } from './auth-schemas.js'
import { requireObjectBody } from './plain-object.js'
import { ProblemList } from './problem-list.js'
import { schemaProblems } from './schema-problems.js'

/** Validated login credentials (specification 4.2, D2). */
export interface LoginInput {
  readonly client_id: string
  readonly client_secret: string
  /** The scope names asked for, without duplicates; absent when the body named none. */
  readonly scope?: readonly string[]
}

/** A validated refresh request (D4): the client credentials come both or neither. */
export interface RefreshInput {
  readonly refresh_token: string
  readonly client_id?: string
  readonly client_secret?: string
}

const loginValidator = Compile(LoginBody)
const refreshValidator = Compile(RefreshBody)
const MESSAGES = { scope: 'must be scope names separated by spaces' }

// Credentials are compared exactly, so they are copied untouched; unknown fields are ignored.
function pick(body: Readonly<Record<string, unknown>>, names: readonly string[]) {
  const copy: Record<string, unknown> = {}
  for (const name of names) {
    if (Object.hasOwn(body, name) && body[name] !== undefined) copy[name] = body[name]
  }
  return copy
}

function check(validator: Validator, copy: unknown): void {
  const problems = new ProblemList()
  problems.addAll(schemaProblems(validator, copy, MESSAGES))
  problems.throwIfAny()
}

/**
 * Validates the body of `POST /auth/login`: `client_id` and `client_secret` are required
 * strings; `scope` is an optional space-separated list of names (D2) and comes back as an array.
 *
 * @throws BadRequestError `bad_request` when the body is not a JSON object (D12)
 * @throws ValidationError `validation_failed` naming each missing or malformed field
 */
export function parseLoginInput(body: unknown): LoginInput {
  const copy = pick(requireObjectBody(body), ['client_id', 'client_secret', 'scope'])
  if (typeof copy.scope === 'string') copy.scope = copy.scope.trim()
  check(loginValidator, copy)
  const clientId = copy.client_id as string
  const clientSecret = copy.client_secret as string
  if (typeof copy.scope !== 'string') return { client_id: clientId, client_secret: clientSecret }
  const scope = [...new Set(copy.scope.split(/ +/))]
  return { client_id: clientId, client_secret: clientSecret, scope }
}

/**
 * Validates the body of `POST /auth/refresh` (D4): `refresh_token` is required; `client_id` and
 * `client_secret` are optional but must come together.
 *
 * @throws BadRequestError `bad_request` when the body is not a JSON object (D12)
 * @throws ValidationError `validation_failed` naming each missing or malformed field
 */
export function parseRefreshInput(body: unknown): RefreshInput {
  const copy = pick(requireObjectBody(body), ['refresh_token', 'client_id', 'client_secret'])
  check(refreshValidator, copy)
  const refreshToken = copy.refresh_token as string
  if (copy.client_id === undefined) return { refresh_token: refreshToken }
  return {
    refresh_token: refreshToken,
    client_id: copy.client_id as string,
    client_secret: copy.client_secret as string,
  }
}
