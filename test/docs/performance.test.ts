import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { peerOf, type Measurement, type TargetName } from '../../bench/result-table.js'
import { isShape } from '../../bench/shape-report.js'

// docs/performance.md shows one run as one table: this holds the table, its date and its machine
// to the run's JSON, the one result file the repository keeps.

const root = new URL('../../../', import.meta.url)
const page = readFileSync(new URL('docs/performance.md', root), 'utf8')

interface Run {
  readonly date: string
  readonly machine: { readonly cpu: string; readonly cores: number; readonly node: string }
  readonly measurements: readonly Measurement[]
}

/** The result file the page cites, read. */
function citedRun(): { file: string; run: Run } {
  const cited = /\(\.\.\/(bench\/results\/[^)]+\.json)\)/.exec(page)
  assert.ok(cited !== null, 'the page links its result file')
  const file = cited[1]!
  return { file, run: JSON.parse(readFileSync(new URL(file, root), 'utf8')) as Run }
}

/** The tables under "## The figures", each as its rows of cells (headers left out). */
function tables(): string[][][] {
  const start = page.indexOf('\n## The figures\n')
  assert.ok(start >= 0, 'the page has a section "The figures"')
  const section = page.slice(start, page.indexOf('\n## ', start + 1))
  const found: string[][][] = []
  let current: string[] = []
  for (const line of [...section.split('\n'), '']) {
    if (line.startsWith('| ')) {
      current.push(line)
      continue
    }
    if (current.length > 0) found.push(current.slice(2).map(cellsOf))
    current = []
  }
  return found
}

function cellsOf(line: string): string[] {
  return line
    .slice(1, -1)
    .split('|')
    .map((cell) => cell.trim())
}

describe('docs/performance.md, against the run it cites', () => {
  const { file, run } = citedRun()

  it('names the date, the machine and the Node.js of the run', () => {
    const text = page.replaceAll('\n', ' ')
    const [day, time] = run.date.split('T') as [string, string]
    assert.ok(text.includes(`**${day} at ${time.slice(0, 5)} UTC**`), run.date)
    assert.ok(text.includes(`${run.machine.cores} cores of an ${run.machine.cpu}`), 'the machine')
    assert.ok(text.includes(`Node.js ${run.machine.node.replace(/^v/, '')}`), 'the Node.js')
    assert.ok(file.startsWith('bench/results/'))
  })

  it("shows every measurement of the run, each figure as the run's JSON has it", () => {
    const [scenarios, shapes] = tables()
    assert.ok(scenarios !== undefined && shapes !== undefined, 'two tables: scenarios, shapes')
    const fixed = run.measurements.filter((m) => !isShape(m))
    assert.equal(scenarios.length, fixed.length)
    const find = (scenario: string, target: TargetName) =>
      run.measurements.find((m) => m.scenario === scenario && m.target === target)
    for (const [i, m] of fixed.entries()) {
      const peer = find(m.scenario, peerOf(m.target))
      const ratio =
        peer === undefined || peer.requestsPerSecond === 0
          ? '—'
          : `${(m.requestsPerSecond / peer.requestsPerSecond).toFixed(2)}x`
      assert.deepEqual(scenarios[i], [
        m.scenario,
        m.target,
        Math.round(m.requestsPerSecond).toLocaleString('en-US'),
        ratio,
        m.p50Ms.toFixed(2),
        m.p99Ms.toFixed(2),
        m.cpuUsPerRequest.toFixed(1),
        String(Math.round(m.peakRssMb)),
      ])
    }
    const classes = run.measurements.filter(isShape)
    assert.equal(shapes.length, classes.length)
    for (const [i, m] of classes.entries()) {
      assert.deepEqual(shapes[i], [
        m.scenario,
        m.target,
        Math.round(m.requestsPerSecond).toLocaleString('en-US'),
        m.p50Ms.toFixed(2),
        m.p99Ms.toFixed(2),
        m.cpuUsPerRequest.toFixed(1),
      ])
    }
  })
})
