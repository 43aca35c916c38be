import { sql } from 'kysely'
import type { Address, BeneficiaryStatus, Metadata } from '../../core/beneficiary.js'
import type { NewBeneficiary } from '../../core/ports/beneficiary-store.js'
import {
  nameKeys,
  prepareWriteStatements,
  toColumns,
  type NameKeys,
} from './sqlite-write-statements.js'
import { queryBuilder, slot, SqliteQuery } from './sqlite-query.js'
import { SqliteCounters } from './sqlite-counters.js'
import { dropStat4Samples } from './sqlite-statistics.js'
import type { SqliteStorage } from './sqlite-storage.js'

/** Options of {@link seedBeneficiaries}. */
export interface SeedOptions {
  /** How many beneficiaries to add. */
  readonly count: number
  /** Seed of the pseudo-random generator: the same seed, count and `now` give the same rows. */
  readonly seed?: number
  /** The end of the three years the creation times spread over, epoch ms; default now. */
  readonly now?: number
}

/** What {@link seedBeneficiaries} added. */
export interface SeedResult {
  /** Id of the first record added; the others follow without gaps. */
  readonly firstId: number
  readonly count: number
}

type Gender = 'F' | 'M'

const FIRST_NAMES: readonly (readonly [string, Gender])[] = [
  ['Mario', 'M'],
  ['Giulia', 'F'],
  ['Marco', 'M'],
  ['Francesca', 'F'],
  ['Luca', 'M'],
  ['Sofia', 'F'],
  ['Alessandro', 'M'],
  ['Chiara', 'F'],
  ['Andrea', 'M'],
  ['Martina', 'F'],
  ['Giuseppe', 'M'],
  ['Anna', 'F'],
  ['Matteo', 'M'],
  ['Sara', 'F'],
  ['Lorenzo', 'M'],
  ['Elena', 'F'],
  ['Francesco', 'M'],
  ['Valentina', 'F'],
  ['Davide', 'M'],
  ['Alessia', 'F'],
  ['Paolo', 'M'],
  ['Maria', 'F'],
  ['Giovanni', 'M'],
  ['Federica', 'F'],
  ['Stefano', 'M'],
  ['Silvia', 'F'],
  ['Nicolò', 'M'],
  ['Beatrice', 'F'],
  ['Mattia', 'M'],
  ['Noemi', 'F'],
  ['Raffaele', 'M'],
  ['Ilaria', 'F'],
  ['Gabriele', 'M'],
  ['Aurora', 'F'],
  ['Riccardo', 'M'],
  ['Zoë', 'F'],
  ['José', 'M'],
  ['Élodie', 'F'],
  ['François', 'M'],
  ['Łucja', 'F'],
  ['Jürgen', 'M'],
  ['Søren', 'M'],
  ['Ayşe', 'F'],
  ['Mehmet', 'M'],
  ['Fatima', 'F'],
  ['Mohamed', 'M'],
  ['Thị Lan', 'F'],
  ['Minh', 'M'],
  ['Amara', 'F'],
  ['Kwame', 'M'],
  ['Ana María', 'F'],
  ['João', 'M'],
  ['Ioana', 'F'],
  ['Andrei', 'M'],
  ['Olena', 'F'],
  ['Dmytro', 'M'],
  ['Priya', 'F'],
  ['Arjun', 'M'],
  ['Mei', 'F'],
  ['Wei', 'M'],
  ['Siobhán', 'F'],
]

// Ordered by how common they are: the generator picks early entries more often.
const LAST_NAMES: readonly string[] = [
  'Rossi',
  'Russo',
  'Ferrari',
  'Esposito',
  'Bianchi',
  'Romano',
  'Colombo',
  'Ricci',
  'Marino',
  'Greco',
  'Bruno',
  'Gallo',
  'Conti',
  'De Luca',
  'Mancini',
  'Costa',
  'Giordano',
  'Rizzo',
  'Lombardi',
  'Moretti',
  'Barbieri',
  'Fontana',
  'Santoro',
  'Mariani',
  'Rinaldi',
  'Caruso',
  'Ferrara',
  'Galli',
  'Martini',
  'Leone',
  'Longo',
  'Gentile',
  'Martinelli',
  'Vitale',
  'Lombardo',
  'Serra',
  'Coppola',
  'De Santis',
  "D'Angelo",
  'Marchetti',
  'Parisi',
  'Villa',
  'Conte',
  'Ferraro',
  'Ferri',
  'Fabbri',
  'Bianco',
  'Marini',
  'Grasso',
  'Valentini',
  'Messina',
  'Sala',
  'De Angelis',
  'Gatti',
  'Pellegrini',
  'Palumbo',
  'Sanna',
  'Farina',
  'Rossetti',
  'Rosa',
  'Nguyễn',
  'Trần',
  'Müller',
  'Schmidt',
  'García',
  'Fernández',
  'Martín',
  'Dubois',
  'Lefèvre',
  'Öztürk',
  'Yılmaz',
  'Kowalski',
  'Wiśniewska',
  'Popescu',
  'Ionescu',
  'Shevchenko',
  'Kovačević',
  'Silva',
  'Santos',
  'Hassan',
  'Benali',
  'El Amrani',
  'Diallo',
  'Mensah',
  'Okafor',
  'Singh',
  'Kumar',
  'Wang',
  'Li',
  'Zhang',
  "O'Brien",
  'Smith',
  'Ní Bhriain',
  'Ahmed',
  'Kim',
]

interface City {
  readonly name: string
  readonly country: string
  /** `9` is replaced by a random digit. */
  readonly postalCode: string
  readonly streets: readonly string[]
}

const ITALIAN_STREETS = [
  'Via Roma',
  'Via Garibaldi',
  'Corso Vittorio Emanuele II',
  'Piazza della Repubblica',
  'Via Dante Alighieri',
  'Viale dei Mille',
  'Via San Francesco d’Assisi',
]
const OTHER_STREETS = ['Main Street', 'Station Road', 'Market Square', 'Church Lane']

const CITIES: readonly City[] = [
  { name: 'Roma', country: 'IT', postalCode: '00199', streets: ITALIAN_STREETS },
  { name: 'Milano', country: 'IT', postalCode: '20199', streets: ITALIAN_STREETS },
  { name: 'Napoli', country: 'IT', postalCode: '80199', streets: ITALIAN_STREETS },
  { name: 'Torino', country: 'IT', postalCode: '10199', streets: ITALIAN_STREETS },
  { name: 'Palermo', country: 'IT', postalCode: '90199', streets: ITALIAN_STREETS },
  { name: 'Bologna', country: 'IT', postalCode: '40199', streets: ITALIAN_STREETS },
  { name: 'Firenze', country: 'IT', postalCode: '50199', streets: ITALIAN_STREETS },
  { name: 'Forlì', country: 'IT', postalCode: '47121', streets: ITALIAN_STREETS },
  {
    name: 'Paris',
    country: 'FR',
    postalCode: '75099',
    streets: ['Rue de Rivoli', 'Boulevard Voltaire'],
  },
  { name: 'München', country: 'DE', postalCode: '80999', streets: ['Hauptstraße'] },
  { name: 'Madrid', country: 'ES', postalCode: '28099', streets: ['Calle Mayor'] },
  { name: 'Lisboa', country: 'PT', postalCode: '1100-999', streets: ['Rua Augusta'] },
  { name: 'Zürich', country: 'CH', postalCode: '8099', streets: ['Bahnhofstrasse'] },
  { name: 'London', country: 'GB', postalCode: 'SW1A 1AA', streets: OTHER_STREETS },
  { name: 'Kraków', country: 'PL', postalCode: '30-999', streets: ['ulica Floriańska'] },
  { name: 'București', country: 'RO', postalCode: '099999', streets: ['Calea Victoriei'] },
  { name: 'İstanbul', country: 'TR', postalCode: '34999', streets: ['İstiklal Caddesi'] },
  { name: 'Hà Nội', country: 'VN', postalCode: '100000', streets: ['Phố Hàng Bạc'] },
  { name: 'Kyiv', country: 'UA', postalCode: '01999', streets: ['Khreshchatyk'] },
  { name: 'Casablanca', country: 'MA', postalCode: '20999', streets: OTHER_STREETS },
  { name: 'Dakar', country: 'SN', postalCode: '10999', streets: OTHER_STREETS },
  { name: 'Lima', country: 'PE', postalCode: '15999', streets: ['Avenida Arequipa'] },
  { name: 'New York', country: 'US', postalCode: '10099', streets: ['Broadway'] },
]

/** Belfiore codes of Italian towns, for codici fiscali. */
const BIRTH_PLACES = ['H501', 'F205', 'F839', 'L219', 'G273', 'A944', 'D612', 'L736', 'D969']
const MONTH_LETTERS = 'ABCDEHLMPRST'
const CHECK_ODD = [
  1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23,
]
const SOURCES = ['web', 'import', 'front-office', 'partner-api']
const DOMAINS = ['example.org', 'example.com', 'example.net']
const YEAR_MS = 365.25 * 86_400_000

/**
 * Adds `count` realistic, made-up beneficiaries to a SQLite storage, for demonstrations and
 * benchmarks: Italian and international names (accents, apostrophes, several scripts' letters),
 * valid e-mail addresses and phone numbers, one in twenty with a valid codice fiscale matching
 * its date of birth, most with an address in a real country, statuses mixed, creation times
 * spread over the three years before `now` in id order. Each gets its `created` history entry,
 * and one `status_changed` entry unless still pending.
 *
 * It writes in one transaction through prepared statements, bypassing the port: a million
 * records take well under a minute. The same options give the same rows.
 *
 * @throws TypeError when `count` is not a whole number of at least 0.
 *
 * @example
 * const storage = await openSqliteStorage({ path: 'bench.db' })
 * await seedBeneficiaries(storage, { count: 1_000_000, seed: 42 })
 */
export async function seedBeneficiaries(
  storage: SqliteStorage,
  options: SeedOptions,
): Promise<SeedResult> {
  if (!Number.isSafeInteger(options.count) || options.count < 0) {
    throw new TypeError('count must be a whole number of at least 0')
  }
  await storage.ping()
  const db = storage.database
  const random = mulberry32(options.seed ?? 1)
  const now = options.now ?? Date.now()
  const start = now - 3 * YEAR_MS
  const step = (3 * YEAR_MS) / Math.max(1, options.count)
  const fiscalCodes = new Set<string>()

  const { insert } = prepareWriteStatements(db)
  const counters = new SqliteCounters(db)
  // The names come from short lists: their keys are worth computing once.
  const keysByName = new Map<string, NameKeys>()
  // Search words and history entries follow from the rows: one INSERT … SELECT each, after the
  // loop, costs a fraction of a statement per row from JavaScript.
  const seeded = queryBuilder.selectFrom('beneficiaries').where('id', '>=', slot('firstId'))
  const addWords = new SqliteQuery(
    db,
    queryBuilder
      .insertInto('beneficiary_search')
      .columns(['rowid', 'words', 'status'])
      .expression(
        seeded.select([
          'id',
          sql<string>`CASE WHEN sort_first <> '' AND sort_last <> ''
            THEN sort_first || ' ' || sort_last ELSE sort_first || sort_last END`.as('words'),
          'status',
        ]),
      ),
  )
  const history = ['beneficiary_id', 'at', 'action', 'client_id', 'request_id', 'changes'] as const
  const addCreated = new SqliteQuery(
    db,
    queryBuilder
      .insertInto('beneficiary_history')
      .columns(history)
      .expression(
        seeded.select([
          'id',
          'created_at',
          sql<string>`'created'`.as('action'),
          sql<string>`'seed'`.as('client_id'),
          sql<string>`'seed-' || id`.as('request_id'),
          sql<string>`json_array(
            json_object('field', 'first_name', 'old', NULL, 'new', first_name),
            json_object('field', 'last_name', 'old', NULL, 'new', last_name))`.as('changes'),
        ]),
      ),
  )
  const addStatusChanged = new SqliteQuery(
    db,
    queryBuilder
      .insertInto('beneficiary_history')
      .columns(history)
      .expression(
        seeded
          .where('status', '<>', 'pending')
          .select([
            'id',
            'updated_at',
            sql<string>`'status_changed'`.as('action'),
            sql<string>`'seed'`.as('client_id'),
            sql<string>`'seed-' || id || '-status'`.as('request_id'),
            sql<string>`json_array(json_object('field', 'status', 'old', 'pending', 'new', status))`.as(
              'changes',
            ),
          ]),
      ),
  )

  const seedAll = db.transaction((): number => {
    let firstId = 0
    for (let i = 0; i < options.count; i++) {
      const createdAt = Math.floor(start + (i + random()) * step)
      const record = fakeBeneficiary(random, createdAt, now, fiscalCodes)
      const name = `${record.first_name}\u0000${record.last_name}`
      let keys = keysByName.get(name)
      if (keys === undefined) {
        keys = nameKeys(record)
        keysByName.set(name, keys)
      }
      const version = record.status === 'pending' ? 1 : 2
      const id = Number(insert.run(toColumns(record, version, keys)).lastInsertRowid)
      if (i === 0) firstId = id
      counters.add({ ...record, ...keys, id })
    }
    if (options.count > 0) {
      addWords.run({ firstId })
      // A bulk insert leaves the search index in many segments, and every search reads each
      // one: merged into one, a common prefix's first page costs a fifth (116 -> 25 µs at a
      // million rows).
      db.exec("INSERT INTO beneficiary_search (beneficiary_search) VALUES ('optimize')")
      addCreated.run({ firstId })
      addStatusChanged.run({ firstId })
    }
    counters.flush()
    return firstId
  })

  const cacheSize = db.pragma('cache_size', { simple: true })
  db.pragma('cache_size = -1048576')
  try {
    const firstId = seedAll.immediate()
    return { firstId, count: options.count }
  } finally {
    db.pragma(`cache_size = ${Number(cacheSize)}`)
    if (!db.memory) db.pragma('wal_checkpoint(TRUNCATE)')
    db.exec('ANALYZE')
    dropStat4Samples(db)
  }
}

/** A made-up record; unless pending, its status changed at `updated_at`. */
function fakeBeneficiary(
  random: () => number,
  createdAt: number,
  now: number,
  fiscalCodes: Set<string>,
): NewBeneficiary {
  const [firstName, gender] = pick(random, FIRST_NAMES, 1)
  const lastName = pick(random, LAST_NAMES, 1.5)
  const birth = new Date(Date.UTC(1940, 0, 1) + Math.floor(random() * 66 * YEAR_MS))
  const dateOfBirth = random() < 0.7 ? birth.toISOString().slice(0, 10) : null
  let fiscalCode: string | null = null
  if (dateOfBirth !== null && random() < 0.07) {
    const code = codiceFiscale(firstName, lastName, gender, birth, pick(random, BIRTH_PLACES, 1))
    if (!fiscalCodes.has(code)) {
      fiscalCodes.add(code)
      fiscalCode = code
    }
  }
  const roll = random()
  const status: BeneficiaryStatus = roll < 0.55 ? 'active' : roll < 0.8 ? 'inactive' : 'pending'
  const statusChangedAt =
    status === 'pending'
      ? undefined
      : Math.min(now - 1, createdAt + Math.floor(random() * 90 * 86_400_000))
  return {
    first_name: firstName,
    last_name: lastName,
    email: `${asciiWord(firstName)}.${asciiWord(lastName)}${Math.floor(random() * 1000)}@${pick(random, DOMAINS, 1)}`,
    phone: random() < 0.8 ? fakePhone(random) : null,
    date_of_birth: dateOfBirth,
    fiscal_code: fiscalCode,
    address: random() < 0.75 ? fakeAddress(random) : null,
    metadata: fakeMetadata(random, createdAt),
    status,
    created_at: createdAt,
    updated_at: statusChangedAt ?? createdAt,
  }
}

function fakePhone(random: () => number): string {
  const digits = (n: number): string => String(Math.floor(random() * 10 ** n)).padStart(n, '0')
  const roll = random()
  if (roll < 0.75) return `+393${digits(9)}`
  if (roll < 0.85) return `3${digits(9)}`
  if (roll < 0.92) return `+336${digits(8)}`
  return `+4915${digits(9)}`
}

function fakeAddress(random: () => number): Address {
  const city = pick(random, CITIES, 1.5)
  return {
    street: `${pick(random, city.streets, 1)} ${1 + Math.floor(random() * 180)}`,
    city: city.name,
    postal_code: city.postalCode.replace(/9/g, () => String(Math.floor(random() * 10))),
    country: city.country,
  }
}

function fakeMetadata(random: () => number, createdAt: number): Metadata {
  const roll = random()
  if (roll < 0.3) return {}
  const month = new Date(createdAt).toISOString().slice(0, 7)
  const metadata: Record<string, string | number | boolean> = { source: pick(random, SOURCES, 1) }
  if (roll < 0.7) metadata.campaign_id = `cmp-${month}`
  if (roll > 0.9) metadata.notes = 'Preferisce essere contattata via e-mail · prefers e-mail'
  if (roll > 0.95) metadata.household_size = 1 + Math.floor(random() * 6)
  return metadata
}

/** Letters and digits of `name` without accents, lower case, ASCII only. */
function asciiWord(name: string): string {
  return name
    .normalize('NFD')
    .replace(/[^A-Za-z0-9]/g, '')
    .toLowerCase()
}

/**
 * A valid codice fiscale: surname and name codes, birth date (day + 40 for women), birthplace
 * and check character, as D8 checks it.
 */
export function codiceFiscale(
  firstName: string,
  lastName: string,
  gender: Gender,
  birth: Date,
  place: string,
): string {
  const letters = (text: string): string =>
    text
      .normalize('NFD')
      .replace(/[^A-Za-z]/g, '')
      .toUpperCase()
  const consonants = (text: string): string => letters(text).replace(/[AEIOU]/g, '')
  const vowels = (text: string): string => letters(text).replace(/[^AEIOU]/g, '')
  const surname = (consonants(lastName) + vowels(lastName) + 'XXX').slice(0, 3)
  const nameConsonants = consonants(firstName)
  const name =
    nameConsonants.length >= 4
      ? nameConsonants[0]! + nameConsonants[2]! + nameConsonants[3]!
      : (nameConsonants + vowels(firstName) + 'XXX').slice(0, 3)
  const year = String(birth.getUTCFullYear() % 100).padStart(2, '0')
  const month = MONTH_LETTERS[birth.getUTCMonth()]!
  const day = String(birth.getUTCDate() + (gender === 'F' ? 40 : 0)).padStart(2, '0')
  const body = `${surname}${name}${year}${month}${day}${place}`
  let sum = 0
  for (let i = 0; i < body.length; i++) {
    const char = body.charCodeAt(i)
    const value = char <= 57 ? char - 48 : char - 65
    sum += i % 2 === 0 ? CHECK_ODD[value]! : value
  }
  return body + String.fromCharCode(65 + (sum % 26))
}

/** An entry of `items`, earlier ones more likely the larger `skew` is (1: uniform). */
function pick<T>(random: () => number, items: readonly T[], skew: number): T {
  return items[Math.floor(Math.pow(random(), skew) * items.length)]!
}

/** A small, fast, seedable generator (mulberry32), good enough for fake data. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}
