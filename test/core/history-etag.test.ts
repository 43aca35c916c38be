import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { maria, setup } from './support.js'

describe('the ETag of a history', () => {
  it('stays the same while nothing changes, on every page, and changes with every new entry', async () => {
    const { service, ctx } = await setup()
    const { value, etag: recordEtag } = await service.create(ctx, maria)
    const first = await service.history(ctx, value.id, {})
    assert.match(first.etag ?? '', /^"[!#-~]+"$/)
    assert.equal((await service.history(ctx, value.id, {})).etag, first.etag)
    // Not the record's: a client must not take one for the other.
    assert.notEqual(first.etag, recordEtag)

    // A PUT that changes nothing adds no entry (D11): the history is the same.
    await service.update(ctx, value.id, { last_name: 'Rossi' })
    assert.equal((await service.history(ctx, value.id, {})).etag, first.etag)

    await service.update(ctx, value.id, { last_name: 'Verdi' })
    const second = await service.history(ctx, value.id, {})
    assert.notEqual(second.etag, first.etag)
    await service.setStatus(ctx, value.id, { status: 'active' })
    const third = await service.history(ctx, value.id, { page: '2', per_page: '2' })
    assert.notEqual(third.etag, second.etag)
    assert.notEqual(third.etag, first.etag)
    // Page 1 of the same history has the same validator: every page follows from the entries.
    assert.equal((await service.history(ctx, value.id, { per_page: '1' })).etag, third.etag)
  })
})
