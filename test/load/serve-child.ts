import { CLI, CliChild, type Exit } from '../support/cli-child.js'

/**
 * A `beneficiaries serve` child process on 127.0.0.1 and an ephemeral port, logging as in
 * production (one JSON line per request at the default level). Its output is drained as it comes
 * and only counted, so the pipe never fills and reading it costs the load generator little; the
 * lines at level error or fatal, and the last few lines, are kept for the assertions and for
 * diagnostics.
 */
export class ServeChild {
  readonly url: Promise<string>
  /** Lines logged at level 50 (error) or above. */
  readonly errorLines: string[] = []
  readonly #process: CliChild
  #lineCount = 0
  #tail: string[] = []

  /** `nodeFlags` go to Node.js before the CLI's path, such as V8's heap sizes. */
  constructor(
    args: readonly string[],
    env: Readonly<Record<string, string>> = {},
    nodeFlags: readonly string[] = [],
  ) {
    // Output arrives on later turns of the event loop, after `found` is set below.
    let found: (url: string) => void = () => undefined
    this.#process = new CliChild({
      args: ['serve', '--host', '127.0.0.1', '--port', '0', ...args],
      ...(nodeFlags.length > 0 && { command: [process.execPath, ...nodeFlags, CLI] }),
      env,
      stderrLimit: 4000,
      onLine: (line) => {
        this.#lineCount++
        if (/"level":(?:5|6)0/.test(line)) this.errorLines.push(line)
        if (line.includes('"url":"')) found(String((JSON.parse(line) as { url: unknown }).url))
        this.#tail.push(line)
        if (this.#tail.length > 5) this.#tail.shift()
      },
    })
    this.url = new Promise((resolve, reject) => {
      found = resolve
      void this.exited.then(() =>
        reject(new Error(`serve exited before listening: ${this.diagnostics}`)),
      )
    })
  }

  get exited(): Promise<Exit> {
    return this.#process.exited
  }

  /** How many lines the server has logged so far. */
  get lineCount(): number {
    return this.#lineCount
  }

  /** The last lines of standard output and error, for assertion messages. */
  get diagnostics(): string {
    return `stdout tail: ${this.#tail.join('\n')}\nstderr: ${this.#process.stderr}`
  }

  /** The resident set size of the server process in bytes (VmRSS), or undefined once it has exited. */
  rss(): number | undefined {
    return this.#process.rss()
  }

  /** Sends SIGTERM and waits for the exit, at most `deadlineMs`; then SIGKILL. */
  async stop(deadlineMs: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    const { code, signal } = await this.#process.stop('SIGTERM', deadlineMs)
    return { code, signal }
  }

  /** Kills the process at once, if it still runs (for `after` hooks). */
  kill(): void {
    void this.#process.kill()
  }
}
