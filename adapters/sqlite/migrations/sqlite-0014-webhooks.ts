import { sql, type Migration } from 'kysely'

// Webhook endpoints (D34) and where each one's deliveries stand: `state` is JSON (the change
// feed cursor, attempts, back-off, counters); the lease says which instance delivers to it.
export const webhooks: Migration = {
  async up(db) {
    await sql`CREATE TABLE webhook_endpoints (
      id TEXT PRIMARY KEY,
      url TEXT NOT NULL,
      secret TEXT NOT NULL,
      types TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      state TEXT NOT NULL,
      lease_owner TEXT,
      lease_until INTEGER NOT NULL DEFAULT 0
    )`.execute(db)
  },
}
