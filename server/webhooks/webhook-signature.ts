import { createHmac, randomBytes } from 'node:crypto'

const PREFIX = 'whsec_'

/** A new signing secret in the Standard Webhooks form: `whsec_` and 32 random bytes in base64. */
export function newWebhookSecret(): string {
  return PREFIX + randomBytes(32).toString('base64')
}

/**
 * The headers of a delivery signed per Standard Webhooks: `webhook-id`, `webhook-timestamp`
 * (whole seconds) and `webhook-signature`, `v1,` and the base64 HMAC-SHA256, under the secret's
 * key, of `id.timestamp.body`.
 */
export function webhookHeaders(
  secret: string,
  id: string,
  timestampSeconds: number,
  body: string,
): Record<string, string> {
  const key = Buffer.from(
    secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret,
    'base64',
  )
  const signature = createHmac('sha256', key)
    .update(`${id}.${timestampSeconds}.${body}`)
    .digest('base64')
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': `v1,${signature}`,
  }
}
