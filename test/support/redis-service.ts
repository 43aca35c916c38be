import { execFile } from 'node:child_process'
import { connect } from 'node:net'
import { setTimeout as delay } from 'node:timers/promises'
import { promisify } from 'node:util'

const run = promisify(execFile)

/** The Redis the tests use (../shared/SERVICES.md), overridable by env. */
export const REDIS_URL = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379'

/** Under CI a missing service fails the run; elsewhere its tests skip with one line. */
const UNDER_CI = process.env['CI'] === 'true'

/**
 * The command SERVICES.md starts the machine's Redis with: nothing on disk, so a restart comes
 * back empty.
 */
const START_ARGS = [
  '--daemonize',
  'yes',
  '--bind',
  '127.0.0.1',
  '-::1',
  '--port',
  '6379',
  '--save',
  '',
  '--appendonly',
  'no',
  '--dir',
  '/var/lib/redis',
  '--logfile',
  '/var/log/redis/ci.log',
]

/** `REDIS_URL` with database `n` selected (`redis://host:port/n`). */
export function redisDatabaseUrl(n: number): string {
  const url = new URL(REDIS_URL)
  url.pathname = `/${n}`
  return url.toString()
}

/**
 * Whether Redis answers PING at {@link REDIS_URL} within `timeoutMs`. Spoken in RESP over a bare
 * socket, so that the suites need no Redis client of their own to find out.
 */
export function redisAnswers(timeoutMs = 1000): Promise<boolean> {
  const url = new URL(REDIS_URL)
  return new Promise((resolve) => {
    const socket = connect({ host: url.hostname, port: Number(url.port || 6379) })
    let reply = ''
    const done = (answer: boolean): void => {
      socket.destroy()
      resolve(answer)
    }
    socket.setTimeout(timeoutMs, () => done(false))
    socket.on('error', () => done(false))
    socket.on('connect', () => socket.write('*1\r\n$4\r\nPING\r\n'))
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => {
      reply += chunk
      // A server asking for a password answers -NOAUTH: it is there, and the suites say so later.
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG') || reply.startsWith('-NOAUTH'))
    })
  })
}

/**
 * `false` when Redis answers at {@link REDIS_URL}; otherwise the one line a suite skips with.
 * Under `CI=true` an absent Redis throws instead: CI never skips these tests.
 */
export async function redisSkip(): Promise<string | false> {
  if (await redisAnswers(3000)) return false
  if (UNDER_CI) throw new Error(`Redis does not answer at ${REDIS_URL} and CI=true`)
  return `Redis does not answer at ${REDIS_URL}: start it (../shared/SERVICES.md) or set TEST_REDIS_URL`
}

/**
 * Why this machine cannot stop and start its Redis for a fault test, or `false` when it can:
 * the suite must be pointed at the machine's own Redis, and `redis-server` and `redis-cli`
 * must be on the PATH.
 */
export async function redisControlSkip(): Promise<string | false> {
  const url = new URL(REDIS_URL)
  if (!['127.0.0.1', 'localhost'].includes(url.hostname) || (url.port || '6379') !== '6379') {
    return `stopping Redis is only done to the machine's own (127.0.0.1:6379), not ${url.host}`
  }
  try {
    await run('redis-server', ['--version'])
    await run('redis-cli', ['--version'])
    return false
  } catch {
    return 'redis-server and redis-cli are not installed'
  }
}

/** Stops the machine's Redis at once, dropping what it holds (`redis-cli shutdown nosave`). */
export async function stopRedis(): Promise<void> {
  // The shutdown closes the connection that asked for it: redis-cli may report that as an error.
  await run('redis-cli', ['-h', '127.0.0.1', '-p', '6379', 'shutdown', 'nosave']).catch(
    () => undefined,
  )
  for (let i = 0; i < 100 && (await redisAnswers(200)); i++) await delay(50)
}

/**
 * Starts the machine's Redis with the command of SERVICES.md unless it answers already, and
 * resolves once it answers PING.
 * @throws Error when it still does not answer after `timeoutMs`.
 */
export async function startRedis(timeoutMs = 10_000): Promise<void> {
  if (await redisAnswers(500)) return
  await run('redis-server', START_ARGS).catch(() => undefined)
  const deadline = performance.now() + timeoutMs
  while (!(await redisAnswers(500))) {
    if (performance.now() > deadline) throw new Error('Redis did not come back after a start')
    await delay(50)
  }
}
