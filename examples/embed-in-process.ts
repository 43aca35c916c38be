/**
 * A host application that embeds the service in-process, on an SQLite file, and walks one
 * beneficiary through its whole life by calling the core directly (no HTTP).
 *
 *   node dist/examples/embed-in-process.js [path/to/file.sqlite]
 *
 * Without a path it uses a fresh temporary file. It prints each step and fails loudly (exit 1)
 * if any outcome is not what the API promises.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createBeneficiaryService } from 'beneficiary-service'
import { openSqliteStorage } from 'beneficiary-service/sqlite'

const folder = process.argv[2] === undefined ? await mkdtemp(join(tmpdir(), 'embed-')) : undefined
const path = process.argv[2] ?? join(folder!, 'beneficiaries.sqlite')
const storage = await openSqliteStorage({ path })
try {
  const service = await createBeneficiaryService({ storage })

  // An operator provisions a client once; the secret is shown this one time.
  const client = await service.clients.create({ name: 'Housing office', scopes: ['read', 'write'] })
  const { value: tokens } = await service.login(
    { ip: '127.0.0.1' },
    { client_id: client.client_id, client_secret: client.client_secret },
  )
  const ctx = { token: tokens.access_token, requestId: 'embed-example' }
  console.log(`logged in as ${client.client_id} with scopes "${tokens.scope}"`)

  const { value: maria } = await service.create(ctx, {
    first_name: 'Maria',
    last_name: 'Rossi',
    email: 'maria.rossi@example.org',
    phone: '+39 06 1234 5678',
    date_of_birth: '1985-12-10',
    fiscal_code: 'RSSMRA85T10A562S',
    address: { street: 'Via Roma 1', city: 'Roma', postal_code: '00184', country: 'IT' },
    metadata: { source: 'desk', campaign_id: 'winter-2026' },
  })
  await service.create(ctx, { first_name: 'Anna', last_name: 'Nguyễn', email: 'anna@example.org' })
  await service.create(ctx, {
    first_name: 'Luca',
    last_name: "D'Angelo",
    email: 'luca@example.org',
  })
  console.log(`created #${maria.id} ${maria.first_name} ${maria.last_name} (${maria.status})`)
  assert.equal(maria.status, 'pending')

  const { value: found } = await service.list(ctx, { search: 'mar ros', status: 'pending' })
  console.log(`search "mar ros" among pending: ${found.meta.total_count} found`)
  assert.deepEqual(
    found.data.map((b) => b.id),
    [maria.id],
  )
  const { value: accents } = await service.list(ctx, { search: 'nguyen' })
  assert.equal(accents.data[0]?.last_name, 'Nguyễn')
  const today = new Date().toISOString().slice(0, 10)
  const { value: createdToday } = await service.list(ctx, { created_from: today, per_page: '2' })
  console.log(
    `created today: ${createdToday.meta.total_count}, next page ${createdToday.links.next}`,
  )
  assert.equal(createdToday.meta.total_pages, 2)

  // Update with If-Match: the change applies only to the version we read.
  const { etag } = await service.get(ctx, maria.id)
  const { value: updated, etag: newEtag } = await service.update(
    { ...ctx, ifMatch: etag },
    maria.id,
    { phone: null, metadata: { source: 'desk', notes: 'prefers e-mail' } },
  )
  console.log(`updated #${updated.id}: phone ${updated.phone}, etag ${etag} -> ${newEtag}`)
  await assert.rejects(service.update({ ...ctx, ifMatch: etag }, maria.id, { last_name: 'X' }), {
    code: 'precondition_failed',
  })

  const { value: active } = await service.setStatus(ctx, maria.id, {
    status: 'active',
    reason: 'documents checked',
  })
  console.log(`status of #${active.id}: ${active.status}`)
  assert.equal(active.status, 'active')

  const { value: history } = await service.history(ctx, maria.id, {})
  for (const entry of history.data) {
    console.log(
      `  history: ${entry.at} ${entry.action} (${entry.changes.map((c) => c.field).join(', ')})`,
    )
  }
  assert.deepEqual(
    history.data.map((e) => e.action),
    ['created', 'updated', 'status_changed'],
  )

  await service.remove(ctx, maria.id)
  await assert.rejects(service.get(ctx, maria.id), { code: 'not_found' })
  console.log(
    `deleted #${maria.id}; ${(await service.list(ctx, {})).value.meta.total_count} remain`,
  )
  console.log('embed-in-process: ok')
} finally {
  await storage.close()
  if (folder !== undefined) await rm(folder, { recursive: true, force: true })
}
