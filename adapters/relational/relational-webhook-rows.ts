import type { WebhookEndpoint, WebhookState } from '../../core/ports/webhook-store.js'

/** The columns of `webhook_endpoints` in the order {@link endpointOf} reads them. */
export const WEBHOOK_COLUMNS = 'id, url, secret, types, created_at, state'

/** An endpoint from a row of {@link WEBHOOK_COLUMNS}. */
export function endpointOf(row: readonly unknown[]): WebhookEndpoint {
  return {
    id: row[0] as string,
    url: row[1] as string,
    secret: row[2] as string,
    types: JSON.parse(row[3] as string) as string[],
    createdAt: Number(row[4]),
    state: JSON.parse(row[5] as string) as WebhookState,
  }
}
