import { ImportWorker } from '../bulk/import-worker.js'
import { nodeSha256 } from '../node-sha256.js'
import { createBeneficiaryService, systemClock } from '../../core/index.js'
import { AccessLogRetention } from '../../core/access-log-retention.js'
import { describeError } from '../describe-error.js'
import { EventRetention } from '../event-retention.js'
import { WebhookDeliverer, WebhookLoop } from '../webhooks/webhook-deliverer.js'
import { webhookMetrics } from '../webhooks/webhook-metrics.js'
import type pino from 'pino'
import { createLogger } from '../logger.js'
import type { TransportName } from '../transports/transport.js'
import { uwsUnavailable } from '../transports/uws-listen.js'
import type { HandlerLogger } from '../handler.js'
import { ServerMetrics } from '../metrics/server-metrics.js'
import { startServer, type RunningServer } from '../start-server.js'
import { CommandFailedError } from './cli-error.js'
import { COMMON_OPTIONS, parseCommand, type CliIo } from './cli-io.js'
import { DEFAULT_DATABASE_PATH, filesOpenToOthers } from './database.js'
import { describeTarget, openCliDatabase } from './storage-target.js'
import { SERVE_HELP } from './help.js'
import { describeRedisUrl, openSharedLimits, type SharedLimits } from './shared-limits.js'
import { readServeConfig } from './serve-config.js'
import { Settings } from './settings.js'
import { packageVersion } from './package-version.js'
import { redactedUrl } from './redacted-url.js'
import { startTracing, tracesUrl } from '../tracing/start-tracing.js'

const OPTIONS = {
  ...COMMON_OPTIONS,
  port: { type: 'string' },
  host: { type: 'string' },
  transport: { type: 'string' },
  cert: { type: 'string' },
  key: { type: 'string' },
  'trust-proxy': { type: 'string' },
  'base-path': { type: 'string' },
  'log-level': { type: 'string' },
  'rate-limit-standard': { type: 'string' },
  'rate-limit-write': { type: 'string' },
  'rate-limit-auth': { type: 'string' },
  'rate-limit-bulk': { type: 'string' },
  'access-token-ttl': { type: 'string' },
  'refresh-token-ttl': { type: 'string' },
  'jwt-secret': { type: 'string' },
  'jwt-secret-file': { type: 'string' },
  'shutdown-grace': { type: 'string' },
  'busy-timeout': { type: 'string' },
  'sqlite-writer': { type: 'string' },
  'pool-size': { type: 'string' },
  'body-timeout': { type: 'string' },
  'import-max-mib': { type: 'string' },
  'redis-url': { type: 'string' },
  'redis-key-prefix': { type: 'string' },
  'redis-timeout': { type: 'string' },
  metrics: { type: 'string' },
  docs: { type: 'string' },
  'cors-origin': { type: 'string' },
  'otlp-endpoint': { type: 'string' },
  'otel-service-name': { type: 'string' },
  'otel-sampler': { type: 'string' },
  'otel-sampler-arg': { type: 'string' },
  'access-log-days': { type: 'string' },
  'purge-batch': { type: 'string' },
  'purge-pause': { type: 'string' },
  'history-days': { type: 'string' },
  'event-retention': { type: 'string' },
  'match-rules': { type: 'string' },
} as const

/** `db.system.name` of the storage spans, in OpenTelemetry's names. */
const SPAN_SYSTEMS = { sqlite: 'sqlite', postgres: 'postgresql' } as const

const TRANSPORT_NAMES = { uws: 'hyper-express on uWebSockets.js', node: 'node:http' } as const

/**
 * `beneficiaries serve`: checks the configuration, opens the database, serves the API until
 * SIGTERM or SIGINT, then stops accepting, lets requests in flight finish (bounded), closes
 * the database and returns 0.
 * @throws UsageError for bad configuration; CommandFailedError (a port in use: EADDRINUSE, on
 *   either transport), TransportUnavailableError or MissingPeerDependencyError when the server
 *   cannot start.
 */
export async function serveCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseCommand(args, OPTIONS)
  if (values['help'] === true) {
    io.out(SERVE_HELP)
    return 0
  }
  const config = readServeConfig(new Settings(values, io.env))
  const logger = createLogger({ level: config.logLevel })
  // Before opening: SQLite gives the side files it creates the database file's mode (D32).
  const files = config.database.kind === 'sqlite' ? filesOpenToOthers(config.database.path) : []
  for (const { file, mode } of files) {
    logger.warn(
      { file, mode },
      `${file} can be opened by other users of this machine (mode ${mode}): it holds personal data${config.keys === undefined ? ' and the token signing key' : ''}. Restrict it with: chmod 600 ${shellQuote(file)}`,
    )
  }
  // Before the database opens: without its packages, tracing stops the start with one line.
  const tracing =
    config.tracing === undefined
      ? undefined
      : await startTracing({ ...config.tracing, serviceVersion: packageVersion() })
  // Checkpoints on a thread of their own: a write never waits for one (SqliteCheckpointer);
  // writes on another unless --sqlite-writer inline, so that no request waits for a commit's
  // fsync (SqliteWriterThread).
  const database = await openCliDatabase(config.database, {
    busyTimeoutMs: config.busyTimeoutMs,
    checkpoint: 'background',
    writer: config.sqliteWriter,
    poolSize: config.poolSize,
    listTimeoutMs: config.listTimeoutMs,
  }).catch(async (error: unknown) => {
    await tracing?.shutdown()
    throw error
  })
  // Wrapped once, here: without tracing the service calls the adapter itself.
  const storage =
    tracing === undefined
      ? database.storage
      : tracing.traceStorage(database.storage, SPAN_SYSTEMS[config.database.kind])
  const db = describeTarget(config.database)
  const metrics = config.metrics === 'off' ? undefined : new ServerMetrics()
  if (metrics !== undefined) database.watch(metrics)
  if (config.database.kind === 'postgres' && config.redis === undefined) {
    logger.warn(
      'Rate limits are kept per instance: with several instances on one database, each allows the full limit. Give --redis-url (REDIS_URL) to share them',
    )
  }
  let server: RunningServer
  let limits: SharedLimits | undefined
  // D37: expired access-log entries go in small batches, at the pace the operator set.
  const retention =
    storage.accessLog === undefined
      ? undefined
      : new AccessLogRetention(
          storage.accessLog,
          systemClock,
          config.retention,
          storage.historyRetention,
        )
  if (metrics !== undefined && storage.accessLog !== undefined && retention !== undefined) {
    const log = storage.accessLog
    metrics.watchAccessLog(
      () => log.stats,
      () => retention.purged,
      () => retention.purgedHistory,
    )
  }
  retention?.observeFailures((error) =>
    logger.error({ err: describeError(error) }, 'Access-log purge failed; retried after the pause'),
  )
  const eventRetention =
    database.storage.events === undefined
      ? undefined
      : new EventRetention(
          database.storage.events,
          systemClock,
          config.eventRetentionDays,
          (error) =>
            logger.warn(
              { err: error },
              'The purge of old change-feed events failed; it runs again in ten minutes',
            ),
        )
  const { webhooks, events } = database.storage
  const deliveries =
    webhooks === undefined || events === undefined
      ? undefined
      : new WebhookLoop(
          new WebhookDeliverer({
            webhooks,
            events,
            clock: systemClock,
            ...(metrics !== undefined && {
              onAttempt: webhookMetrics(metrics.registry, webhooks, events, systemClock),
            }),
            onDisabled: (endpoint) =>
              logger.warn(
                { endpoint },
                `Webhook endpoint ${endpoint} is disabled after a day of failed deliveries; remove it and add it again once it answers`,
              ),
          }),
          (error) => logger.warn({ err: error }, 'A round of webhook deliveries failed'),
        )
  try {
    if (config.redis !== undefined) {
      limits = await openSharedLimits(config.redis, logger, tracing)
      if (metrics !== undefined) metrics.watchRedis(limits.redis)
      // A Redis down at start is an outage like any other: logged, and the server starts, its
      // limits per instance; they are said to be shared only when they are.
      await limits.store.checkPrimary()
      if (!limits.store.degraded) {
        const redis = describeRedisUrl(config.redis.url)
        logger.info({ redis }, `Rate limits are shared through Redis at ${redis}`)
      }
    }
    const service = await createBeneficiaryService({
      storage,
      limits: { ...config.limits, ...(limits !== undefined && { store: limits.store }) },
      accessTokenTtlSeconds: config.accessTokenTtlSeconds,
      refreshTokenTtlSeconds: config.refreshTokenTtlSeconds,
      basePath: config.basePath,
      sha256: nodeSha256,
      ...(config.keys !== undefined && { keys: config.keys }),
      ...(config.matchRules !== undefined && { matchRules: config.matchRules }),
    })
    if ((await service.clients.list()).length === 0) {
      const where =
        config.database.kind === 'postgres'
          ? ' --database-url …'
          : config.database.path === DEFAULT_DATABASE_PATH
            ? ''
            : ` --db ${shellQuote(config.database.path)}`
      const command = `npx beneficiaries clients create${where} --name my-app --scopes "read write"`
      logger.warn({ command }, `No API client exists yet. Create one with: ${command}`)
    }
    server = await startServer({
      service,
      transport: chooseTransport(config.transport, logger),
      host: config.host,
      port: config.port,
      tls: config.tls,
      trustProxy: config.trustProxy,
      basePath: config.basePath,
      logger,
      requestTimeoutMs: config.bodyTimeoutMs,
      importMaxBytes: config.importMaxBytes,
      ...(limits !== undefined && { readiness: [limits.readiness] }),
      ...(metrics !== undefined && {
        metrics: { collector: metrics, token: config.metricsToken },
      }),
      docs: config.docs,
      corsOrigins: config.corsOrigins,
      tracing,
    })
    retention?.start()
    eventRetention?.start()
    deliveries?.start()
  } catch (error) {
    await limits?.close()
    await database.close()
    await tracing?.shutdown()
    await new Promise<void>((resolve) => logger.flush(() => resolve()))
    throw listenFailure(error, config.host, config.port) ?? error
  }
  // Import jobs (D39): this instance runs those it leases, one at a time.
  const imports = new ImportWorker({
    storage,
    onJob: ({ id, state, counts }) =>
      logger.info({ import_id: id, state, ...counts }, 'Import job'),
  })
  imports.start()
  logger.info(
    { url: server.url, transport: server.transport, db, metrics: config.metrics },
    `Listening on ${server.url}${config.basePath} (transport ${server.transport}: ${TRANSPORT_NAMES[server.transport]})`,
  )
  if (config.docs)
    logger.info({ docs: `${server.url}/docs` }, `API reference at ${server.url}/docs`)
  if (config.tracing !== undefined) {
    const traces = tracesUrl(redactedUrl(config.tracing.endpoint, '(unparsable URL)'))
    const service = config.tracing.serviceName
    logger.info({ traces, service }, `Tracing: spans of ${service} go to ${traces}`)
  }
  const signal = await new Promise<string>((resolve) => {
    io.signals.once('SIGTERM', () => resolve('SIGTERM'))
    io.signals.once('SIGINT', () => resolve('SIGINT'))
  })
  // A terminal's Ctrl-C under `npm start` arrives twice (from the terminal, and forwarded by
  // npm): a later signal must not end the process in the middle of its stop.
  for (const again of ['SIGTERM', 'SIGINT'] as const) ignoreWhileStopping(io, again, logger)
  logger.info({ signal }, 'Shutting down: no new connections, finishing requests in flight')
  await server.close(config.graceMs)
  await retention?.stop()
  await eventRetention?.stop()
  await deliveries?.stop()
  await imports.stop()
  await limits?.close()
  await database.close()
  // Last, so that the spans of the requests that finished during the stop are sent too.
  await tracing?.shutdown()
  logger.info('Stopped')
  await new Promise<void>((resolve) => logger.flush(() => resolve()))
  return 0
}

/** A failure to listen (both transports fail as node:http does) in the CLI's words. */
function listenFailure(error: unknown, host: string, port: number): CommandFailedError | undefined {
  if (!(error instanceof Error)) return undefined
  const { code, syscall } = error as NodeJS.ErrnoException
  if (syscall !== 'listen') return undefined
  const address = `${host.includes(':') ? `[${host}]` : host}:${port}`
  const reason =
    code === 'EADDRINUSE'
      ? 'the address is already in use (EADDRINUSE): another server runs there; choose another --port'
      : error.message
  return new CommandFailedError(`cannot listen on ${address}: ${reason}`, { cause: error })
}

/**
 * The transport `auto` stands for: uws where it can run, else node:http, with one line saying
 * why. A transport named outright is used as it is, and refuses to start where it cannot run.
 */
function chooseTransport(choice: TransportName | 'auto', logger: pino.Logger): TransportName {
  if (choice !== 'auto') return choice
  const unavailable = uwsUnavailable()
  if (unavailable === undefined) return 'uws'
  logger.warn(
    { transport: 'node', reason: unavailable.reason },
    `The uws transport cannot run here: ${unavailable.reason}. Serving over node:http instead; --transport node (TRANSPORT=node) chooses it without this line`,
  )
  return 'node'
}

function ignoreWhileStopping(io: CliIo, signal: 'SIGTERM' | 'SIGINT', logger: HandlerLogger): void {
  io.signals.once(signal, () => {
    logger.info({ signal }, 'Already shutting down: the requests in flight still finish')
    ignoreWhileStopping(io, signal, logger)
  })
}

function shellQuote(text: string): string {
  return /^[A-Za-z0-9_./:-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`
}
