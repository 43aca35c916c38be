import Type from 'typebox'

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
