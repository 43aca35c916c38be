/**
 * The service on PostgreSQL, embedded in-process: two service instances on one database, as two
 * stateless API processes behind a balancer would be. A record created through one is read,
 * listed and searched through the other at once, and a logout on one is honoured by the other.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node dist/examples/postgres/main.js
 *
 * The database must exist; the tables are created on first open (the migrations run under a
 * lock, so instances may start together). It prints each step and fails loudly (exit 1) if an
 * outcome is not what the API promises.
 */
import assert from 'node:assert/strict'
import { createBeneficiaryService, isDomainError } from 'beneficiary-service'
import { openPostgresStorage } from 'beneficiary-service/postgres'
import { nodeSha256 } from 'beneficiary-service/server'

const connectionString = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test'

// Each instance owns a small pool; PostgreSQL's max_connections bounds the sum over instances.
const storageA = await openPostgresStorage({ connectionString, poolSize: 5 })
const storageB = await openPostgresStorage({ connectionString, poolSize: 5 })
try {
  // Both instances sign with the key the first one stored (D3): a token works on either.
  const a = await createBeneficiaryService({ storage: storageA, sha256: nodeSha256 })
  const b = await createBeneficiaryService({ storage: storageB, sha256: nodeSha256 })

  const client = await a.clients.create({ name: 'Regional office', scopes: ['read', 'write'] })
  const { value: tokens } = await a.login({ ip: '127.0.0.1' }, client)
  const ctx = { token: tokens.access_token }
  console.log(`logged in on instance A as ${client.client_id}`)

  const suffix = Date.now().toString(36)
  const { value: created } = await a.create(ctx, {
    first_name: 'Nguyễn',
    last_name: `Thị Lan ${suffix}`,
    email: `lan.${suffix}@example.org`,
  })
  console.log(`created #${created.id} on instance A`)

  const { value: read } = await b.get(ctx, created.id)
  assert.equal(read.first_name, 'Nguyễn')
  const { value: found } = await b.list(ctx, { search: `nguyen ${suffix}` })
  assert.deepEqual(
    found.data.map((item) => item.id),
    [created.id],
  )
  console.log(`read and found by "nguyen ${suffix}" on instance B`)

  await a.logout(ctx)
  try {
    await b.get(ctx, created.id)
    assert.fail('a logged-out token still worked on instance B')
  } catch (error) {
    assert.ok(isDomainError(error) && error.code === 'invalid_token')
  }
  console.log('logged out on A: the token is refused on B')
  console.log('postgres: ok')
} finally {
  await storageA.close()
  await storageB.close()
}
