// The peer's table on better-sqlite3: prepared statements, nothing clever.
import { readFileSync } from 'node:fs'
import Database from 'better-sqlite3'

export function openSqliteStore(path) {
  const db = new Database(path)
  db.pragma('journal_mode = WAL')
  db.exec(readFileSync(new URL('./schema.sql', import.meta.url), 'utf8'))
  const findClient = db.prepare('SELECT * FROM clients WHERE id = ?')
  const findById = db.prepare('SELECT * FROM beneficiaries WHERE id = ?')
  const insert = db.prepare(`
    INSERT INTO beneficiaries
      (first_name, last_name, email, phone, date_of_birth, fiscal_code, address, status, metadata,
       created_at, updated_at)
    VALUES
      (@first_name, @last_name, @email, @phone, @date_of_birth, @fiscal_code, @address, 'pending',
       @metadata, @created_at, @updated_at)
  `)
  const update = db.prepare(`
    UPDATE beneficiaries SET
      first_name = @first_name, last_name = @last_name, email = @email, phone = @phone,
      date_of_birth = @date_of_birth, fiscal_code = @fiscal_code, address = @address,
      metadata = @metadata, updated_at = @updated_at
    WHERE id = @id
  `)
  return {
    like: 'LIKE',
    placeholder: () => '?',
    findClient: (id) => findClient.get(id),
    findById: (id) => findById.get(id),
    insert: (row) => Number(insert.run(row).lastInsertRowid),
    update: (row) => update.run(row),
    count: (whereSql, params) =>
      db.prepare(`SELECT COUNT(*) AS total FROM beneficiaries ${whereSql}`).get(...params).total,
    page: (whereSql, params, limit, offset) =>
      db
        .prepare(
          `SELECT id, first_name, last_name, email, phone, status, created_at, updated_at
           FROM beneficiaries ${whereSql} ORDER BY id LIMIT ? OFFSET ?`,
        )
        .all(...params, limit, offset),
    isUniqueViolation: (error) => error.code === 'SQLITE_CONSTRAINT_UNIQUE',
    close: () => db.close(),
  }
}
