-- The peer's own straightforward schema on PostgreSQL: the same as schema.sql, as an engineer
-- would write it by hand. Ordinary indexes only: the primary key, status, creation time, and the
-- unique fiscal code.
CREATE TABLE IF NOT EXISTS clients (
  id TEXT PRIMARY KEY,
  secret_hash TEXT NOT NULL,
  scopes TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS beneficiaries (
  id SERIAL PRIMARY KEY,
  first_name TEXT NOT NULL,
  last_name TEXT NOT NULL,
  email TEXT NOT NULL,
  phone TEXT,
  date_of_birth TEXT,
  fiscal_code TEXT UNIQUE,
  address TEXT,
  status TEXT NOT NULL DEFAULT 'pending',
  metadata TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

CREATE INDEX IF NOT EXISTS beneficiaries_status ON beneficiaries (status);
CREATE INDEX IF NOT EXISTS beneficiaries_created_at ON beneficiaries (created_at);
