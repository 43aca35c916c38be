import type { Address, BeneficiaryStatus, Metadata } from '../../core/beneficiary.js'
import type { NewBeneficiary } from '../../core/ports/beneficiary-store.js'
import { DAY_MS } from '../../core/time.js'
import { fiscalCodeCheckCharacter } from '../../core/validation/fiscal-code.js'

/** Options of {@link fakeBeneficiaries}. */
export interface FakeBeneficiaryOptions {
  /** How many beneficiaries to make up. */
  readonly count: number
  /** Seed of the pseudo-random generator: the same seed, count and `now` give the same records. */
  readonly seed?: number
  /** The end of the three years the creation times spread over, epoch ms; default now. */
  readonly now?: number
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
const SOURCES = ['web', 'import', 'front-office', 'partner-api']
const DOMAINS = ['example.org', 'example.com', 'example.net']
const YEAR_MS = 365.25 * DAY_MS

/**
 * `count` realistic, made-up beneficiaries, for the CLI's `seed`, demonstrations and
 * benchmarks: Italian and international names (accents, apostrophes, several scripts' letters),
 * valid e-mail addresses and phone numbers, one in twenty with a valid codice fiscale matching
 * its date of birth (no two alike), most with an address in a real country, statuses mixed,
 * creation times spread over the three years before `now` in order. Unless pending, a record's
 * status changed at its `updated_at`: a storage's bulk loader (`seedBeneficiaries` of the SQLite
 * adapter) records it so.
 *
 * The records are made one at a time as the result is iterated, so a million need not be held
 * at once; the same options give the same records.
 *
 * @throws TypeError when `count` is not a whole number of at least 0.
 *
 * @example
 * await seedBeneficiaries(storage, fakeBeneficiaries({ count: 1_000_000, seed: 42 }))
 */
export function fakeBeneficiaries(options: FakeBeneficiaryOptions): Iterable<NewBeneficiary> {
  if (!Number.isSafeInteger(options.count) || options.count < 0) {
    throw new TypeError('count must be a whole number of at least 0')
  }
  return generate(options.count, options.seed ?? 1, options.now ?? Date.now())
}

function* generate(count: number, seed: number, now: number): Generator<NewBeneficiary> {
  const random = mulberry32(seed)
  const start = now - 3 * YEAR_MS
  const step = (3 * YEAR_MS) / Math.max(1, count)
  const fiscalCodes = new Set<string>()
  for (let i = 0; i < count; i++) {
    const createdAt = Math.floor(start + (i + random()) * step)
    yield fakeBeneficiary(random, createdAt, now, fiscalCodes)
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
    const code = fakeFiscalCode(firstName, lastName, gender, birth, pick(random, BIRTH_PLACES, 1))
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
      : Math.min(now - 1, createdAt + Math.floor(random() * 90 * DAY_MS))
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
function fakeFiscalCode(
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
  return body + fiscalCodeCheckCharacter(body)
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
