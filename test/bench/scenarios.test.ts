import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { SHAPE_CLASSES } from '../../bench/list-shapes.js'
import { selectScenarios, warmupSecondsOf } from '../../bench/scenarios.js'

const names = (only: string | undefined) => selectScenarios(only).map((s) => s.name)

describe('the scenarios --only selects', () => {
  it('runs the fixed scenarios by default, and the shapes and the mixed one only when asked', () => {
    assert.deepEqual(names(undefined), [
      'get',
      'list',
      'search',
      'filter',
      'deep',
      'create',
      'update',
    ])
    assert.deepEqual(
      names('shapes'),
      SHAPE_CLASSES.map((s) => s.name),
    )
    assert.deepEqual(names('update,mixed'), ['reads-only', 'mixed', 'writes-only', 'update'])
    assert.deepEqual(names('search-long,get'), ['get', 'search-long'])
  })

  it('refuses a name it does not know', () => {
    assert.throws(() => selectScenarios('shape'), TypeError)
    assert.throws(() => selectScenarios(' , '), TypeError)
  })

  it('runs the shapes and the mixed scenario on the service only, with writers beside readers', () => {
    const [readsOnly, mixed] = selectScenarios('mixed')
    for (const scenario of [...selectScenarios('shapes'), readsOnly!, mixed!]) {
      assert.deepEqual(
        (['limit', 'peer', 'pg-peer', 'uws', 'node', 'pg'] as const).map((t) => scenario.runsOn(t)),
        [false, false, false, true, true, true],
        scenario.name,
      )
    }
    assert.equal(readsOnly!.connections?.(50), 40)
    assert.equal(mixed!.connections?.(50), 40)
    assert.equal(mixed!.alongside?.connections?.(50), 10)
    assert.equal(mixed!.alongside?.connections?.(1), 1, 'one writer at the least')
    assert.equal(readsOnly!.alongside, undefined)
    assert.equal(mixed!.paths, readsOnly!.paths)
  })

  it("runs the mixed scenario's writes alone after it, on its write connections", () => {
    const [, mixed, writesOnly] = selectScenarios('mixed')
    assert.equal(writesOnly!.name, 'writes-only')
    assert.equal(writesOnly!.script, mixed!.alongside?.script)
    assert.equal(writesOnly!.connections?.(50), mixed!.alongside?.connections?.(50))
    assert.equal(writesOnly!.writes, true)
    assert.deepEqual(
      (['limit', 'peer', 'uws', 'pg'] as const).map((t) => writesOnly!.runsOn(t)),
      [false, false, true, true],
    )
    assert.deepEqual(writesOnly!.env({ maxId: 7 } as never), { BENCH_MAX_ID: '7' })
  })

  it('warms the mixed scenario and its reads-only run up for 15 s, others for --warmup, none with 0', () => {
    const [readsOnly, mixed] = selectScenarios('mixed')
    assert.equal(warmupSecondsOf(selectScenarios('get')[0]!, 2), 2)
    assert.equal(warmupSecondsOf(selectScenarios('search-long')[0]!, 2), 2)
    assert.equal(warmupSecondsOf(readsOnly!, 2), 15)
    assert.equal(warmupSecondsOf(mixed!, 2), 15)
    assert.equal(warmupSecondsOf(mixed!, 20), 20)
    assert.equal(warmupSecondsOf(mixed!, 0), 0)
  })
})
