/**
 * The body of the writer thread (see `SqliteWriterThread`): its own connection to the file, with
 * the calling thread's pragmas, and a `SqliteStorage` on it that runs every write as the
 * storage does inline: group commit (the calls of one turn of this thread's event loop in one
 * `BEGIN IMMEDIATE` transaction, each in its savepoint, one fsync), its statements, its errors.
 * A reply leaves only once its write's promise settled, so after COMMIT returned.
 */
import Database from 'better-sqlite3'
import { parentPort, workerData } from 'node:worker_threads'
import { SqliteAuthStatements } from '../auth/sqlite-auth-statements.js'
import { SqliteStorage } from '../sqlite-storage.js'
import {
  type FromWriter,
  type SqliteWrites,
  type ToWriter,
  toWire,
  type WriteCall,
  type WriterWorkerData,
  type WriteReply,
} from './sqlite-writer-protocol.js'

const port = parentPort!
const { path, pragmas } = workerData as WriterWorkerData
const db = new Database(path, { fileMustExist: true })
for (const [name, value] of pragmas) db.pragma(`${name} = ${value}`)
const storage = new SqliteStorage(db)
const writes = writesOf(storage, new SqliteAuthStatements(db))

let replies: WriteReply[] = []
let groups: number[] = []
let replying = false
const inFlight = new Set<Promise<void>>()

storage.observeGroupCommits((size, committed) => {
  groups.push(size, committed ? 1 : 0)
})

port.on('message', (message: ToWriter) => {
  if (message.kind === 'calls') for (const call of message.calls) start(call)
  else if (message.kind === 'pragma') db.pragma(`${message.name} = ${message.value}`)
  else void close()
})
post({
  kind: 'ready',
  settings: {
    journal_mode: String(db.pragma('journal_mode', { simple: true })),
    synchronous: Number(db.pragma('synchronous', { simple: true })),
    busy_timeout: Number(db.pragma('busy_timeout', { simple: true })),
    foreign_keys: Number(db.pragma('foreign_keys', { simple: true })),
    wal_autocheckpoint: Number(db.pragma('wal_autocheckpoint', { simple: true })),
    cache_size: Number(db.pragma('cache_size', { simple: true })),
  },
})

function start([id, method, args]: WriteCall): void {
  const run = Object.hasOwn(writes, method)
    ? (writes[method] as (...values: readonly unknown[]) => Promise<unknown>)
    : () => Promise.reject(new TypeError(`no write named ${String(method)}`))
  const settled = run(...args).then(
    (value) => reply([id, 1, value]),
    (error: unknown) => reply([id, 0, toWire(error)]),
  )
  inFlight.add(settled)
  void settled.then(() => inFlight.delete(settled))
}

/**
 * Queues a reply, sent with every other reply settled in the same turn: a group's writes all
 * settle in the microtasks after its COMMIT, and the tick after them sends one message for all.
 */
function reply(settled: WriteReply): void {
  replies.push(settled)
  if (!replying) {
    replying = true
    process.nextTick(sendReplies)
  }
}

function sendReplies(): void {
  replying = false
  if (replies.length === 0 && groups.length === 0) return
  post({ kind: 'replies', replies, groups })
  replies = []
  groups = []
}

/** Commits what was sent before the close, answers it, closes the connection; the thread ends. */
async function close(): Promise<void> {
  await storage.close()
  await Promise.all(inFlight)
  sendReplies()
  db.close()
  port.close()
}

function post(message: FromWriter): void {
  port.postMessage(message)
}

/**
 * The writes of `storage`, and the statements of the shared stores of clients, sessions and
 * signing keys (`auth`, on the same connection), as the calling thread's stores ask for them.
 */
function writesOf(local: SqliteStorage, auth: SqliteAuthStatements): SqliteWrites {
  const { beneficiaries } = local
  return {
    createBeneficiary: async (record, entry, claim) => {
      const outcome = await beneficiaries.create(record, entry, claim)
      return outcome.kind === 'created' ? outcome.record.id : outcome
    },
    updateBeneficiary: (previous, next, entry) => beneficiaries.update(previous, next, entry),
    removeBeneficiary: (id, expected, entry) => beneficiaries.remove(id, expected, entry),
    runStatements: async (statements) => auth.runStatements(statements),
  }
}
