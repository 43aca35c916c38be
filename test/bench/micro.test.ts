import assert from 'node:assert/strict'
import { test } from 'node:test'
import { runMicro } from '../../bench/micro.js'

// A smoke check only: speed is judged by `npm run bench`, never by a timed test.
test('the micro-benchmark runs every piece of the request path and reports finite positive figures', async () => {
  const results = await runMicro({ iterations: 20, rows: 200 })
  assert.ok(results.length >= 8)
  assert.equal(new Set(results.map((r) => r.name)).size, results.length)
  for (const result of results) {
    assert.equal(result.iterations, 20, result.name)
    assert.ok(Number.isFinite(result.opsPerSecond) && result.opsPerSecond > 0, result.name)
    assert.ok(Number.isFinite(result.meanUs) && result.meanUs > 0, result.name)
  }
})

test('the micro-benchmark refuses a number of iterations that is not a positive whole number', async () => {
  await assert.rejects(runMicro({ iterations: 0 }), TypeError)
  await assert.rejects(runMicro({ iterations: 1.5 }), TypeError)
})
