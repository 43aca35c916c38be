/**
 * A consumer of the change feed (`GET /v3/events`, docs/events.md): it long-polls from the last
 * cursor it kept, hands each event to `handle`, and keeps the new cursor only after the events
 * were handled, so a crash replays the last answer instead of losing it. Give `handle` the
 * idempotent work (re-read the record by id, or drop it on `beneficiary.deleted`).
 */
import {
  BeneficiaryClient,
  type BeneficiaryClientOptions,
  type ChangeEvent,
} from 'beneficiary-service/client'

export interface CursorStore {
  load(): Promise<string | undefined>
  save(cursor: string): Promise<void>
}

export async function followFeed(
  options: BeneficiaryClientOptions,
  cursor: CursorStore,
  handle: (event: ChangeEvent) => Promise<void>,
  keepGoing: () => boolean,
): Promise<void> {
  const client = new BeneficiaryClient(options)
  let after = await cursor.load()
  while (keepGoing()) {
    const { value } = await client.events({ ...(after !== undefined && { after }), wait: 20 })
    for (const event of value.data) await handle(event)
    await cursor.save(value.next)
    after = value.next
  }
}
