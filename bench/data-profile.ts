import Database from 'better-sqlite3'
import type { BeneficiaryStatus } from '../core/beneficiary.js'
import { DAY_MS } from '../core/time.js'

/** How many rows hold one first name, last name and status together. */
export interface NameCount {
  readonly first: string
  readonly last: string
  readonly status: BeneficiaryStatus
  readonly count: number
}

/** How many rows were created on one UTC day with one status. */
export interface DayCount {
  /** `YYYY-MM-DD`. */
  readonly day: string
  readonly status: BeneficiaryStatus
  readonly count: number
}

/**
 * What the list shapes are drawn from: the names of the seeded rows with their real
 * frequencies, and when rows were created. Small (a few thousand entries for a million rows),
 * and enough to count the matches of any search and filter (`ProfileCounts`).
 */
export interface DataProfile {
  readonly rows: number
  readonly maxId: number
  readonly names: readonly NameCount[]
  /** In order of day. */
  readonly days: readonly DayCount[]
}

/** A row as far as the profile is concerned. */
export interface ProfiledRow {
  readonly first_name: string
  readonly last_name: string
  readonly status: BeneficiaryStatus
  /** Epoch ms. */
  readonly created_at: number
}

/** Reads the profile of a seeded SQLite database (two grouped scans, a second or two at 1,000,000 rows). */
export function readDataProfile(file: string): DataProfile {
  const db = new Database(file, { readonly: true, fileMustExist: true })
  try {
    const { rows, maxId } = db
      .prepare('SELECT COUNT(*) AS rows, MAX(id) AS maxId FROM beneficiaries')
      .get() as { rows: number; maxId: number }
    const names = db
      .prepare(
        `SELECT first_name AS first, last_name AS last, status, COUNT(*) AS count
         FROM beneficiaries GROUP BY first_name, last_name, status`,
      )
      .all() as NameCount[]
    const days = db
      .prepare(
        `SELECT created_at / ${DAY_MS} AS dayNumber, status, COUNT(*) AS count
         FROM beneficiaries GROUP BY dayNumber, status ORDER BY dayNumber, status`,
      )
      .all() as { dayNumber: number; status: BeneficiaryStatus; count: number }[]
    return {
      rows,
      maxId,
      names,
      days: days.map(({ dayNumber, status, count }) => ({ day: dayOf(dayNumber), status, count })),
    }
  } finally {
    db.close()
  }
}

/** The profile of rows held in memory (the tests' made-up data); ids run from 1. */
export function profileOf(rows: Iterable<ProfiledRow>): DataProfile {
  const names = new Map<
    string,
    { first: string; last: string; status: BeneficiaryStatus; count: number }
  >()
  const days = new Map<string, { dayNumber: number; status: BeneficiaryStatus; count: number }>()
  let count = 0
  for (const row of rows) {
    count++
    const nameKey = `${row.first_name}\u0000${row.last_name}\u0000${row.status}`
    const name = names.get(nameKey)
    if (name === undefined) {
      names.set(nameKey, {
        first: row.first_name,
        last: row.last_name,
        status: row.status,
        count: 1,
      })
    } else name.count++
    const dayNumber = Math.floor(row.created_at / DAY_MS)
    const dayKey = `${dayNumber}\u0000${row.status}`
    const day = days.get(dayKey)
    if (day === undefined) days.set(dayKey, { dayNumber, status: row.status, count: 1 })
    else day.count++
  }
  return {
    rows: count,
    maxId: count,
    names: [...names.values()],
    days: [...days.values()]
      .sort((a, b) => a.dayNumber - b.dayNumber || a.status.localeCompare(b.status))
      .map(({ dayNumber, status, count: n }) => ({ day: dayOf(dayNumber), status, count: n })),
  }
}

function dayOf(dayNumber: number): string {
  return new Date(dayNumber * DAY_MS).toISOString().slice(0, 10)
}
