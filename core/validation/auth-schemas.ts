import Type from 'typebox'
import type { Static } from 'typebox'

// RFC 6749 section 3.3: scope tokens of visible ASCII except `"` and `\`, separated by spaces.
const SCOPE_TOKEN = '[\\x21\\x23-\\x5B\\x5D-\\x7E]+'

const Credential = Type.String({ minLength: 1, maxLength: 256 })

/**
 * Body of `POST /auth/login` (specification 4.2, D2). `scope`, when given, narrows the client's
 * scopes to the space-separated names it lists. Other fields (such as `grant_type`) are ignored.
 */
export const LoginBody = Type.Object({
  client_id: Credential,
  client_secret: Credential,
  scope: Type.Optional(
    Type.String({
      maxLength: 1000,
      pattern: `^${SCOPE_TOKEN}(?: +${SCOPE_TOKEN})*$`,
      description: 'Space-separated scope names, for example `read write`.',
    }),
  ),
})

/** What `login` takes (specification 4.2, D2), derived from the schema. */
export type LoginBody = Static<typeof LoginBody>

/**
 * Body of `POST /auth/refresh` (D4). `client_id` and `client_secret` are optional but go
 * together: when given, they must belong to the refresh token's client.
 */
export const RefreshBody = Type.Object(
  {
    refresh_token: Type.String({ minLength: 1, maxLength: 1024 }),
    client_id: Type.Optional(Credential),
    client_secret: Type.Optional(Credential),
  },
  { dependentRequired: { client_id: ['client_secret'], client_secret: ['client_id'] } },
)

/** What `refresh` takes (D4), derived from the schema. */
export type RefreshBody = Static<typeof RefreshBody>

/**
 * Body of `POST /auth/logout` (D5), optional: a `refresh_token` is accepted if it belongs to the
 * same login session.
 */
export const LogoutBody = Type.Object({
  refresh_token: Type.Optional(
    Type.String({ description: 'Accepted if it belongs to the same session.' }),
  ),
})

/** What `logout` takes (D5), derived from the schema. */
export type LogoutBody = Static<typeof LogoutBody>
