// The peer's table on PostgreSQL through node-postgres: a pool, parameterised queries, ILIKE for
// the search, COUNT(*) and OFFSET for pages. What an engineer writes by hand.
import { readFileSync } from 'node:fs'
import pg from 'pg'

export async function openPgStore(connectionString) {
  const pool = new pg.Pool({ connectionString, max: 10 })
  await pool.query(readFileSync(new URL('./schema-pg.sql', import.meta.url), 'utf8'))
  const one = async (text, values) => (await pool.query(text, values)).rows[0]
  return {
    like: 'ILIKE',
    placeholder: (n) => `$${n}`,
    findClient: (id) => one('SELECT * FROM clients WHERE id = $1', [id]),
    findById: (id) => one('SELECT * FROM beneficiaries WHERE id = $1', [id]),
    insert: async (row) =>
      (
        await one(
          `INSERT INTO beneficiaries
             (first_name, last_name, email, phone, date_of_birth, fiscal_code, address, status,
              metadata, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', $8, $9, $10)
           RETURNING id`,
          [
            row.first_name,
            row.last_name,
            row.email,
            row.phone,
            row.date_of_birth,
            row.fiscal_code,
            row.address,
            row.metadata,
            row.created_at,
            row.updated_at,
          ],
        )
      ).id,
    update: (row) =>
      pool.query(
        `UPDATE beneficiaries SET
           first_name = $2, last_name = $3, email = $4, phone = $5, date_of_birth = $6,
           fiscal_code = $7, address = $8, metadata = $9, updated_at = $10
         WHERE id = $1`,
        [
          row.id,
          row.first_name,
          row.last_name,
          row.email,
          row.phone,
          row.date_of_birth,
          row.fiscal_code,
          row.address,
          row.metadata,
          row.updated_at,
        ],
      ),
    count: async (whereSql, params) =>
      Number((await one(`SELECT COUNT(*) AS total FROM beneficiaries ${whereSql}`, params)).total),
    page: async (whereSql, params, limit, offset) =>
      (
        await pool.query(
          `SELECT id, first_name, last_name, email, phone, status, created_at, updated_at
           FROM beneficiaries ${whereSql} ORDER BY id
           LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
          [...params, limit, offset],
        )
      ).rows,
    isUniqueViolation: (error) => error.code === '23505',
    close: () => pool.end(),
  }
}
