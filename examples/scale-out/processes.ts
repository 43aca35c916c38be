/**
 * The processes of the scale-out example: `beneficiaries serve` instances and HAProxy, started as
 * children of the example and stopped by it whatever happens (an error, Ctrl-C, SIGTERM).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/** The compiled CLI, as `npx beneficiaries` runs it. */
const CLI = fileURLToPath(new URL('../../server/cli.js', import.meta.url))

/** A child process and how to wait for its end. */
export interface Child {
  readonly name: string
  readonly process: ChildProcess
  readonly exited: Promise<number | null>
  /** The last lines it wrote to standard error, for a message when it fails. */
  readonly stderr: () => string
}

const children: Child[] = []
let stopping: Promise<void> | undefined

/** Starts `command` as a child the example owns; its standard output goes to `onLine`. */
function start(
  name: string,
  command: string,
  args: readonly string[],
  env: Readonly<Record<string, string>>,
  onLine: (line: string) => void = () => undefined,
): Child {
  const child = spawn(command, args, {
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let err = ''
  child.stderr!.setEncoding('utf8')
  child.stderr!.on('data', (chunk: string) => void (err = (err + chunk).slice(-4000)))
  let partial = ''
  child.stdout!.setEncoding('utf8')
  child.stdout!.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n')
    partial = lines.pop() ?? ''
    for (const line of lines) onLine(line)
  })
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
  const owned: Child = { name, process: child, exited, stderr: () => err }
  children.push(owned)
  return owned
}

/**
 * Resolves once `child` has done what `ready` waits for; rejects, naming the child and quoting
 * its standard error, when it exits first or takes longer than `timeoutMs`.
 */
async function startedOrFailed(child: Child, ready: Promise<void>, timeoutMs = 20_000) {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${child.name} did not start within ${timeoutMs} ms`)),
      timeoutMs,
    )
  })
  const died = child.exited.then((code) => {
    throw new Error(
      `${child.name} exited (status ${code}) while starting:\n${child.stderr().trim()}`,
    )
  })
  try {
    await Promise.race([ready, late, died])
  } finally {
    clearTimeout(timer)
    died.catch(() => undefined)
  }
}

/** Runs the CLI to the end (`clients create`, say) and resolves with what it printed. */
export async function runCli(
  args: readonly string[],
  env: Readonly<Record<string, string>>,
): Promise<string> {
  let out = ''
  const child = start(`beneficiaries ${args[0]}`, process.execPath, [CLI, ...args], env, (line) => {
    out += `${line}\n`
  })
  const code = await child.exited
  children.splice(children.indexOf(child), 1)
  if (code !== 0)
    throw new Error(`beneficiaries ${args.join(' ')} failed (${code}): ${child.stderr().trim()}`)
  return out
}

/**
 * Starts one `beneficiaries serve` on `port` and resolves once it listens. Its request log
 * lines are read and dropped: the example prints what the balancer answers instead.
 */
export async function startInstance(
  name: string,
  port: number,
  env: Readonly<Record<string, string>>,
): Promise<Child> {
  let listening: () => void = () => undefined
  const ready = new Promise<void>((resolve) => (listening = resolve))
  const child = start(
    name,
    process.execPath,
    [CLI, 'serve', '--port', String(port)],
    env,
    (line) => {
      if (line.includes('"url"')) listening()
    },
  )
  await startedOrFailed(child, ready)
  return child
}

/** The HAProxy configuration next to this example, in the source tree or beside the script. */
export function haproxyConfig(): string {
  for (const relative of ['./haproxy.cfg', '../../../examples/scale-out/haproxy.cfg']) {
    const path = fileURLToPath(new URL(relative, import.meta.url))
    if (existsSync(path)) return path
  }
  throw new Error('examples/scale-out/haproxy.cfg is missing')
}

/**
 * Starts HAProxy in the foreground (`-db`) on `haproxy.cfg`, whose addresses come from `env`,
 * and resolves once `ready` (a probe of the balancer) resolves.
 */
export async function startHaproxy(
  env: Readonly<Record<string, string>>,
  ready: () => Promise<void>,
): Promise<Child> {
  const child = start('haproxy', 'haproxy', ['-db', '-f', haproxyConfig()], env)
  await startedOrFailed(child, ready())
  return child
}

/** Whether the `haproxy` command is installed. */
export function haproxyInstalled(): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = spawn('haproxy', ['-v'], { stdio: 'ignore' })
    probe.on('error', () => resolve(false))
    probe.on('close', (code) => resolve(code === 0))
  })
}

/**
 * Stops every child still running: SIGTERM (the instances finish the requests in flight), then
 * SIGKILL for one still there after `graceMs`. Safe to call more than once.
 */
export function stopAll(graceMs = 5000): Promise<void> {
  stopping ??= Promise.all(
    children.map(async (child) => {
      if (child.process.exitCode !== null || child.process.signalCode !== null) return
      child.process.kill('SIGTERM')
      const timer = setTimeout(() => child.process.kill('SIGKILL'), graceMs)
      await child.exited
      clearTimeout(timer)
    }),
  ).then(() => undefined)
  return stopping
}

// Should the example end without reaching its own clean-up, no child outlives it.
process.on('exit', () => {
  for (const child of children) if (child.process.exitCode === null) child.process.kill('SIGKILL')
})
