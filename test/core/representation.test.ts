import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { isoTime } from '../../core/time.js'

describe('isoTime', () => {
  it('writes exactly what Date#toISOString writes, at the edges of days, months, years and eras', () => {
    const edges = [
      0,
      -1,
      Date.UTC(2000, 1, 29, 23, 59, 59, 999),
      Date.UTC(1900, 1, 28),
      Date.UTC(2100, 2, 1),
      Date.UTC(2026, 11, 31, 23, 59, 59, 999),
      Date.UTC(2027, 0, 1),
      Date.UTC(1000, 0, 1),
      Date.UTC(999, 11, 31, 23, 59, 59, 999),
      Date.UTC(9999, 11, 31, 23, 59, 59, 999),
      Date.UTC(10000, 0, 1),
      -62_198_755_200_000,
    ]
    for (const ms of edges) assert.equal(isoTime(ms), new Date(ms).toISOString(), String(ms))
  })

  it('agrees with Date#toISOString on 100,000 instants spread over six centuries', () => {
    let state = 42
    for (let i = 0; i < 100_000; i++) {
      state = (state * 1_103_515_245 + 12_345) % 2_147_483_648
      const ms = Math.floor((state / 2_147_483_648) * 2e13) - 1e13
      assert.equal(isoTime(ms), new Date(ms).toISOString())
    }
  })
})
