// The peer's table on PostgreSQL through node-postgres: a pool, parameterised queries, ILIKE for
// the search, COUNT(*) and OFFSET for pages. What an engineer writes by hand.
import { readFileSync } from 'node:fs'
import pg from 'pg'

const WRITTEN = [
  'first_name',
  'last_name',
  'email',
  'phone',
  'date_of_birth',
  'fiscal_code',
  'address',
  'metadata',
]
const written = (row) => WRITTEN.map((column) => row[column])

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
             (${WRITTEN.join(', ')}, status, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pending', $9, $10)
           RETURNING id`,
          [...written(row), row.created_at, row.updated_at],
        )
      ).id,
    update: (row) =>
      pool.query(
        `UPDATE beneficiaries SET
           first_name = $1, last_name = $2, email = $3, phone = $4, date_of_birth = $5,
           fiscal_code = $6, address = $7, metadata = $8, updated_at = $9
         WHERE id = $10`,
        [...written(row), row.updated_at, row.id],
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
