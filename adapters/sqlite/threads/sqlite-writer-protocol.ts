import Database from 'better-sqlite3'
import type { BeneficiaryRecord, HistoryEntry } from '../../../core/beneficiary.js'
import type {
  CreateOutcome,
  IdempotencyClaim,
  NewBeneficiary,
  WriteOutcome,
} from '../../../core/ports/beneficiary-store.js'
import { translateStorageFailure } from '../sqlite-query.js'

/** A statement's text and its parameters, bound. */
export type SqlStatement = readonly [sql: string, parameters: readonly unknown[]]

/** A create's outcome on the way back: the new record's id (the caller has the rest), or the claim's. */
export type CreatedOrClaimed = number | Exclude<CreateOutcome, { kind: 'created' }>

/**
 * Every write of the storage, as the stores hand it to the writer thread (`SqliteWriterThread`)
 * and the thread runs it on its own connection. The arguments cross the thread boundary by
 * structured clone, as they are: measured on a record, its update and its history entry, V8's
 * serializer took 1.6 µs of the event loop per update in batches of 20, less than turning them
 * into arrays (5.3 µs) or JSON (6.1 µs) first. A create sends back only the new id.
 */
export interface SqliteWrites {
  createBeneficiary(
    record: NewBeneficiary,
    entry: HistoryEntry,
    claim: IdempotencyClaim | undefined,
  ): Promise<CreatedOrClaimed>
  updateBeneficiary(
    previous: BeneficiaryRecord,
    next: BeneficiaryRecord,
    entry: HistoryEntry,
  ): Promise<WriteOutcome>
  removeBeneficiary(
    id: number,
    expectedVersion: number | undefined,
    entry: HistoryEntry,
  ): Promise<WriteOutcome>
  /** The writes of clients, sessions and signing keys (`SqliteAuthStatements.transaction`). */
  runStatements(statements: readonly SqlStatement[]): Promise<number[]>
}

/** The name of a write. */
export type WriteMethod = keyof SqliteWrites

/** One write sent to the thread: its number (to match the reply), its name and its arguments. */
export type WriteCall = readonly [id: number, method: WriteMethod, args: readonly unknown[]]

/** An error on its way back: a driver error by its code, anything else by its name. */
export type WireError =
  | { readonly sqlite: true; readonly code: string; readonly message: string }
  | { readonly sqlite: false; readonly name: string; readonly message: string }

/** The reply to a call: its number, then 1 and the value, or 0 and the error. */
export type WriteReply =
  readonly [id: number, ok: 1, value: unknown] | readonly [id: number, ok: 0, error: WireError]

/** What the thread is started with. */
export interface WriterWorkerData {
  /** The database file (the main connection's `name`). */
  readonly path: string
  /** `PRAGMA name = value` for each entry, in order, on the thread's connection. */
  readonly pragmas: readonly (readonly [name: string, value: number])[]
}

/** The settings of the writer's connection that durability and waiting depend on. */
export interface WriterSettings {
  readonly journal_mode: string
  /** 2 is `FULL`, 1 `NORMAL`. */
  readonly synchronous: number
  readonly busy_timeout: number
  readonly foreign_keys: number
  readonly wal_autocheckpoint: number
  /** Negative: KiB. */
  readonly cache_size: number
}

/** From the calling thread to the writer. */
export type ToWriter =
  | { readonly kind: 'calls'; readonly calls: readonly WriteCall[] }
  | { readonly kind: 'pragma'; readonly name: string; readonly value: number }
  | { readonly kind: 'close' }

/** From the writer to the calling thread. */
export type FromWriter =
  | {
      readonly kind: 'ready'
      /** The settings of the thread's connection as it reads them back (`WriterSettings`). */
      readonly settings: WriterSettings
    }
  | {
      readonly kind: 'replies'
      readonly replies: readonly WriteReply[]
      /** Size and outcome (1 committed, 0 failed) of each group committed since the last. */
      readonly groups: readonly number[]
    }

/** Turns what a write threw into what crosses back: the driver's error is found under `cause`. */
export function toWire(error: unknown): WireError {
  for (let e = error; e instanceof Error; e = e.cause) {
    if (e instanceof Database.SqliteError) return { sqlite: true, code: e.code, message: e.message }
  }
  if (error instanceof Error) return { sqlite: false, name: error.name, message: error.message }
  return { sqlite: false, name: 'Error', message: String(error) }
}

/**
 * The error a write that ran on this thread would have thrown: a driver error rebuilt (with its
 * code) and translated as on this thread (`StorageUnavailableError` for a storage fault); the
 * stores translate the rest as they do their own (a taken fiscal code, `ConflictError`).
 */
export function fromWire(wire: WireError): unknown {
  if (wire.sqlite) return translateStorageFailure(new Database.SqliteError(wire.message, wire.code))
  const error =
    wire.name === 'TypeError'
      ? new TypeError(wire.message)
      : wire.name === 'RangeError'
        ? new RangeError(wire.message)
        : new Error(wire.message)
  if (error.name !== wire.name) error.name = wire.name
  return error
}
