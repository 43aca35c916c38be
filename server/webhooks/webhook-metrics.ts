import { Counter, Gauge, type Registry } from 'prom-client'
import type { Clock, EventStore, WebhookStore } from '../../core/index.js'
import type { DeliveryOutcome } from './webhook-deliverer.js'

/**
 * The webhook metrics (D34) on `registry`: `beneficiary_webhook_deliveries_total{outcome}`
 * (delivered, failed, disabled) and `beneficiary_webhook_lag_seconds`, the age of the oldest
 * event an enabled endpoint has not yet received (0 when all are up to date), read when scraped.
 * Returns the function to tell of each attempt.
 */
export function webhookMetrics(
  registry: Registry,
  webhooks: WebhookStore,
  events: EventStore,
  clock: Clock,
): (outcome: DeliveryOutcome) => void {
  const registers = [registry]
  const deliveries = new Counter({
    name: 'beneficiary_webhook_deliveries_total',
    help: 'Webhook delivery attempts, by outcome: delivered, failed, or disabled (the failure that disabled an endpoint).',
    labelNames: ['outcome'],
    registers,
  })
  for (const outcome of ['delivered', 'failed', 'disabled']) deliveries.inc({ outcome }, 0)
  new Gauge({
    name: 'beneficiary_webhook_lag_seconds',
    help: 'Age of the oldest event an enabled webhook endpoint has not received yet, in seconds.',
    registers,
    async collect() {
      let oldest = clock.now()
      for (const endpoint of await webhooks.list()) {
        if (endpoint.state.disabledAt !== null) continue
        const page = await events.read(endpoint.state.cursor, 1)
        const next = typeof page === 'object' ? page.events[0] : undefined
        if (next !== undefined) oldest = Math.min(oldest, next.at)
      }
      this.set(Math.max(0, (clock.now() - oldest) / 1000))
    },
  })
  return (outcome) => deliveries.inc({ outcome })
}
