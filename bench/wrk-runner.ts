import { spawnSync } from 'node:child_process'
import { exitOf, type ProcessGroup } from './process-group.js'

/** What one wrk run measured (the JSON line written by `bench/wrk/report.lua`). */
export interface WrkResult {
  readonly requests: number
  readonly duration_us: number
  readonly bytes: number
  readonly p50_us: number
  readonly p90_us: number
  readonly p99_us: number
  readonly max_us: number
  readonly mean_us: number
  /** Responses with a status of 400 or more (wrk's `errors.status`); these servers send no 1xx/3xx. */
  readonly non2xx: number
  readonly connect_errors: number
  readonly read_errors: number
  readonly write_errors: number
  readonly timeouts: number
}

/** One load run. */
export interface WrkRun {
  /** The Lua script, by path. */
  readonly script: string
  /** `http://127.0.0.1:PORT`: wrk is only ever pointed at the loopback. */
  readonly baseUrl: string
  readonly connections: number
  readonly durationSeconds: number
  /** Core wrk is pinned to. */
  readonly core: number
  /** Variables the Lua scripts read (`BENCH_TOKEN`, `BENCH_PATH`, `BENCH_MAX_ID`, …). */
  readonly env: Readonly<Record<string, string>>
}

const RESULT_PREFIX = 'BENCH_RESULT '

/** Installs wrk from Debian's packages when it is missing. */
export function ensureWrk(): void {
  if (spawnSync('wrk', ['--version']).error === undefined) return
  console.log('wrk is missing: installing it with apt-get (Debian package "wrk")')
  const update = spawnSync('apt-get', ['update'], { stdio: 'inherit', timeout: 300_000 })
  const install = spawnSync('apt-get', ['install', '-y', 'wrk'], {
    stdio: 'inherit',
    timeout: 300_000,
  })
  if (update.status !== 0 || install.status !== 0 || spawnSync('wrk', ['--version']).error) {
    throw new Error('wrk is not installed and apt-get could not install it')
  }
}

/**
 * Runs wrk with one thread on its own core for a fixed time and returns its figures. The run is
 * bounded: wrk stops by itself after `durationSeconds`, and is killed 20 s later if it has not.
 */
export async function runWrk(group: ProcessGroup, run: WrkRun): Promise<WrkResult> {
  const url = new URL(run.baseUrl)
  if (url.hostname !== '127.0.0.1') throw new TypeError('wrk only ever targets 127.0.0.1')
  const child = group.spawn(
    'wrk',
    [
      '-t1',
      `-c${run.connections}`,
      `-d${run.durationSeconds}s`,
      // Long enough that a slow server's queueing shows up as latency rather than as timeouts.
      '--timeout',
      '30s',
      '-s',
      run.script,
      run.baseUrl,
    ],
    { core: run.core, env: { ...process.env, ...run.env }, stdio: ['ignore', 'pipe', 'pipe'] },
  )
  let stdout = ''
  let stderr = ''
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const watchdog = setTimeout(() => void group.stop(child), (run.durationSeconds + 20) * 1000)
  const code = await exitOf(child)
  clearTimeout(watchdog)
  const line = stdout.split('\n').find((candidate) => candidate.startsWith(RESULT_PREFIX))
  if (code !== 0 || line === undefined) {
    throw new Error(`wrk failed (${String(code)}): ${stderr.trim() || stdout.trim()}`)
  }
  return JSON.parse(line.slice(RESULT_PREFIX.length)) as WrkResult
}
