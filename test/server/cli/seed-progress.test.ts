import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { CliIo } from '../../../server/cli/cli-io.js'
import { SeedProgress, seedMemoryMib } from '../../../server/cli/seed-progress.js'

/** A fake standard error, a terminal or not, and a clock that moves only when told. */
function fakeIo(terminal: boolean): { io: CliIo; lines: string[]; drawn: string[] } {
  const lines: string[] = []
  const drawn: string[] = []
  const io: CliIo = {
    env: {},
    out: () => undefined,
    err: (text) => void lines.push(text),
    ...(terminal && { terminal: { write: (text: string) => void drawn.push(text), columns: 80 } }),
    signals: { once: () => undefined },
  }
  return { io, lines, drawn }
}

/** Takes every record of `progress.follow(0 … count-1)`, moving the clock `msPerRecord` each. */
function take(progress: SeedProgress, count: number, clock: { now: number }, msPerRecord: number) {
  const records = (function* () {
    for (let i = 0; i < count; i++) {
      clock.now += msPerRecord
      yield i
    }
  })()
  let taken = 0
  for (const record of progress.follow(records)) assert.equal(record, taken++)
  return taken
}

describe('SeedProgress', () => {
  it('on a terminal, redraws one bar in place and ends its line when the records are taken', () => {
    const { io, lines, drawn } = fakeIo(true)
    const clock = { now: 0 }
    const progress = new SeedProgress(100_000, io, () => clock.now)
    assert.equal(take(progress, 100_000, clock, 0.1), 100_000)
    const bars = drawn.filter((text) => text.startsWith('\rseed '))
    // 10 s at one redraw per 100 ms at most, checked every 1,024 records: 97 redraws, and the
    // first and last.
    assert.ok(bars.length >= 50 && bars.length <= 110, String(bars.length))
    for (const bar of bars) {
      assert.ok(bar.endsWith('\u001b[K'), 'erases what a longer line left')
      assert.ok(!bar.includes('\n'), 'one line, redrawn')
      // Visible: all but the carriage return and the erase sequence; short of the last column.
      assert.ok(bar.length - 1 - 3 < 80, 'fits the terminal')
    }
    assert.match(bars[0]!, /░{10,}\s+0%  0 of 100,000\u001b\[K$/)
    assert.match(bars.at(-1)!, /█{10,} 100%  100,000 of 100,000\u001b\[K$/)
    assert.match(
      bars[Math.floor(bars.length / 2)]!,
      /█+░+\s+\d+%  [\d,]+ of 100,000, about \d+ s left/,
    )
    assert.equal(drawn.at(-1), '\n', 'the line ends before the next message')
    assert.deepEqual(lines, [
      'seed: 100,000 records written; now the history, counters and search index',
    ])
  })

  it('elsewhere, writes a line every five seconds, with how many, the share and the time left', () => {
    const { io, lines, drawn } = fakeIo(false)
    const clock = { now: 1_000 }
    const progress = new SeedProgress(200_000, io, () => clock.now)
    take(progress, 200_000, clock, 0.1)
    assert.deepEqual(drawn, [])
    // 20 s of records: a line after 5, 10 and 15 s (checked every 1,024 records), then the end.
    assert.equal(lines.length, 4, lines.join('\n'))
    assert.match(lines[0]!, /^seed: 50,176 of 200,000 \(25%\), about 15 s left$/)
    assert.match(lines[1]!, /^seed: 100,352 of 200,000 \(50%\), about 10 s left$/)
    assert.match(lines[2]!, /^seed: 150,528 of 200,000 \(75%\), about 5 s left$/)
    assert.equal(
      lines[3],
      'seed: 200,000 records written; now the history, counters and search index',
    )
  })

  it('writes no line for a seed shorter than five seconds but the last', () => {
    const { io, lines } = fakeIo(false)
    const clock = { now: 0 }
    take(new SeedProgress(3_000, io, () => clock.now), 3_000, clock, 1)
    assert.equal(lines.length, 1)
  })

  it('ends the bar line on close when the records stopped coming (a failed seed)', () => {
    const { io, drawn } = fakeIo(true)
    const clock = { now: 0 }
    const progress = new SeedProgress(10, io, () => clock.now)
    const iterator = progress.follow([1, 2, 3])[Symbol.iterator]()
    iterator.next()
    assert.notEqual(drawn.at(-1), '\n')
    progress.close()
    assert.equal(drawn.at(-1), '\n')
    progress.close()
    assert.equal(drawn.filter((text) => text === '\n').length, 1, 'once')
  })

  it('follows committed batches of a resumed seed, reckoning the time left from what it adds', () => {
    const { io, lines } = fakeIo(false)
    const clock = { now: 0 }
    const progress = new SeedProgress(100_000, io, () => clock.now)
    progress.begin(60_000)
    // 4,000 records a second from 60,000 on: the rate of this run, not 64,000 in a second.
    for (let done = 61_000; done < 100_000; done += 1_000) {
      clock.now += 250
      progress.advance(done)
    }
    progress.end(100_000, 'the tables are analysed (VACUUM ANALYZE)')
    assert.equal(lines[0], 'seed: resuming after the 60,000 records already in the database')
    assert.equal(lines[1], 'seed: 80,000 of 100,000 (80%), about 5 s left')
    assert.equal(lines.length, 3, lines.join('\n'))
    assert.equal(
      lines[2],
      'seed: 100,000 records written; now the tables are analysed (VACUUM ANALYZE)',
    )
  })

  it('draws no bar on a terminal too narrow for one, only the figures', () => {
    const lines: string[] = []
    const drawn: string[] = []
    const io: CliIo = {
      env: {},
      out: () => undefined,
      err: (text) => void lines.push(text),
      terminal: { write: (text) => void drawn.push(text), columns: 25 },
      signals: { once: () => undefined },
    }
    const clock = { now: 0 }
    take(new SeedProgress(5, io, () => clock.now), 5, clock, 1)
    assert.equal(drawn[0], '\rseed    0%  0 of 5\u001b[K')
  })

  it('expects the measured memory of a seed: flat up to a million, then a little more per million', () => {
    assert.equal(seedMemoryMib('sqlite', 1), 360)
    assert.equal(seedMemoryMib('sqlite', 1_000_000), 360)
    // Measured: 406 MiB at three million.
    assert.equal(seedMemoryMib('sqlite', 3_000_000), 410)
    assert.equal(seedMemoryMib('sqlite', 10_000_000), 590)
    assert.equal(seedMemoryMib('postgres', 200_000), 240)
    assert.equal(seedMemoryMib('postgres', 3_000_000), 300)
  })
})
