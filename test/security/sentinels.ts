/**
 * Sentinel secrets and personal values (D25): distinctive strings that a test sends through the
 * API and then looks for in whatever the server wrote (log lines, error output). None of them may
 * ever appear there. Every value is valid for its field, so a request carrying them can succeed,
 * and distinctive enough that finding one by chance in a log line is out of the question.
 *
 * Other suites may send these values too and check their own output with `findLeaks`.
 */

/** A client secret (43 base64url characters, like a generated one); stored only as its hash. */
export const SENTINEL_CLIENT_SECRET = 'SnTnLcLiEnTsEcReT_q7Vx2Lw9Kd4Hp6Rz8Ny3Mb5Tf'
/** A wrong secret presented for a real client id: a guess must not be logged either. */
export const SENTINEL_WRONG_SECRET = 'SnTnLwRoNgSeCrEt_b3Kp8Qz1Xv6Nm2Wd9Ly4Hc7Rg5'
/** `JWT_SECRET` of the server: 32+ bytes in base64. */
export const SENTINEL_JWT_SECRET = 'U250bkxKV1RTZWNyZXQtbmV2ZXItbG9nZ2VkLXE3VngyTHc5S2Q0'
/** A refresh token no session holds. */
export const SENTINEL_REFRESH_TOKEN = 'SnTnLrEfReShToKeN_Hq2Zp9Wx4Vb7Nk1Mc6Ld3Tf8R'
/** A JWT-shaped bearer token signed by no one (header `{"alg":"HS256","typ":"at+jwt"}`). */
export const SENTINEL_BEARER_TOKEN =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6ImF0K2p3dCJ9.eyJzdWIiOiJzbnRubC1ib2d1cyJ9.U250bkxiZWFyZXJUb2tlbg'
/** Credentials sent with the wrong scheme (`Basic`). */
export const SENTINEL_BASIC_CREDENTIALS = 'c250bmwtdXNlcjpzbnRubC1wYXNzd29yZC1uZXZlci1sb2dnZWQ'
/** An `Idempotency-Key` (D22). */
export const SENTINEL_IDEMPOTENCY_KEY = 'snTnL-idempotency-key-6Wq9Zr2Kx'
/** A status-change `reason` (D14), kept in the history. */
export const SENTINEL_REASON = 'SnTnL reason: documents verified by Zebedea'

/** A beneficiary whose every value is a sentinel; the fiscal code encodes the birth date (D8). */
export const SENTINEL_BENEFICIARY = Object.freeze({
  first_name: 'Zebedea',
  last_name: 'Quintavalle',
  email: 'zebedea.quintavalle@snTnL-mail.example',
  phone: '+39 347 918 2736',
  date_of_birth: '1991-05-07',
  fiscal_code: 'QNTZBD91E47H501D',
  address: Object.freeze({
    street: 'Via Sentinella Nascosta 77',
    city: 'Roccasentinella',
    postal_code: 'SNT-4711',
    country: 'IT',
  }),
  metadata: Object.freeze({ notes: 'SnTnL note: allergic to penicillin', source: 'snTnL-desk' }),
})

/** Other personal values a test may write with PUT. */
export const SENTINEL_UPDATE = Object.freeze({
  phone: '+39 06 8765 4321',
  metadata: Object.freeze({ notes: 'SnTnL second note: moved to Tuscany' }),
})

/**
 * Every sentinel value, including the forms the service stores (a compact phone number, the
 * digits alone), so that a value is found whatever its spelling.
 */
export const SENTINEL_VALUES: readonly string[] = Object.freeze([
  SENTINEL_CLIENT_SECRET,
  SENTINEL_WRONG_SECRET,
  SENTINEL_JWT_SECRET,
  SENTINEL_REFRESH_TOKEN,
  SENTINEL_BEARER_TOKEN,
  SENTINEL_BASIC_CREDENTIALS,
  SENTINEL_IDEMPOTENCY_KEY,
  SENTINEL_REASON,
  SENTINEL_BENEFICIARY.first_name,
  SENTINEL_BENEFICIARY.last_name,
  SENTINEL_BENEFICIARY.email,
  SENTINEL_BENEFICIARY.phone,
  '+393479182736',
  '3479182736',
  SENTINEL_BENEFICIARY.date_of_birth,
  SENTINEL_BENEFICIARY.fiscal_code,
  SENTINEL_BENEFICIARY.address.street,
  SENTINEL_BENEFICIARY.address.city,
  SENTINEL_BENEFICIARY.address.postal_code,
  SENTINEL_BENEFICIARY.metadata.notes,
  SENTINEL_BENEFICIARY.metadata.source,
  SENTINEL_UPDATE.phone,
  '+390687654321',
  SENTINEL_UPDATE.metadata.notes,
])

/** What a JWT looks like in text: two base64url JSON segments and a signature. */
const JWT_PATTERN = /eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*/
/** An `Authorization` header value with its scheme, as a careless log line would copy it. */
const AUTHORIZATION_PATTERN = /\b(?:bearer|basic)\s+[A-Za-z0-9._~+/-]{8,}/i

/**
 * The sentinels (and `extra` values, such as the tokens a run was issued) found in `text`,
 * compared case-insensitively; also any JWT and any `Authorization` value with its scheme.
 * Empty when nothing leaked.
 *
 * @example
 * assert.deepEqual(findLeaks(serverOutput, [accessToken, refreshToken]), [])
 */
export function findLeaks(text: string, extra: readonly string[] = []): string[] {
  const haystack = text.toLowerCase()
  const found = [...SENTINEL_VALUES, ...extra].filter(
    (value) => value.length > 0 && haystack.includes(value.toLowerCase()),
  )
  const jwt = JWT_PATTERN.exec(text)
  if (jwt !== null) found.push(`a JWT: ${jwt[0].slice(0, 24)}…`)
  const authorization = AUTHORIZATION_PATTERN.exec(text)
  if (authorization !== null)
    found.push(`an Authorization value: ${authorization[0].slice(0, 16)}…`)
  return found
}
