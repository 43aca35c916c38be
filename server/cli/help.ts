import { KEY_RELOAD_SECONDS } from '../../core/index.js'
import { SEED_MEMORY_MIB } from './seed-progress.js'

const SQLITE = SEED_MEMORY_MIB.sqlite
const POSTGRES = SEED_MEMORY_MIB.postgres

/** The help texts of the command-line tool, one per command. */

const DB = `  --db PATH           SQLite database file, created with its folder when missing
                      (env DATABASE_PATH, default ./data/beneficiaries.sqlite)
  --database-url URL  A PostgreSQL database instead, postgres://user:password@host/db
                      (env DATABASE_URL; prefer the environment for a password)
  -h, --help          Show this help`

/** The same options, for the commands that need the database to exist already. */
const EXISTING_DB = `  --db PATH           SQLite database file, which must exist (env DATABASE_PATH,
                      default ./data/beneficiaries.sqlite)
  --database-url URL  A PostgreSQL database instead, postgres://user:password@host/db
                      (env DATABASE_URL; prefer the environment for a password)
  -h, --help          Show this help`

export const MAIN_HELP = `Usage: beneficiaries <command> [options]

The beneficiary service: the /v3 HTTP API and its operator tools.

Commands:
  serve                   Run the HTTP server (npm start)
  clients create          Provision an API client and print its secret, once
  clients list            List API clients (never their secrets)
  clients revoke ID       Revoke a client: it cannot log in, its tokens stop working
  keys rotate             Add a new token signing key; the old ones verify until unneeded
  keys list               Where each signing key stands (never its secret)
  migrate                 Bring the database schema up to date
  backup --to FILE        Copy the database to FILE while it stays in use
  seed --count N          Add N made-up beneficiaries, for trying the API and benchmarks
  audit                   Write the access log as NDJSON: who read which records, when, why
  audit export ID         Everything held about one beneficiary, as one JSON document
  webhooks add|list|remove|test  Endpoints that receive every change, signed (docs/events.md)
  import --file FILE      Create beneficiaries from a CSV or NDJSON file, every row reported
  export                  Write every beneficiary of one snapshot as NDJSON or CSV

Options:
  -h, --help              Show this help
  -v, --version           Print the version of the installed package

Run "beneficiaries <command> --help" for the options of a command.
Exit status: 0 done, 1 failed, 2 usage or configuration error.`

export const SERVE_HELP = `Usage: beneficiaries serve [options]

Serves the /v3 API over HTTP, or HTTPS when given a certificate and key. Plain HTTP is meant
for loopback or behind a TLS-terminating proxy. Stops gracefully on SIGTERM or SIGINT (a
second one while stopping is logged, and the stop goes on); under npm start as well.

Options (each also from the environment variable in parentheses; the flag wins):
${DB}
  --port N            Port to listen on, 0 for any free port (PORT, default 8080)
  --host HOST         Address to bind (HOST, default 127.0.0.1)
  --transport NAME    uws (hyper-express on uWebSockets.js, fast), node (node:http, no
                      native code) or auto: uws where its build loads on this Node.js
                      (16 to 20), else node, said in one line (TRANSPORT, default auto)
  --cert FILE         TLS certificate, PEM (TLS_CERT); needs --key
  --key FILE          TLS private key, PEM (TLS_KEY); needs --cert
  --trust-proxy LIST  Trusted proxies whose X-Forwarded-For is read: addresses, CIDR ranges,
                      loopback, private (TRUST_PROXY, comma-separated, default none)
  --base-path PATH    Prefix of the API paths (BASE_PATH, default /v3)
  --log-level LEVEL   trace, debug, info, warn, error, fatal or silent (LOG_LEVEL, default info)
  --rate-limit-standard N   Requests per minute per client (RATE_LIMIT_STANDARD, default 100)
  --rate-limit-write N      Creates, updates, deletes per minute per client (RATE_LIMIT_WRITE, default 10)
  --rate-limit-auth N       Logins and refreshes per minute per IP (RATE_LIMIT_AUTH, default 5)
  --rate-limit-bulk N       Imports and exports per minute per client (RATE_LIMIT_BULK,
                            default 2)
  --access-token-ttl S      Access-token lifetime in seconds (ACCESS_TOKEN_TTL_SECONDS, default 3600)
  --refresh-token-ttl S     Refresh-token lifetime in seconds (REFRESH_TOKEN_TTL_SECONDS, default 30 days)
  --jwt-secret SECRET       Token signing secret, 32+ bytes in base64 (JWT_SECRET); prefer the
                            environment or a file to a flag, which other users can see
  --jwt-secret-file FILE    File of secrets, one per line: the first signs, all verify
                            (JWT_SECRET_FILE). Without either, a key is generated once and kept
                            in the database
  --shutdown-grace S        Seconds to let requests in flight finish on shutdown
                            (SHUTDOWN_GRACE_SECONDS, default 10)
  --busy-timeout MS         How long a write waits for another process's lock on the
                            database before it is answered 503 (SQLITE_BUSY_TIMEOUT_MS,
                            default 5000)
  --sqlite-writer W         Where SQLite writes and their commits run: thread, on a thread
                            of their own, so that no read waits for a commit's fsync, or
                            inline, on the event loop (SQLITE_WRITER, default thread)
  --pool-size N             PostgreSQL connections of this instance (DATABASE_POOL_SIZE,
                            default 10); the instances' pools together must fit the
                            server's max_connections
  --list-timeout MS         How long PostgreSQL may run a statement of a list before it
                            cancels it and the list is answered 503, its connection free for
                            the next request (LIST_TIMEOUT_MS, 1 to 10000, default 2000)
  --body-timeout S          Seconds a request body may take to arrive after its headers
                            before it is answered 408 (BODY_TIMEOUT_SECONDS, 1 to 7, default 5)
  --import-max-mib N        The largest file POST /v3/imports takes, in MiB; it must arrive
                            within --body-timeout (IMPORT_MAX_MIB, 1 to 1024, default 64)
  --redis-url URL           Keep the rate limits on Redis, shared by every instance:
                            redis://[:password@]host[:port][/db], or rediss:// for TLS
                            (REDIS_URL; prefer the environment for a password). Without it,
                            limits are kept in this process. While Redis does not answer,
                            limits hold per instance and /readyz says "degraded"
  --redis-key-prefix TEXT   Prefix of the bucket keys (REDIS_KEY_PREFIX,
                            default beneficiary-service:rate-limit:)
  --redis-timeout MS        How long a Redis command may take before the request is limited
                            in process instead (REDIS_TIMEOUT_MS, 1 to 10000, default 250)
  --metrics MODE            Prometheus metrics at GET /metrics, outside the base path and not
                            rate limited: off (a 404), public, or token: a scrape needs
                            "Authorization: Bearer $METRICS_TOKEN" (METRICS, default token
                            when METRICS_TOKEN is set, else public). METRICS_TOKEN is read from
                            the environment only: 16+ characters, e.g. openssl rand -hex 32
  --docs on|off             The API reference page at /docs, drawn from the OpenAPI document,
                            with "try it" against this server (DOCS, default on when the
                            swagger-ui-dist package is installed; on asks for it). Turn it off
                            where the API should not be browsable; /v3/openapi.json is served
                            either way
  --cors-origin LIST        Origins whose browser scripts may call the API, comma-separated:
                            https://app.example.org (scheme, host and port), or * for any
                            (CORS_ORIGIN, default none: browsers refuse cross-origin calls)
  --otlp-endpoint URL       Trace requests with OpenTelemetry and send the spans over
                            OTLP/HTTP to URL/v1/traces, e.g. http://127.0.0.1:4318
                            (OTEL_EXPORTER_OTLP_ENDPOINT, default none: tracing off). Needs
                            the OpenTelemetry packages installed (docs/tracing.md)
  --otel-service-name NAME  service.name of the spans (OTEL_SERVICE_NAME,
                            default beneficiary-service)
  --otel-sampler NAME       Which traces are recorded: parentbased_always_on,
                            parentbased_always_off, parentbased_traceidratio, always_on,
                            always_off or traceidratio (OTEL_TRACES_SAMPLER, default
                            parentbased_always_on)
  --otel-sampler-arg R      The share of traces the traceidratio samplers keep, 0 to 1
                            (OTEL_TRACES_SAMPLER_ARG, default 1)
  --access-log-days D       Days an access-log entry is kept before the service purges
                            it (ACCESS_LOG_RETENTION_DAYS, default 400; docs/access-log.md)
  --purge-batch N           Entries deleted per purge transaction (PURGE_BATCH_SIZE,
                            default 500)
  --purge-pause MS          Pause between two purge batches: the purge's pace
                            (PURGE_PAUSE_MS, default 1000)
  --history-days D          Days a history entry is kept (HISTORY_RETENTION_DAYS,
                            default none: kept while its record exists)
  --event-retention DAYS    How long the change feed (GET /v3/events) keeps its events; older
                            ones are purged in small batches and a cursor before them answers
                            410 cursor_expired (EVENT_RETENTION_DAYS, 1 to 3650, default 30)
  --match-rules FILE        The rules of duplicate matching, a JSON file of the shape of the
                            default-match-rules.json shipped with the package; checked at start,
                            a mistake names its line (MATCH_RULES_FILE, default the shipped
                            rules; docs/matching.md)`

export const CLIENTS_HELP = `Usage: beneficiaries clients <create|list|revoke> [options]

  clients create --name NAME [--scopes "read write"]
      Provisions a client and prints {"client_id","client_secret","scopes"} as JSON. The
      secret is shown this once only; only its hash is kept.
  clients list
      Prints every client as JSON, oldest first, without secrets.
  clients revoke ID
      Revokes the client: it cannot log in and its live tokens stop working.

Only create makes a database when there is none; list and revoke need an existing one, with
its schema up to date, and change nothing else. Run "beneficiaries clients <command> --help"
for the options of each.`

export const CLIENTS_CREATE_HELP = `Usage: beneficiaries clients create --name NAME [options]

Provisions an API client and prints {"client_id","client_secret","scopes"} as JSON. The secret
is shown this once only; only its hash is kept. Creates the database when there is none.

Options:
  --name NAME         Who the client is
  --scopes LIST       Space- or comma-separated scopes among read, write and audit
                      (default "read write"). audit reads the access log and the
                      subject-access export; only a client created with it has it
${DB}`

export const CLIENTS_LIST_HELP = `Usage: beneficiaries clients list [options]

Prints every client as JSON, oldest first, never a secret. The database must exist, with its
schema up to date; nothing in it changes.

Options:
${EXISTING_DB}`

export const CLIENTS_REVOKE_HELP = `Usage: beneficiaries clients revoke ID [options]

Revokes the client ID: it cannot log in again, and its live tokens stop working on every
instance. Prints {"client_id","revoked":true}. The database must exist, with its schema up to
date.

Options:
${EXISTING_DB}`

const KEYS_ABOUT = `The access tokens' signing keys kept in the database: those the server uses unless it is
given JWT_SECRET or JWT_SECRET_FILE (with those, rotate by editing the file's lines).`

const TTL = `  --access-token-ttl S  Access-token lifetime the servers use, in seconds
                        (ACCESS_TOKEN_TTL_SECONDS, default 3600): how long a replaced key
                        must verify`

export const KEYS_HELP = `Usage: beneficiaries keys <rotate|list> [options]

${KEYS_ABOUT}

  keys rotate   Adds a new signing key and prints {"kid","created_at"}
  keys list     Prints every key: kid, created_at, state, retires_at; never a secret

Run "beneficiaries keys <command> --help" for the options of each.`

export const KEYS_ROTATE_HELP = `Usage: beneficiaries keys rotate [options]

${KEYS_ABOUT}

Adds a new key and prints {"kid","created_at"}. Every running server reads the keys again
within ${KEY_RELOAD_SECONDS} seconds (at once on a restart, or on a token with the new kid) and signs new
tokens with it. The keys before it keep verifying the tokens they signed until those expire,
then retire: they verify nothing more (see keys list). The database must exist.

Options:
${EXISTING_DB}`

export const KEYS_LIST_HELP = `Usage: beneficiaries keys list [options]

${KEYS_ABOUT}

Prints every key, oldest first, as JSON: kid, created_at, state (signing: the newest, which
signs; verifying: replaced, still verifying tokens it signed; retired: no live token can carry
it) and retires_at for a replaced key. Never a secret. The database must exist.

Options:
${TTL}
${EXISTING_DB}`

export const MIGRATE_HELP = `Usage: beneficiaries migrate [options]

Applies the pending schema migrations in one transaction (serve also does this at start),
says on standard error what it applied or that the database is already up to date, and
prints {"database","applied","migrations"} as JSON: the migrations applied now, and all
those the schema has.

Options:
${DB}`

export const BACKUP_HELP = `Usage: beneficiaries backup --to FILE [options]

Copies the database to FILE with SQLite's online backup: the server may keep running, and the
copy is one consistent snapshot, readable by its owner only. The database must exist; it is
not changed. An existing FILE is left alone unless --force is given. A PostgreSQL database is
backed up with PostgreSQL's own tool, pg_dump.

Options:
  --to FILE           Where to write the copy
  --force             Replace FILE if it exists
${EXISTING_DB}`

export const SEED_HELP = `Usage: beneficiaries seed --count N [options]

Adds N realistic, made-up beneficiaries (names from many countries, valid e-mails, phones,
addresses and codici fiscali, mixed statuses, three years of creation dates), for trying the
API and for benchmarks. On SQLite in one transaction: all of them or none. On PostgreSQL in
batches that commit as they go: stopped or failed, it keeps the batches it committed, and the
same command (the same --seed and --count) resumes it where it stopped, with the same rows and
no duplicates; run again once finished, it adds nothing. A million take about a minute and a
half on either. Standard error shows how far it is: a bar on a terminal,
otherwise a line every five seconds.

Memory: the records are made and written one at a time, so it barely grows with N. On SQLite,
up to about ${SQLITE.upToAMillion} MiB for a million (its 64 MiB page cache included), ${SQLITE.perFurtherMillion} MiB more for each
further million; on PostgreSQL, ${POSTGRES.upToAMillion} MiB and ${POSTGRES.perFurtherMillion} MiB more per million. It says at the
start what it expects for N.

Options:
  --count N           How many to add (1 to 10,000,000)
  --seed N            Seed of the generator: the same seed gives the same rows (default 1)
  --batch-size N      PostgreSQL: records per transaction, 1 to 100,000 (default 10,000)
${DB}`

export const AUDIT_HELP = `Usage: beneficiaries audit [options]

Writes the access log (who read which records, when, by which operation and why) to standard
output as NDJSON, one entry a line, oldest first: {"id","at","client_id","request_id",
"operation","beneficiary_ids","purpose"}. On a terminal, standard error counts the entries
written. The database must exist; nothing in it changes.

Options:
  --beneficiary ID    Only the entries whose answers carried this record
  --client ID         Only the entries of this API client
  --from WHEN         From this day (2026-11-01) or instant (ISO 8601) on
  --to WHEN           Up to this day, included, or before this instant
${EXISTING_DB}`

export const AUDIT_EXPORT_HELP = `Usage: beneficiaries audit export ID [options]

Prints everything held about the beneficiary ID as one JSON document, for a subject-access
request: {"beneficiary","history","access_log","exported_at"}, as the API's export answers.
The export is recorded in the access log, with the client id operator:cli.

Options:
  --purpose TEXT      Why, recorded with the export (1 to 200 visible ASCII characters)
${EXISTING_DB}`
