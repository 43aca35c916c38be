import type { CliIo } from './cli-io.js'

/**
 * The memory (peak RSS, MiB) `seed` takes for up to a million records, and how much more each
 * further million adds, as measured (SQLite: 352–359 MiB for a million, 406 for three million;
 * PostgreSQL, this process: 212 MiB for 200,000, 231 MiB for a million), rounded up: the records
 * are made and written one at a time (on PostgreSQL a batch at a time) and the database keeps
 * only its own cache, so what grows is only the generator's set of fiscal codes, the tallies of
 * the counters and V8's heap.
 */
export const SEED_MEMORY_MIB = {
  sqlite: { upToAMillion: 360, perFurtherMillion: 25 },
  postgres: { upToAMillion: 240, perFurtherMillion: 30 },
} as const

/** What `seed` of `count` records should take at most on `kind`, in MiB, rounded up to tens. */
export function seedMemoryMib(kind: keyof typeof SEED_MEMORY_MIB, count: number): number {
  const { upToAMillion, perFurtherMillion } = SEED_MEMORY_MIB[kind]
  const estimate = upToAMillion + (Math.max(0, count - 1_000_000) / 1_000_000) * perFurtherMillion
  return Math.ceil(estimate / 10) * 10
}

/** How often a line is written when standard error is not a terminal. */
const LINE_EVERY_MS = 5000
/** How often the bar is redrawn on a terminal. */
const REDRAW_EVERY_MS = 100
/** The clock is read once per this many records. */
const CHECK_EVERY = 1024

/**
 * Tells on standard error how far `seed` is: on a terminal, a bar redrawn in place; in a file,
 * a pipe or a log collector, a line every five seconds. It follows the records as they are
 * taken (`follow`, SQLite's one transaction), or as batches commit (`begin`, `advance`, `end`:
 * PostgreSQL's batches, which may resume a seed that stopped).
 */
export class SeedProgress {
  readonly #total: number
  readonly #io: CliIo
  readonly #now: () => number
  #started = 0
  #reported = 0
  #from = 0
  #barOpen = false

  /**
   * @param total How many records will be taken.
   * @param now Milliseconds from any origin (default `performance.now`).
   */
  constructor(total: number, io: CliIo, now: () => number = () => performance.now()) {
    this.#total = total
    this.#io = io
    this.#now = now
  }

  /**
   * Yields `records`, telling how many have been taken as it goes. When the last record has
   * been taken, it says that the history, counters and search index follow (a fifth of the
   * time on SQLite).
   */
  *follow<T>(records: Iterable<T>): Generator<T> {
    this.begin()
    let taken = 0
    for (const record of records) {
      yield record
      taken++
      if (taken % CHECK_EVERY === 0) this.advance(taken)
    }
    this.end(taken, 'the history, counters and search index')
  }

  /**
   * Starts telling, from `from` records already in the database (a seed that resumes, said in
   * a line of its own); the time left is reckoned from what is added from now on.
   */
  begin(from = 0): void {
    this.#started = this.#now()
    this.#reported = this.#started
    this.#from = from
    if (from > 0) {
      this.#io.err(`seed: resuming after the ${count(from)} records already in the database`)
    }
    this.#draw(from)
  }

  /** Tells that `taken` records are in: redrawn at most every 100 ms, or a line every 5 s. */
  advance(taken: number): void {
    const now = this.#now()
    const every = this.#io.terminal === undefined ? LINE_EVERY_MS : REDRAW_EVERY_MS
    if (now - this.#reported < every) return
    this.#reported = now
    if (this.#io.terminal === undefined) {
      this.#io.err(
        `seed: ${count(taken)} of ${count(this.#total)} (${percent(taken, this.#total)})${this.#left(taken, now)}`,
      )
    } else {
      this.#draw(taken)
    }
  }

  /** Tells that all `taken` records are in, ends the bar, and says that `next` follows. */
  end(taken: number, next: string): void {
    this.#draw(taken)
    this.close()
    this.#io.err(`seed: ${count(taken)} records written; now ${next}`)
  }

  /** Ends the bar's line, when one is drawn, so that what follows starts on a line of its own. */
  close(): void {
    if (!this.#barOpen) return
    this.#barOpen = false
    this.#io.terminal?.write('\n')
  }

  /** Redraws the bar; nothing when standard error is not a terminal. */
  #draw(taken: number): void {
    const terminal = this.#io.terminal
    if (terminal === undefined) return
    const text = ` ${percent(taken, this.#total).padStart(4)}  ${count(taken)} of ${count(this.#total)}${this.#left(taken, this.#now())}`
    const room = Math.min(40, terminal.columns - 'seed '.length - text.length - 1)
    let bar = ''
    if (room >= 10) {
      const filled = Math.round((this.#total === 0 ? 1 : taken / this.#total) * room)
      bar = '█'.repeat(filled) + '░'.repeat(room - filled)
    }
    // Back to the start of the line, then erase what a longer line left behind.
    terminal.write(`\rseed ${bar}${text}\u001b[K`)
    this.#barOpen = true
  }

  /** ", about 12 s left" for the records, once there is a rate to go by. */
  #left(taken: number, now: number): string {
    const elapsed = now - this.#started
    const added = taken - this.#from
    if (added <= 0 || taken >= this.#total || elapsed < 1000) return ''
    const seconds = ((this.#total - taken) * elapsed) / added / 1000
    return `, about ${seconds < 90 ? `${Math.ceil(seconds)} s` : `${Math.round(seconds / 60)} min`} left`
  }
}

function count(n: number): string {
  return n.toLocaleString('en-US')
}

function percent(taken: number, total: number): string {
  return `${total === 0 ? 100 : Math.floor((taken * 100) / total)}%`
}
