import { type Kysely, type Migration, sql } from 'kysely'

export const coreSchema: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('beneficiaries')
      // AUTOINCREMENT: an id is never handed out twice, even after the highest one is deleted.
      .addColumn('id', 'integer', (col) => col.primaryKey().autoIncrement())
      .addColumn('first_name', 'text', (col) => col.notNull())
      .addColumn('last_name', 'text', (col) => col.notNull())
      .addColumn('email', 'text', (col) => col.notNull())
      .addColumn('phone', 'text')
      .addColumn('date_of_birth', 'text')
      .addColumn('fiscal_code', 'text')
      .addColumn('address_street', 'text')
      .addColumn('address_city', 'text')
      .addColumn('address_postal_code', 'text')
      .addColumn('address_country', 'text')
      .addColumn('metadata', 'text', (col) => col.notNull())
      .addColumn('status', 'text', (col) =>
        col.notNull().check(sql`status IN ('active', 'inactive', 'pending')`),
      )
      .addColumn('created_at', 'integer', (col) => col.notNull())
      .addColumn('updated_at', 'integer', (col) => col.notNull())
      .addColumn('version', 'integer', (col) => col.notNull())
      .addColumn('sort_first', 'text', (col) => col.notNull())
      .addColumn('sort_last', 'text', (col) => col.notNull())
      .addCheckConstraint(
        'beneficiaries_address_whole',
        sql`(address_street IS NULL) = (address_city IS NULL)
          AND (address_city IS NULL) = (address_postal_code IS NULL)
          AND (address_postal_code IS NULL) = (address_country IS NULL)`,
      )
      .execute()
    // The fiscal-code uniqueness is the database's (D8); most records have none, and a partial
    // index leaves them out.
    await db.schema
      .createIndex('beneficiaries_fiscal_code')
      .on('beneficiaries')
      .column('fiscal_code')
      .unique()
      .where(sql.ref('fiscal_code'), 'is not', null)
      .execute()
    // Each index ends with the rowid (= id), so it also serves the tie-break by id (D15).
    await db.schema
      .createIndex('beneficiaries_status')
      .on('beneficiaries')
      .column('status')
      .execute()
    await db.schema
      .createIndex('beneficiaries_created_at')
      .on('beneficiaries')
      .column('created_at')
      .execute()
    await db.schema
      .createIndex('beneficiaries_updated_at')
      .on('beneficiaries')
      .column('updated_at')
      .execute()
    await db.schema
      .createIndex('beneficiaries_last_name')
      .on('beneficiaries')
      .columns(['sort_last', 'last_name'])
      .execute()
    await db.schema
      .createIndex('beneficiaries_first_name')
      .on('beneficiaries')
      .columns(['sort_first', 'first_name'])
      .execute()

    // Contentless: the words are only searched, never read back. The `ascii` tokenizer splits
    // only at ASCII non-alphanumerics, so the words of `searchTerms()` (letters and digits of
    // any script, joined by spaces) are its tokens unchanged (D16). The status is indexed too,
    // so that a search filtered by status is counted inside the index.
    await sql`CREATE VIRTUAL TABLE beneficiary_search USING fts5(
      words, status, content = '', contentless_delete = 1, tokenize = 'ascii', prefix = '1 2 3'
    )`.execute(db)

    await db.schema
      .createTable('beneficiary_history')
      .addColumn('id', 'integer', (col) => col.primaryKey())
      .addColumn('beneficiary_id', 'integer', (col) => col.notNull())
      .addColumn('at', 'integer', (col) => col.notNull())
      .addColumn('action', 'text', (col) => col.notNull())
      .addColumn('client_id', 'text', (col) => col.notNull())
      .addColumn('request_id', 'text', (col) => col.notNull())
      .addColumn('changes', 'text', (col) => col.notNull())
      .execute()
    await db.schema
      .createIndex('beneficiary_history_beneficiary')
      .on('beneficiary_history')
      .column('beneficiary_id')
      .execute()

    await db.schema
      .createTable('idempotency_keys')
      .addColumn('id', 'integer', (col) => col.primaryKey())
      .addColumn('client_id', 'text', (col) => col.notNull())
      .addColumn('key', 'text', (col) => col.notNull())
      .addColumn('fingerprint', 'text', (col) => col.notNull())
      .addColumn('beneficiary_id', 'integer', (col) => col.notNull())
      .addColumn('created_at', 'integer', (col) => col.notNull())
      .addColumn('expires_at', 'integer', (col) => col.notNull())
      .addUniqueConstraint('idempotency_keys_client_key', ['client_id', 'key'])
      .execute()
    await db.schema
      .createIndex('idempotency_keys_expires_at')
      .on('idempotency_keys')
      .column('expires_at')
      .execute()

    await db.schema
      .createTable('clients')
      .addColumn('seq', 'integer', (col) => col.primaryKey())
      .addColumn('id', 'text', (col) => col.notNull().unique())
      .addColumn('name', 'text', (col) => col.notNull())
      .addColumn('secret_hash', 'text', (col) => col.notNull())
      .addColumn('scopes', 'text', (col) => col.notNull())
      .addColumn('created_at', 'integer', (col) => col.notNull())
      .addColumn('revoked_at', 'integer')
      .execute()

    await db.schema
      .createTable('sessions')
      .addColumn('seq', 'integer', (col) => col.primaryKey())
      .addColumn('id', 'text', (col) => col.notNull().unique())
      // Clients are revoked, never deleted: a session always has its client.
      .addColumn('client_id', 'text', (col) => col.notNull().references('clients.id'))
      .addColumn('refresh_token_hash', 'text', (col) => col.notNull().unique())
      .addColumn('scopes', 'text', (col) => col.notNull())
      .addColumn('created_at', 'integer', (col) => col.notNull())
      .addColumn('expires_at', 'integer', (col) => col.notNull())
      .addColumn('revoked_at', 'integer')
      .execute()

    await db.schema
      .createTable('revoked_tokens')
      .addColumn('jti', 'text', (col) => col.primaryKey())
      .addColumn('expires_at', 'integer', (col) => col.notNull())
      .modifyEnd(sql`WITHOUT ROWID`)
      .execute()
    await db.schema
      .createIndex('revoked_tokens_expires_at')
      .on('revoked_tokens')
      .column('expires_at')
      .execute()

    await db.schema
      .createTable('signing_keys')
      .addColumn('seq', 'integer', (col) => col.primaryKey())
      .addColumn('kid', 'text', (col) => col.notNull().unique())
      .addColumn('secret', 'text', (col) => col.notNull())
      .addColumn('created_at', 'integer', (col) => col.notNull())
      .execute()
  },
}
