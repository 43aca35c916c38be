import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/** The compiled CLI, found from this file so that the tests run from any output folder. */
export const CLI = fileURLToPath(new URL('../../server/cli.js', import.meta.url))

/** How a child process ended. */
export interface Exit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  /** `performance.now()` when the exit was seen. */
  readonly at: number
}

/** The folder of the package (where `package.json` is), found from this file. */
export const PACKAGE_ROOT = fileURLToPath(new URL('../../../', import.meta.url))

/** What a suite gives `CliChild`. */
export interface CliChildOptions {
  /** Arguments after the CLI's path, such as `['serve', '--db', path, '--port', '0']`. */
  readonly args: readonly string[]
  /**
   * What runs instead of `node <CLI>`, `args` after it: `['npm', 'start', '--']` runs the server
   * as `npm start` does, from the package's folder. Default: this Node.js on the compiled CLI.
   */
  readonly command?: readonly [string, ...string[]]
  /** Where it runs. Default: the package's folder with `command`, else this process's. */
  readonly cwd?: string
  /** Its own process group, so that a test can signal the group as a terminal does. */
  readonly detached?: boolean
  /** The child's environment, besides PATH (nothing else of the test run's is inherited). */
  readonly env?: Readonly<Record<string, string>>
  /** Receives every complete line of standard output, without its newline. */
  readonly onLine: (line: string) => void
  /** Standard error is kept up to this many characters (the last ones). Default: all of it. */
  readonly stderrLimit?: number
}

/**
 * The `beneficiaries` CLI as a real child process, as an operator runs it: the one place the
 * suites that start servers (faults, load, security) spawn, split output into lines, wait for
 * an exit and kill. Only PATH is inherited, so NODE_OPTIONS or the coverage variables of the
 * test run do not change what the child does; should the test process end without its `after`
 * hooks, the child is killed with it.
 */
export class CliChild {
  readonly child: ChildProcessWithoutNullStreams
  readonly exited: Promise<Exit>
  #exit: Exit | undefined
  #partial = ''
  #stderr = ''

  constructor(options: CliChildOptions) {
    const [file, ...before] = options.command ?? [process.execPath, CLI]
    this.child = spawn(file, [...before, ...options.args], {
      ...(options.command !== undefined && { cwd: PACKAGE_ROOT }),
      ...(options.cwd !== undefined && { cwd: options.cwd }),
      env: { PATH: process.env['PATH'] ?? '', ...options.env },
      detached: options.detached ?? false,
    })
    const orphaned = (): void => void this.child.kill('SIGKILL')
    process.once('exit', orphaned)
    this.exited = new Promise((resolve) =>
      // 'close', not 'exit': by then every line of output has been handed to `onLine`.
      this.child.on('close', (code, signal) => {
        process.off('exit', orphaned)
        this.#exit = { code, signal, at: performance.now() }
        resolve(this.#exit)
      }),
    )
    const onLine = options.onLine
    this.child.stdout.setEncoding('utf8')
    this.child.stdout.on('data', (chunk: string) => {
      const lines = (this.#partial + chunk).split('\n')
      this.#partial = lines.pop() ?? ''
      for (const line of lines) onLine(line)
    })
    const limit = options.stderrLimit ?? Infinity
    this.child.stderr.setEncoding('utf8')
    this.child.stderr.on('data', (chunk: string) => {
      this.#stderr = (this.#stderr + chunk).slice(-limit)
    })
  }

  /** What the child wrote to standard error (see `stderrLimit`). */
  get stderr(): string {
    return this.#stderr
  }

  /** Whether the process still runs. */
  get running(): boolean {
    return this.#exit === undefined
  }

  /** Resolves with the exit, or `undefined` when the process still runs after `timeoutMs`. */
  async exitWithin(timeoutMs: number): Promise<Exit | undefined> {
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), timeoutMs)
    })
    try {
      return await Promise.race([this.exited, late])
    } finally {
      clearTimeout(timer)
    }
  }

  /**
   * Sends `signal` unless the process has exited and waits for the exit; SIGKILL when it still
   * runs after `deadlineMs`.
   */
  async stop(signal: NodeJS.Signals = 'SIGTERM', deadlineMs = 10_000): Promise<Exit> {
    if (this.#exit !== undefined) return this.#exit
    this.child.kill(signal)
    const exit = await this.exitWithin(deadlineMs)
    if (exit !== undefined) return exit
    this.child.kill('SIGKILL')
    return this.exited
  }

  /** Kills the process at once, if it still runs (for `after` hooks); resolves on its exit. */
  kill(): Promise<Exit> {
    return this.stop('SIGKILL')
  }

  /** The resident set size of the process in bytes (VmRSS), or `undefined` once it has exited. */
  rss(): number | undefined {
    if (this.#exit !== undefined || this.child.pid === undefined) return undefined
    try {
      const status = readFileSync(`/proc/${this.child.pid}/status`, 'latin1')
      const match = /^VmRSS:\s+(\d+) kB$/m.exec(status)
      return match === null ? undefined : Number(match[1]) * 1024
    } catch {
      return undefined
    }
  }
}
