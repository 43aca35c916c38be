import type { BeneficiaryStatus } from '../core/beneficiary.js'
import { DAY_MS } from '../core/time.js'
import { BENEFICIARY_STATUSES } from '../core/beneficiary-fields.js'
import { SORT_VALUES, type SortValue } from '../core/validation/query-schemas.js'
import type { DataProfile } from './data-profile.js'
import { ProfileCounts, type ListFilter } from './profile-counts.js'
import { SearchTermPools } from './search-term-pools.js'
import { SeededRandom } from './seeded-random.js'

/** One list request: its filters, sort and page. */
export interface ListRequest extends ListFilter {
  /** Absent: no `sort` parameter (the default, id). */
  readonly sort?: SortValue | undefined
  readonly page: number
  readonly perPage: number
}

/** What a shape class draws its requests from. */
interface Drawing {
  readonly random: SeededRandom
  readonly terms: SearchTermPools
  readonly counts: ProfileCounts
}

/** A named kind of list request, drawn at random (see bench/README.md). */
export interface ShapeClass {
  readonly name: string
  readonly description: string
  /** The filters and sort of one request; the page is drawn over its result afterwards. */
  draw(from: Drawing): Omit<ListRequest, 'page' | 'perPage'>
}

const MAX_PER_PAGE = 100
const LIST_PATH = '/v3/beneficiaries'
/** Share of gets among the reads of the mixed scenario; the rest are list requests. */
const GET_SHARE = 0.5

/** No sort (the default, id) or any of the ten values `sort` takes, each as likely. */
const anySort = (random: SeededRandom): SortValue | undefined =>
  random.int(0, SORT_VALUES.length) === 0 ? undefined : random.pick(SORT_VALUES)
const anyStatus = (random: SeededRandom): BeneficiaryStatus => random.pick(BENEFICIARY_STATUSES)

/** Every shape class, in the order they run. */
export const SHAPE_CLASSES: readonly ShapeClass[] = [
  {
    name: 'page',
    description: 'no search or filter, any sort or none, any page of the whole table',
    draw: ({ random }) => ({ sort: anySort(random) }),
  },
  {
    name: 'search-short',
    description: 'search: a 1–3 letter prefix of a first or last name, by frequency',
    draw: ({ random, terms }) => ({ search: terms.short(random) }),
  },
  {
    name: 'search-long',
    description: 'search: a 4–8 letter prefix of a first or last name, by frequency',
    draw: ({ random, terms }) => ({ search: terms.long(random) }),
  },
  {
    name: 'search-rare',
    description: 'search: a 3–8 letter prefix of one of the rarest names',
    draw: ({ random, terms }) => ({ search: terms.rare(random) }),
  },
  {
    name: 'search-two-words',
    description: 'search: prefixes of a first and a last name of one row (mario ros)',
    draw: ({ random, terms }) => ({ search: terms.twoWords(random) }),
  },
  {
    name: 'search-accented',
    description: 'search: a prefix holding an accent or apostrophe (nguyễ, d’ang)',
    draw: ({ random, terms }) => ({ search: terms.accented(random) }),
  },
  {
    name: 'search-sorted',
    description: 'search of any kind above with one of the ten sorts',
    draw: ({ random, terms }) => ({ search: terms.any(random), sort: random.pick(SORT_VALUES) }),
  },
  {
    name: 'filter-status',
    description: 'status, any sort or none',
    draw: ({ random }) => ({ status: anyStatus(random), sort: anySort(random) }),
  },
  {
    name: 'filter-date',
    description: 'created_from and/or created_to (1 day to the whole range), any sort or none',
    draw: ({ random, counts }) => ({ ...dateRange(random, counts), sort: anySort(random) }),
  },
  {
    name: 'filter-status-date',
    description: 'status and a date range, any sort or none',
    draw: ({ random, counts }) => ({
      status: anyStatus(random),
      ...dateRange(random, counts),
      sort: anySort(random),
    }),
  },
  {
    name: 'search-filtered',
    description: 'search of any kind with a status, a date range or both, any sort or none',
    draw: ({ random, terms, counts }) => {
      // 0: a status, 1: dates, 2: both.
      const filters = random.int(0, 2)
      return {
        search: terms.any(random),
        ...(filters !== 1 && { status: anyStatus(random) }),
        ...(filters !== 0 && dateRange(random, counts)),
        sort: anySort(random),
      }
    },
  },
]

/**
 * Seeded generator of the benchmark's request paths, from the profile of the seeded data: the
 * same profile, set, count and seed always give the same paths.
 */
export class ListShapes {
  readonly #profile: DataProfile
  readonly #terms: SearchTermPools
  readonly #counts: ProfileCounts

  constructor(profile: DataProfile) {
    this.#profile = profile
    this.#terms = new SearchTermPools(profile)
    this.#counts = new ProfileCounts(profile)
  }

  /** How many rows a request matches (`ProfileCounts`). */
  count(filter: ListFilter): number {
    return this.#counts.count(filter)
  }

  /** `count` requests of one shape class, with `per_page` 1–100 and a page within the result. */
  requests(shape: ShapeClass, count: number, seed: number | string): ListRequest[] {
    const random = SeededRandom.of(`${seed}:${shape.name}`)
    const from = { random, terms: this.#terms, counts: this.#counts }
    return Array.from({ length: count }, () => this.#request(shape, from))
  }

  /**
   * `count` paths of a set: a shape class by name, or `reads`, the reads of the mixed scenario:
   * half of them gets of a random id, half list requests of a shape class drawn uniformly.
   */
  paths(set: string, count: number, seed: number | string): string[] {
    if (set !== 'reads') {
      const shape = SHAPE_CLASSES.find((candidate) => candidate.name === set)
      if (shape === undefined) throw new TypeError(`unknown set of paths: ${set}`)
      return this.requests(shape, count, seed).map(listPath)
    }
    const random = SeededRandom.of(`${seed}:reads`)
    const from = { random, terms: this.#terms, counts: this.#counts }
    return Array.from({ length: count }, () =>
      random.chance(GET_SHARE)
        ? `${LIST_PATH}/${random.int(1, this.#profile.maxId)}`
        : listPath(this.#request(random.pick(SHAPE_CLASSES), from)),
    )
  }

  #request(shape: ShapeClass, from: Drawing): ListRequest {
    const drawn = shape.draw(from)
    const perPage = from.random.int(1, MAX_PER_PAGE)
    const lastPage = Math.max(1, Math.ceil(this.#counts.count(drawn) / perPage))
    return { ...drawn, page: from.random.int(1, lastPage), perPage }
  }
}

/** The path of a list request, with its query string. */
export function listPath(request: ListRequest): string {
  const params: [string, string | undefined][] = [
    ['search', request.search],
    ['status', request.status],
    ['created_from', request.createdFrom],
    ['created_to', request.createdTo],
    ['sort', request.sort],
    ['page', String(request.page)],
    ['per_page', String(request.perPage)],
  ]
  const query = params
    .filter((param): param is [string, string] => param[1] !== undefined)
    .map(([name, value]) => `${name}=${encodeURIComponent(value)}`)
    .join('&')
  return `${LIST_PATH}?${query}`
}

/**
 * A range of creation days within the data: one day (10 %), 30 days (40 %), 31 days to a year
 * (25 %), the whole range (15 %), or open at one end (10 %).
 */
function dateRange(
  random: SeededRandom,
  counts: ProfileCounts,
): Pick<ListFilter, 'createdFrom' | 'createdTo'> {
  const first = Date.parse(counts.firstDay)
  const last = Date.parse(counts.lastDay)
  const days = Math.round((last - first) / DAY_MS) + 1
  const day = (offset: number) => new Date(first + offset * DAY_MS).toISOString().slice(0, 10)
  const span = (length: number) => {
    const width = Math.min(length, days)
    const start = random.int(0, days - width)
    return { createdFrom: day(start), createdTo: day(start + width - 1) }
  }
  const roll = random.next()
  if (roll < 0.1) return span(1)
  if (roll < 0.5) return span(30)
  if (roll < 0.75) return span(random.int(31, 365))
  if (roll < 0.9) return { createdFrom: counts.firstDay, createdTo: counts.lastDay }
  return random.chance(0.5)
    ? { createdFrom: day(random.int(0, days - 1)) }
    : { createdTo: day(random.int(0, days - 1)) }
}
