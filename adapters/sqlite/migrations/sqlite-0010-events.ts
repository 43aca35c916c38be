import { sql, type Migration } from 'kysely'

// The change feed (D33). An event is written by a trigger on the history: every write that
// appends a history entry (create, update, status change, delete, the seed's bulk load) appends
// its event in the same transaction, so neither can exist without the other, whichever code
// path wrote it. The event keeps the names of the changed fields, never their values.
// AUTOINCREMENT: an id is never used twice, even after the purge empties the table, so a
// cursor can never point at a later event with a reused number. One writer at a time (the
// database's write lock) takes the numbers, so they follow commit order.
// `beneficiary_event_purge.through` is the highest id the retention purge deleted: a cursor
// below it is expired.
export const events: Migration = {
  async up(db) {
    await sql`CREATE TABLE beneficiary_events (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      beneficiary_id INTEGER NOT NULL,
      action TEXT NOT NULL,
      at INTEGER NOT NULL,
      client_id TEXT NOT NULL,
      request_id TEXT NOT NULL,
      changed_fields TEXT NOT NULL
    )`.execute(db)
    await sql`CREATE TABLE beneficiary_event_purge (
      id INTEGER PRIMARY KEY CHECK (id = 1),
      through INTEGER NOT NULL
    )`.execute(db)
    await sql`INSERT INTO beneficiary_event_purge (id, through) VALUES (1, 0)`.execute(db)
    await sql`CREATE TRIGGER beneficiary_history_event AFTER INSERT ON beneficiary_history
      BEGIN
        INSERT INTO beneficiary_events
          (beneficiary_id, action, at, client_id, request_id, changed_fields)
        VALUES (NEW.beneficiary_id, NEW.action, NEW.at, NEW.client_id, NEW.request_id,
          (SELECT json_group_array(json_extract(value, '$.field')) FROM json_each(NEW.changes)));
      END`.execute(db)
  },
}
