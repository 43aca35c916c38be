import { sql, type Kysely, type Migration } from 'kysely'

/**
 * The change feed (D33), migration `0004_events`. A statement trigger on the history writes one
 * event per history entry in the same transaction, whichever statement wrote the entry (a
 * single write, a batch of creates, the seed's bulk load): a change cannot exist without its
 * event, nor an event without its change. An event keeps the names of the changed fields,
 * never their values.
 *
 * Each event records the id of the transaction that wrote it (`pg_current_xact_id()`): the
 * reader hands out only events of transactions that have ended for every snapshot (below
 * `pg_snapshot_xmin`), in batches of transaction ids, so that a transaction that took its
 * event number early and commits late still lands after the cursor (see `PostgresEventLog`).
 * The sequence keeps its default cache of 1, so numbers grow in the order they are taken
 * across connections. `beneficiary_event_purge` remembers the highest id and transaction id
 * the retention purge deleted, to tell an expired cursor.
 */
export function eventsMigration(schema: string): Migration {
  const texts = [
    'CREATE SEQUENCE %s.beneficiary_event_ids',
    `CREATE TABLE %s.beneficiary_events (
      id bigint PRIMARY KEY DEFAULT nextval('%s.beneficiary_event_ids'),
      xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
      beneficiary_id bigint NOT NULL,
      action text NOT NULL,
      at bigint NOT NULL,
      client_id text NOT NULL,
      request_id text NOT NULL,
      changed_fields text[] NOT NULL
    )`,
    'ALTER SEQUENCE %s.beneficiary_event_ids OWNED BY %s.beneficiary_events.id',
    'CREATE INDEX beneficiary_events_xid ON %s.beneficiary_events (xid, id)',
    `CREATE TABLE %s.beneficiary_event_purge (
      id integer PRIMARY KEY CHECK (id = 1),
      through_id bigint NOT NULL,
      through_xid xid8 NOT NULL
    )`,
    `INSERT INTO %s.beneficiary_event_purge (id, through_id, through_xid) VALUES (1, 0, '0')`,
    `CREATE FUNCTION %s.beneficiary_history_events() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO %s.beneficiary_events
        (beneficiary_id, action, at, client_id, request_id, changed_fields)
      SELECT beneficiary_id, action, at, client_id, request_id,
        ARRAY(SELECT c.change ->> 'field'
          FROM json_array_elements(changes) WITH ORDINALITY AS c (change, n) ORDER BY c.n)
      FROM inserted ORDER BY id;
      RETURN NULL;
    END
    $$`,
    `CREATE TRIGGER beneficiary_history_events AFTER INSERT ON %s.beneficiary_history
      REFERENCING NEW TABLE AS inserted
      FOR EACH STATEMENT EXECUTE FUNCTION %s.beneficiary_history_events()`,
  ]
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      for (const text of texts) await sql.raw(text.replaceAll('%s.', `"${schema}".`)).execute(db)
    },
  }
}
