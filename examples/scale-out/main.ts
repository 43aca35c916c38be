/**
 * Three instances of the standalone server on one PostgreSQL and one Redis, behind HAProxy (a
 * real balancer, from Debian's `haproxy` package), and a demonstration through it: the shared
 * write limit, a logout honoured by every instance, and the per-address auth limit that a forged
 * X-Forwarded-For cannot escape.
 *
 *   apt-get install haproxy          # once
 *   npm ci                           # builds dist/
 *   node dist/examples/scale-out/main.js [--keep]
 *
 * Settings (environment): DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test; the
 * database must exist), REDIS_URL (default redis://127.0.0.1:6379) and REDIS_KEY_PREFIX (passed
 * on to the instances when set), LB_PORT (the balancer,
 * default 8080) and INSTANCE_PORTS (default 8081,8082,8083), all on 127.0.0.1. With `--keep` the
 * balancer and instances keep serving after the demonstration until Ctrl-C. Every process it
 * started is stopped when it ends, on an error or a signal too. Exit status 1 when an outcome
 * is not what the service promises.
 */
import { randomInt } from 'node:crypto'
import { BalancerClient } from './balancer-client.js'
import { demonstrate, type Credentials } from './demonstration.js'
import { haproxyInstalled, runCli, startHaproxy, startInstance, stopAll } from './processes.js'

const NAMES = ['a', 'b', 'c'] as const
const HOST = '127.0.0.1'

const databaseUrl = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test'
const redisUrl = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379'
const keyPrefix = process.env['REDIS_KEY_PREFIX']
const lbPort = port(process.env['LB_PORT'] ?? '8080', 'LB_PORT')
const instancePorts = (process.env['INSTANCE_PORTS'] ?? '8081,8082,8083')
  .split(',')
  .map((text) => port(text.trim(), 'INSTANCE_PORTS'))
if (instancePorts.length !== NAMES.length) {
  fail(`INSTANCE_PORTS names ${instancePorts.length} ports; the example runs ${NAMES.length}`)
}
const keep = process.argv.includes('--keep')

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.log(`${signal}: stopping the balancer and the instances`)
    void stopAll().then(() => process.exit(keep ? 0 : 130))
  })
}

if (!(await haproxyInstalled())) {
  fail('haproxy is not installed: apt-get install haproxy (Debian, Ubuntu), then run this again')
}

const base = { DATABASE_URL: databaseUrl }
let credentials: Credentials | undefined
try {
  // Each instance: the same database and Redis, plain HTTP on loopback, and the balancer
  // (which connects from 127.0.0.1) as the one proxy whose X-Forwarded-For it believes.
  const instanceEnv = {
    ...base,
    REDIS_URL: redisUrl,
    HOST,
    TRUST_PROXY: '127.0.0.1',
    LOG_LEVEL: 'info',
    ...(keyPrefix !== undefined && { REDIS_KEY_PREFIX: keyPrefix }),
  }
  // The first start creates the tables; the others then race only for the signing key.
  await startInstance(`instance ${NAMES[0]}`, instancePorts[0]!, instanceEnv)
  await Promise.all(
    NAMES.slice(1).map((name, n) =>
      startInstance(`instance ${name}`, instancePorts[n + 1]!, instanceEnv),
    ),
  )
  const lb = `http://${HOST}:${lbPort}`
  await startHaproxy(
    {
      LB_BIND: `${HOST}:${lbPort}`,
      INSTANCE_A: `${HOST}:${instancePorts[0]}`,
      INSTANCE_B: `${HOST}:${instancePorts[1]}`,
      INSTANCE_C: `${HOST}:${instancePorts[2]}`,
    },
    () => everyInstanceAnswers(lb),
  )
  console.log(
    `balancer ${lb} (HAProxy) -> instances ${NAMES.map((name, n) => `${name} :${instancePorts[n]}`).join(', ')}`,
  )

  credentials = JSON.parse(
    await runCli(['clients', 'create', '--name', 'scale-out example'], base),
  ) as Credentials
  // Two client addresses of this run's own: any 127.x.y.z reaches the balancer, and a fresh
  // one starts with a full auth bucket however often the example runs.
  const address = `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(2, 254)}`
  const neighbour = address.replace(/\.\d+$/, (last) => `.${Number(last.slice(1)) + 1}`)
  await demonstrate(
    new BalancerClient(lb, address),
    new BalancerClient(lb, neighbour),
    credentials,
    (line) => console.log(line),
  )
  console.log('scale-out: ok')
  if (keep) {
    console.log(`serving at ${lb} until Ctrl-C (curl ${lb}/readyz)`)
    await new Promise(() => undefined)
  }
} catch (error) {
  console.error(`scale-out: ${error instanceof Error ? error.message : String(error)}`)
  process.exitCode = 1
} finally {
  if (credentials !== undefined) {
    // The demonstration's client is of no further use: revoked, as an operator would.
    await runCli(['clients', 'revoke', credentials.client_id], base).catch(() => undefined)
  }
  await stopAll()
}

/**
 * Resolves once the balancer answers /readyz from each of the three instances (HAProxy's health
 * checks have found them all up); retries for a few seconds.
 */
async function everyInstanceAnswers(lb: string): Promise<void> {
  const client = new BalancerClient(lb, HOST)
  const seen = new Set<string>()
  for (let attempt = 0; seen.size < NAMES.length; attempt++) {
    if (attempt > 200) throw new Error('the balancer did not reach all three instances')
    try {
      const answer = await client.send('GET', '/readyz')
      if (answer.status === 200) seen.add(answer.servedBy)
    } catch {
      // Not listening yet.
    }
    if (seen.size < NAMES.length) await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

function port(text: string, name: string): number {
  const value = Number(text)
  if (!Number.isInteger(value) || value < 1 || value > 65_535)
    fail(`${name}: ${JSON.stringify(text)} is not a port`)
  return value
}

function fail(message: string): never {
  console.error(`scale-out: ${message}`)
  process.exit(1)
}
