import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { peerOf, type Measurement, type TargetName } from '../../bench/result-table.js'
import { isShape } from '../../bench/shape-report.js'

// docs/performance.md shows its runs as tables: this holds each table, its date and its machine
// to the run's JSON, in the one result file the repository keeps (`{ runs: [...] }`), which the
// page cites; a text names a run by its date and time in bold.

const root = new URL('../../../', import.meta.url)
const page = readFileSync(new URL('docs/performance.md', root), 'utf8')

interface Run {
  readonly date: string
  readonly machine: { readonly cpu: string; readonly cores: number; readonly node: string }
  readonly measurements: readonly Measurement[]
}

/** The result files the page cites, each once. */
const citedFiles = [
  ...new Set(
    [...page.matchAll(/\(\.\.\/(bench\/results\/[^)]+\.json)\)/g)].map((cited) => cited[1]!),
  ),
]

/** Every run of the cited files. */
const runs: readonly Run[] = citedFiles.flatMap(
  (file) => (JSON.parse(readFileSync(new URL(file, root), 'utf8')) as { runs: Run[] }).runs,
)

/** The runs a text names (`**2026-12-05 at 11:48 UTC**`), in its order. */
function namedRuns(text: string): Run[] {
  return [...text.matchAll(/\*\*(\d{4}-\d{2}-\d{2}) at (\d{2}:\d{2}) UTC\*\*/g)].map((named) => {
    const run = runs.find((candidate) => candidate.date.startsWith(`${named[1]}T${named[2]}`))
    assert.ok(run !== undefined, `a cited run of ${named[1]} ${named[2]}`)
    return run
  })
}

/** The text of the section under `heading`, to the next section. */
function sectionOf(heading: string): string {
  const start = page.indexOf(`\n## ${heading}\n`)
  assert.ok(start >= 0, `the page has a section "${heading}"`)
  const end = page.indexOf('\n## ', start + 1)
  return page.slice(start, end < 0 ? undefined : end)
}

/** The tables of a section, each as its rows of cells (headers left out). */
function tables(heading = 'The figures'): string[][][] {
  const section = sectionOf(heading)
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
  const [run] = namedRuns(sectionOf('The figures').replaceAll('\n', ' ')) as [Run]

  it('cites one result file, and names the date, the machine and the Node.js of the run', () => {
    assert.deepEqual(citedFiles.length, 1, 'one result file')
    assert.ok(citedFiles[0]!.startsWith('bench/results/'))
    const text = sectionOf('The figures').replaceAll('\n', ' ')
    assert.ok(text.includes(`${run.machine.cores} cores of an ${run.machine.cpu}`), 'the machine')
    assert.ok(text.includes(`Node.js ${run.machine.node.replace(/^v/, '')}`), 'the Node.js')
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

describe('docs/performance.md at 10,000,000 records, against the runs it cites', () => {
  const heading = 'PostgreSQL at 10,000,000 records'
  const text = sectionOf(heading).replaceAll('\n', ' ')
  const [nationalRun, millionRun] = namedRuns(text)
  const national = { run: nationalRun! }
  const million = { run: millionRun! }
  const rows = (run: Run | undefined) =>
    (run as (Run & { options: { rows: number } }) | undefined)?.options.rows

  it('names a run at 10,000,000 records and one at 1,000,000, and the machine', () => {
    assert.equal(rows(national.run), 10_000_000)
    assert.equal(rows(million.run), 1_000_000)
    assert.ok(
      text.includes(`${national.run.machine.cores} cores of an ${national.run.machine.cpu}`),
    )
  })

  it("shows every measurement of the 10,000,000 run with PostgreSQL's CPU beside the service's", () => {
    const [measured] = tables(heading)
    const { run } = national
    assert.equal(measured?.length, run.measurements.length)
    for (const [i, m] of run.measurements.entries()) {
      assert.deepEqual(measured![i], [
        m.scenario,
        Math.round(m.requestsPerSecond).toLocaleString('en-US'),
        m.p50Ms.toFixed(2),
        m.p99Ms.toFixed(2),
        m.cpuUsPerRequest.toFixed(1),
        (m.pgCpuUsPerRequest ?? 0).toFixed(1),
        String(m.non2xx),
      ])
    }
  })

  it('compares get, create and update at 1,000,000 and 10,000,000 records', () => {
    const [, compared] = tables(heading)
    const find = (run: Run, scenario: string) =>
      run.measurements.find((m) => m.scenario === scenario)!
    const scenarios = ['get', 'create', 'update']
    assert.equal(compared?.length, scenarios.length)
    for (const [i, scenario] of scenarios.entries()) {
      const small = find(million.run, scenario)
      const large = find(national.run, scenario)
      assert.deepEqual(compared![i], [
        scenario,
        Math.round(small.requestsPerSecond).toLocaleString('en-US'),
        Math.round(large.requestsPerSecond).toLocaleString('en-US'),
        `${(large.requestsPerSecond / small.requestsPerSecond).toFixed(2)}x`,
        small.p99Ms.toFixed(2),
        large.p99Ms.toFixed(2),
      ])
    }
  })
})
