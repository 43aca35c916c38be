import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process'

/** How `ProcessGroup.spawn` starts a process. */
export interface SpawnSpec {
  /** Pins the process to this CPU core with `taskset -c` (which execs, so the pid is the program's). */
  readonly core?: number
  readonly env?: NodeJS.ProcessEnv
  readonly cwd?: string
  /** Default: standard input ignored, standard output ignored, standard error piped. */
  readonly stdio?: StdioOptions
}

/**
 * Every process the benchmark starts, so that each one is stopped: one at a time when its part
 * is over, and all of them on an error, on SIGINT/SIGTERM, and when the runner exits.
 */
export class ProcessGroup {
  readonly #children = new Set<ChildProcess>()

  /** Starts `command` with `args`, pinned to `spec.core` when given. */
  spawn(command: string, args: readonly string[], spec: SpawnSpec = {}): ChildProcess {
    const [file, argv] =
      spec.core === undefined
        ? [command, args]
        : ['taskset', ['-c', String(spec.core), command, ...args]]
    const child = spawn(file, argv, {
      stdio: spec.stdio ?? ['ignore', 'ignore', 'pipe'],
      env: spec.env ?? process.env,
      ...(spec.cwd !== undefined && { cwd: spec.cwd }),
    })
    this.#children.add(child)
    child.once('exit', () => this.#children.delete(child))
    child.once('error', () => this.#children.delete(child))
    return child
  }

  /** Stops one process: SIGTERM, then SIGKILL after `graceMs`. Resolves once it has exited. */
  async stop(child: ChildProcess, graceMs = 5_000): Promise<void> {
    if (hasExited(child)) return
    const exited = exitOf(child)
    child.kill('SIGTERM')
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs)
    try {
      await exited
    } finally {
      clearTimeout(timer)
    }
  }

  /** Stops every process still running. */
  async stopAll(): Promise<void> {
    await Promise.all([...this.#children].map((child) => this.stop(child)))
  }

  /** Kills every process still running, synchronously (for `process.on('exit')`). */
  killAllNow(): void {
    for (const child of this.#children) child.kill('SIGKILL')
  }
}

/** Whether the process has already exited. */
export function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null
}

/** Resolves with the exit code (or signal) once the process has exited. */
export function exitOf(child: ChildProcess): Promise<number | NodeJS.Signals> {
  if (hasExited(child)) return Promise.resolve(child.exitCode ?? child.signalCode!)
  return new Promise((resolve) => {
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 0))
    child.once('error', () => resolve(-1))
  })
}
