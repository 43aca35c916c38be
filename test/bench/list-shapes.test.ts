import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import {
  openSqliteStorage,
  seedBeneficiaries,
  type SqliteStorage,
} from '../../adapters/sqlite/index.js'
import { readDataProfile, profileOf, type DataProfile } from '../../bench/data-profile.js'
import { ListShapes, SHAPE_CLASSES, listPath } from '../../bench/list-shapes.js'
import { SearchTermPools, wordsOf } from '../../bench/search-term-pools.js'
import { SeededRandom } from '../../bench/seeded-random.js'
import { createBeneficiaryService, FakeClock, type RequestContext } from '../../core/index.js'
import { SORT_VALUES } from '../../core/validation/query-schemas.js'
import { parseListQuery } from '../../core/validation/parse-list-query.js'
import { fakeBeneficiaries } from '../../server/cli/fake-beneficiaries.js'
import { parseQueryString } from '../../server/query-string.js'

const NOW = Date.UTC(2026, 0, 1)
const ROWS = 4_000
const PER_CLASS = 60

/** The query of a generated path, as the server parses it. */
function queryOf(path: string): Record<string, string> {
  const [route, query] = path.split('?') as [string, string | undefined]
  assert.equal(route, '/v3/beneficiaries', path)
  const parsed = parseQueryString(query ?? '')
  assert.ok(parsed !== undefined, `broken percent-encoding in ${path}`)
  return parsed as Record<string, string>
}

describe('the list shapes of the benchmark', () => {
  let dir: string
  let storage: SqliteStorage
  let profile: DataProfile
  let shapes: ListShapes
  let ctx: RequestContext
  let list: (query: Record<string, string>) => Promise<number>

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'list-shapes-'))
    const file = join(dir, 'shapes.db')
    storage = await openSqliteStorage({ path: file })
    await seedBeneficiaries(storage, fakeBeneficiaries({ count: ROWS, seed: 5, now: NOW }))
    profile = readDataProfile(file)
    shapes = new ListShapes(profile)
    const service = await createBeneficiaryService({
      storage,
      clock: new FakeClock(NOW),
      limits: { auth: 1_000, write: 1_000, standard: 1_000_000 },
    })
    const client = await service.clients.create({ name: 'bench', scopes: ['read'] })
    const { client_id, client_secret } = client
    const { value: tokens } = await service.login({ ip: '192.0.2.1' }, { client_id, client_secret })
    ctx = { token: tokens.access_token, requestId: 'req-shapes' }
    list = async (query) => (await service.list(ctx, query)).value.meta.total_count
  })

  after(async () => {
    await storage.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('reads the same profile from the database as from the records themselves', () => {
    const inMemory = profileOf(fakeBeneficiaries({ count: ROWS, seed: 5, now: NOW }))
    const key = (p: DataProfile) => ({
      rows: p.rows,
      maxId: p.maxId,
      names: [...p.names].map((n) => `${n.first}|${n.last}|${n.status}|${n.count}`).sort(),
      days: p.days,
    })
    assert.deepEqual(key(profile), key(inMemory))
    assert.equal(profile.rows, ROWS)
  })

  it('draws the same paths from the same seed, and others from another', () => {
    for (const shape of SHAPE_CLASSES) {
      const again = new ListShapes(profile)
      assert.deepEqual(shapes.paths(shape.name, 200, 7), again.paths(shape.name, 200, 7))
      assert.notDeepEqual(shapes.paths(shape.name, 200, 7), shapes.paths(shape.name, 200, 8))
    }
    assert.deepEqual(shapes.paths('reads', 300, 7), new ListShapes(profile).paths('reads', 300, 7))
  })

  it('makes paths the service accepts, within its bounds, with every sort where it sorts', () => {
    for (const shape of SHAPE_CLASSES) {
      const sorts = new Set<string | undefined>()
      for (const path of shapes.paths(shape.name, 400, 1)) {
        const params = parseListQuery(queryOf(path))
        assert.ok(params.perPage >= 1 && params.perPage <= 100, path)
        assert.ok(params.page >= 1, path)
        sorts.add(params.sortParam)
        const isSearch = shape.name.startsWith('search')
        assert.equal(params.search !== undefined, isSearch, path)
        const filtered = params.status !== undefined || params.createdFrom !== undefined
        assert.equal(
          filtered || params.createdTo !== undefined,
          shape.name.includes('filter'),
          path,
        )
      }
      const expected =
        shape.name === 'search-sorted'
          ? SORT_VALUES.length
          : shape.name.startsWith('search-') && shape.name !== 'search-filtered'
            ? 1
            : SORT_VALUES.length + 1
      assert.equal(sorts.size, expected, `${shape.name}: ${[...sorts].join(' ')}`)
    }
  })

  it('spreads per_page over 1–100 and pages over the whole table', () => {
    const requests = shapes.requests(
      SHAPE_CLASSES.find((s) => s.name === 'page')!,
      3000,
      1,
    )
    const perPages = new Set(requests.map((r) => r.perPage))
    assert.ok(perPages.has(1) && perPages.has(100) && perPages.size > 90)
    for (const r of requests) assert.ok(r.page <= Math.ceil(ROWS / r.perPage))
    const deep = requests.filter((r) => (r.page - 1) * r.perPage >= ROWS / 2)
    assert.ok(deep.length > requests.length / 3, 'half the requests start in the second half')
  })

  it('counts the matches of every request as the service does, and pages within them', async () => {
    for (const shape of SHAPE_CLASSES) {
      for (const request of shapes.requests(shape, PER_CLASS, 3)) {
        const path = listPath(request)
        const dated = request.createdFrom !== undefined || request.createdTo !== undefined
        // A search within dates is estimated (see ProfileCounts); everything else is exact.
        if (request.search !== undefined && dated) continue
        const total = await list(queryOf(path))
        assert.equal(shapes.count(request), total, path)
        assert.ok(request.page <= Math.max(1, Math.ceil(total / request.perPage)), path)
      }
    }
  })

  it('takes search terms from the names of the data only', () => {
    const pools = new SearchTermPools(profile)
    const words = pools.words.map((word) => word.toLowerCase())
    const names = new Set(profile.names.flatMap((n) => [...wordsOf(n.first), ...wordsOf(n.last)]))
    assert.deepEqual(new Set(pools.words), names)
    const random = new SeededRandom(11)
    const draws = {
      short: [1, 3],
      long: [4, 8],
      rare: [3, 8],
      accented: [1, 40],
      twoWords: [1, 8],
    } as const
    for (const [kind, [min, max]] of Object.entries(draws)) {
      for (let i = 0; i < 300; i++) {
        const term = pools[kind as keyof typeof draws](random)
        const parts = term.split(' ')
        assert.equal(parts.length, kind === 'twoWords' ? 2 : 1, term)
        for (const part of parts) {
          const length = Array.from(part).length
          assert.ok(length >= min && length <= max, `${kind}: ${term}`)
          assert.ok(
            words.some((word) => word.startsWith(part.toLowerCase())),
            `${kind}: ${term} is no prefix of a name`,
          )
        }
        if (kind === 'accented') assert.match(term.toLowerCase(), /[^a-z]/, term)
      }
    }
  })

  it('draws common names more often than rare ones, and rare terms from the rarest', () => {
    const pools = new SearchTermPools(profile)
    const random = new SeededRandom(12)
    const rowsOf = (term: string) => shapes.count({ search: term })
    const long = Array.from({ length: 500 }, () => rowsOf(pools.long(random)))
    const rare = Array.from({ length: 500 }, () => rowsOf(pools.rare(random)))
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!
    assert.ok(median(rare) * 2 < median(long), `rare ${median(rare)}, long ${median(long)}`)
  })

  it('mixes gets of ids within the data with list requests of every class for the reads', () => {
    const paths = shapes.paths('reads', 2000, 1)
    const gets = paths.filter((p) => /^\/v3\/beneficiaries\/\d+$/.test(p))
    assert.ok(gets.length > 800 && gets.length < 1200, `${gets.length} gets`)
    for (const get of gets) {
      const id = Number(get.slice(get.lastIndexOf('/') + 1))
      assert.ok(id >= 1 && id <= profile.maxId)
    }
    for (const path of paths.filter((p) => !gets.includes(p))) parseListQuery(queryOf(path))
  })
})
