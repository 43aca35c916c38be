import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const CLI = fileURLToPath(new URL('../../server/cli.js', import.meta.url))

/**
 * A `beneficiaries serve` child process on 127.0.0.1 and an ephemeral port, logging as in
 * production (one JSON line per request at the default level). Its output is drained as it comes
 * and only counted, so the pipe never fills and reading it costs the load generator little; the
 * lines at level error or fatal, and the last few lines, are kept for the assertions and for
 * diagnostics.
 */
export class ServeChild {
  readonly child: ChildProcessWithoutNullStreams
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  readonly url: Promise<string>
  /** Lines logged at level 50 (error) or above. */
  readonly errorLines: string[] = []
  #lineCount = 0
  #tail: string[] = []
  #partial = ''
  #stderr = ''
  #exitedNow = false

  constructor(args: readonly string[], env: Readonly<Record<string, string>> = {}) {
    // Only PATH is inherited: NODE_OPTIONS or the coverage variables of the test run would change
    // what is measured.
    this.child = spawn(
      process.execPath,
      [CLI, 'serve', '--host', '127.0.0.1', '--port', '0', ...args],
      {
        env: { PATH: process.env['PATH'] ?? '', ...env },
      },
    )
    // Should the test process end without its `after` hooks (an uncaught error), the server
    // goes with it rather than living on.
    const orphaned = (): void => this.kill()
    process.once('exit', orphaned)
    this.exited = new Promise((resolve) =>
      this.child.on('exit', (code, signal) => {
        this.#exitedNow = true
        process.off('exit', orphaned)
        resolve({ code, signal })
      }),
    )
    let found: (url: string) => void = () => undefined
    let failed: (error: Error) => void = () => undefined
    this.url = new Promise((resolve, reject) => {
      found = resolve
      failed = reject
    })
    void this.exited.then(() =>
      failed(new Error(`serve exited before listening: ${this.diagnostics}`)),
    )
    this.child.stdout.setEncoding('utf8')
    this.child.stdout.on('data', (chunk: string) => {
      const lines = (this.#partial + chunk).split('\n')
      this.#partial = lines.pop() ?? ''
      this.#lineCount += lines.length
      for (const line of lines) {
        if (/"level":(?:5|6)0/.test(line)) this.errorLines.push(line)
        if (line.includes('"url":"')) found(String((JSON.parse(line) as { url: unknown }).url))
      }
      this.#tail = [...this.#tail, ...lines].slice(-5)
    })
    this.child.stderr.setEncoding('utf8')
    this.child.stderr.on(
      'data',
      (chunk: string) => (this.#stderr = (this.#stderr + chunk).slice(-4000)),
    )
  }

  /** How many lines the server has logged so far. */
  get lineCount(): number {
    return this.#lineCount
  }

  /** The last lines of standard output and error, for assertion messages. */
  get diagnostics(): string {
    return `stdout tail: ${this.#tail.join('\n')}\nstderr: ${this.#stderr}`
  }

  /** The resident set size of the server process in bytes (VmRSS), or undefined once it has exited. */
  rss(): number | undefined {
    if (this.#exitedNow || this.child.pid === undefined) return undefined
    try {
      const status = readFileSync(`/proc/${this.child.pid}/status`, 'latin1')
      const match = /^VmRSS:\s+(\d+) kB$/m.exec(status)
      return match === null ? undefined : Number(match[1]) * 1024
    } catch {
      return undefined
    }
  }

  /** Sends SIGTERM and waits for the exit, at most `deadlineMs`; then SIGKILL. */
  async stop(deadlineMs: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (!this.#exitedNow) this.child.kill('SIGTERM')
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<'late'>(
      (resolve) => (timer = setTimeout(() => resolve('late'), deadlineMs)),
    )
    const outcome = await Promise.race([this.exited, late])
    clearTimeout(timer)
    if (outcome !== 'late') return outcome
    this.kill()
    return this.exited
  }

  /** Kills the process at once, if it still runs (for `after` hooks). */
  kill(): void {
    if (!this.#exitedNow) this.child.kill('SIGKILL')
  }
}
