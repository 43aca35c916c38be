import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { BeneficiaryRecord, BeneficiaryStatus, SortField } from '../../core/beneficiary.js'
import { JsonBytes } from '../../core/json-bytes.js'
import type { ListQuery } from '../../core/ports/beneficiary-store.js'
import { listItemOf, writeListItems } from '../../core/representation.js'
import { searchTerms } from '../../core/search-terms.js'
import type { CurrentStorage } from './contract-harness.js'
import {
  SECOND,
  T0,
  fullBeneficiary,
  historyEntry,
  insertBeneficiary,
  listQuery,
  newBeneficiary,
  nextVersion,
  summaryOf,
} from './storage-fixtures.js'

/*
 * Collation of the name sorts (`last_name`, `first_name`), which every adapter must reproduce:
 *
 *   1. the name's search key, `searchTerms(name).join(' ')` (lower-case, accent-free words),
 *   2. then the raw name,
 *   3. then the id,
 *
 * where both strings compare by Unicode code point (= UTF-8 byte order, SQLite's BINARY
 * collation; not JavaScript's UTF-16 `<`). A descending sort reverses all three steps, so it is
 * exactly the ascending order reversed. Numeric sorts (`id`, `created_at`, `updated_at`) break
 * ties by id the same way.
 */

interface RosterRow {
  readonly first: string
  readonly last: string
  readonly created: number
  readonly updated: number
  readonly status: BeneficiaryStatus
}

// Ties in every sort field, names that differ only in case or accents, and a lower-case name
// that the raw strings would put after the upper-case ones.
const SORT_ROSTER: readonly RosterRow[] = [
  { first: 'Carla', last: 'Rossi', created: 2, updated: 7, status: 'active' },
  { first: 'Élodie', last: 'rossi', created: 1, updated: 7, status: 'pending' },
  { first: 'bruno', last: 'Ávila', created: 2, updated: 6, status: 'inactive' },
  { first: 'Carla', last: 'Rossi', created: 3, updated: 5, status: 'active' },
  { first: 'Elodie', last: 'Zanetti', created: 1, updated: 8, status: 'pending' },
  { first: 'Ana', last: 'avila', created: 0, updated: 8, status: 'active' },
]

/** Ascending orders of `SORT_ROSTER`, as row indexes. */
const ASCENDING: Readonly<Record<SortField, readonly number[]>> = {
  id: [0, 1, 2, 3, 4, 5],
  created_at: [5, 1, 4, 0, 2, 3],
  updated_at: [3, 2, 0, 1, 4, 5],
  last_name: [5, 2, 0, 3, 1, 4],
  first_name: [5, 2, 0, 3, 4, 1],
}

const SEARCH_ROSTER: readonly (readonly [string, string])[] = [
  ['Mario', 'Rossi'],
  ['Maria', 'Rossini'],
  ['Thị', 'Nguyễn'],
  ['Anna', "D'Angelo"],
  ['Jürgen', 'Müller'],
  ['Dario', 'Angeli'],
  ['Andrea', 'Orsini'],
]

/** Search queries (as typed by a user) and the `SEARCH_ROSTER` rows they find (D16). */
const SEARCHES: readonly (readonly [string, readonly number[]])[] = [
  ['mario', [0]],
  ['mari', [0, 1]],
  ['ross', [0, 1]],
  ['rossin', [1]],
  ['mario ros', [0]],
  ['ros mario', [0]],
  ['mario bian', []],
  ['mario mari', [0]],
  ['marios', []],
  ['ssi', []],
  ['ini', []],
  ['nguyen', [2]],
  ['NGUYỄN', [2]],
  ['Thi', [2]],
  ["d'ang", [3, 5]],
  ["D'Angelo", [3]],
  ['muller', [4]],
  ['MÜLL', [4]],
  ['jurgen muller', [4]],
]

/** Queries with characters that mean something to SQL LIKE, FTS5 or a shell (D16). */
const HOSTILE_SEARCHES: readonly (readonly [string, readonly number[]])[] = [
  ['"mario"', [0]],
  ['ross*', [0, 1]],
  ['-mario', [0]],
  ['m%', [0, 1, 4]],
  ['r_ss', []],
  ["o'r", []],
  ['first_name:mario', []],
  ['NEAR mario', []],
  ['mario OR anna', []],
  ['OR', [6]],
  ['AND', [6]],
  ['NOT', []],
  ['"', []],
  ['*', []],
  ['%', []],
  ['_', []],
  ["'", []],
  ['', []],
]

/** Registers the list behaviours of `BeneficiaryStore` (D15–D18). */
export function describeBeneficiaryListContract(storage: CurrentStorage): void {
  const store = () => storage().beneficiaries

  async function insertRoster(rows: readonly RosterRow[]): Promise<readonly number[]> {
    const ids: number[] = []
    for (const row of rows) {
      const record = await insertBeneficiary(
        storage(),
        newBeneficiary({
          first_name: row.first,
          last_name: row.last,
          status: row.status,
          created_at: T0 + row.created * SECOND,
          updated_at: T0 + row.updated * SECOND,
        }),
      )
      ids.push(record.id)
    }
    return ids
  }

  async function insertNames(
    names: readonly (readonly [string, string])[],
  ): Promise<readonly number[]> {
    const ids: number[] = []
    for (const [first_name, last_name] of names) {
      ids.push((await insertBeneficiary(storage(), newBeneficiary({ first_name, last_name }))).id)
    }
    return ids
  }

  async function listIds(query: Partial<ListQuery>): Promise<readonly number[]> {
    return (await store().list(listQuery(query))).items.map((item) => item.id)
  }

  function pick(ids: readonly number[], rows: readonly number[]): readonly number[] {
    return rows.map((row) => ids[row]!)
  }

  describe('beneficiaries: list pages (D18)', () => {
    it('returns list items with exactly the summary columns', async () => {
      const record = await insertBeneficiary(storage(), fullBeneficiary())
      assert.deepEqual(await store().list(listQuery()), { items: [summaryOf(record)], total: 1 })
    })

    it("gives summaries whose JSON bytes are JSON.stringify's of their list items", async () => {
      await insertRoster(SORT_ROSTER)
      // What a JSON string escapes, and characters of two, three and four UTF-8 bytes.
      await insertBeneficiary(
        storage(),
        fullBeneficiary({
          first_name: 'Zoë "Zo\\e" \u0007',
          last_name: 'Nguyễn 😀',
          email: '"o\\brien"@example.org',
          phone: '+39\t06',
        }),
      )
      const queries: ListQuery[] = [
        listQuery({ limit: 100 }),
        listQuery({ sort: 'last_name', descending: true, limit: 3, offset: 1 }),
        listQuery({ sort: 'updated_at', status: 'active' }),
        listQuery({ search: searchTerms('zo'), sort: 'first_name' }),
        listQuery({ createdFrom: T0, createdBefore: T0 + SECOND * 3, sort: 'created_at' }),
        listQuery({ offset: 50 }),
      ]
      const out = new JsonBytes()
      for (const query of queries) {
        // What the server sends: the core's JSON of the store's summaries.
        const page = await store().list(query)
        writeListItems(out, page.items)
        assert.equal(
          new TextDecoder().decode(out.take()),
          JSON.stringify(page.items.map(listItemOf)),
          JSON.stringify(query),
        )
      }
    })

    it('returns an empty page with total 0 when there are no records', async () => {
      assert.deepEqual(await store().list(listQuery()), { items: [], total: 0 })
    })

    it('pages with limit 1 from the first to the last record', async () => {
      const ids = await insertRoster(SORT_ROSTER)
      for (let offset = 0; offset < ids.length; offset++) {
        assert.deepEqual(await store().list(listQuery({ offset, limit: 1 })), {
          items: [summaryOf((await store().get(ids[offset]!)) as BeneficiaryRecord)],
          total: 6,
        })
      }
    })

    it('returns empty items with the exact total for an offset at or past the end', async () => {
      await insertRoster(SORT_ROSTER)
      assert.deepEqual(await store().list(listQuery({ offset: 6, limit: 10 })), {
        items: [],
        total: 6,
      })
      assert.deepEqual(await store().list(listQuery({ offset: 1000, limit: 100 })), {
        items: [],
        total: 6,
      })
    })

    it('returns a short last page', async () => {
      const ids = await insertRoster(SORT_ROSTER)
      assert.deepEqual(await listIds({ offset: 4, limit: 4 }), ids.slice(4))
    })

    it('returns 100 items for limit 100 out of 150, then the remaining 50', async () => {
      const ids: number[] = []
      for (let i = 0; i < 150; i++) {
        const input = newBeneficiary({ email: `person${i}@example.org` })
        ids.push((await insertBeneficiary(storage(), input)).id)
      }
      const first = await store().list(listQuery({ limit: 100 }))
      assert.equal(first.total, 150)
      assert.deepEqual(
        first.items.map((item) => item.id),
        ids.slice(0, 100),
      )
      const second = await store().list(listQuery({ offset: 100, limit: 100 }))
      assert.equal(second.total, 150)
      assert.deepEqual(
        second.items.map((item) => item.id),
        ids.slice(100),
      )
    })
  })

  describe('beneficiaries: list order (D15)', () => {
    for (const sort of Object.keys(ASCENDING) as SortField[]) {
      it(`sorts by ${sort} ascending, breaking ties by ascending id (D15)`, async () => {
        const ids = await insertRoster(SORT_ROSTER)
        assert.deepEqual(await listIds({ sort }), pick(ids, ASCENDING[sort]))
      })

      it(`sorts by ${sort} descending, breaking ties by descending id (D15)`, async () => {
        const ids = await insertRoster(SORT_ROSTER)
        const expected = pick(ids, [...ASCENDING[sort]].reverse())
        assert.deepEqual(await listIds({ sort, descending: true }), expected)
      })
    }

    it('pages through a sorted list without losing or repeating records (D15)', async () => {
      const ids = await insertRoster(SORT_ROSTER)
      const seen: number[] = []
      for (let offset = 0; offset < 6; offset += 4) {
        seen.push(...(await listIds({ sort: 'last_name', offset, limit: 4 })))
      }
      assert.deepEqual(seen, pick(ids, ASCENDING.last_name))
    })

    it('sorts names that fold to one key by their raw form, by code point (D15)', async () => {
      const ids = await insertNames([
        ['muller', 'x'],
        ['Müller', 'x'],
        ['MULLER', 'x'],
        ['Muller', 'x'],
      ])
      assert.deepEqual(await listIds({ sort: 'first_name' }), pick(ids, [2, 3, 1, 0]))
    })

    it('compares names by code point, not by UTF-16 unit (D15)', async () => {
      // U+20000 is a surrogate pair (D840 DC00), below U+FF42 in UTF-16 but above it by code point.
      const byKey = await insertNames([
        ['x', '\u{20000}'],
        ['x', '\u{FF42}'],
      ])
      assert.deepEqual(await listIds({ sort: 'last_name' }), [byKey[1], byKey[0]])
    })

    it('compares raw names by code point once their keys tie (D15)', async () => {
      // Both keys are 'a': '😀' and '！' (U+FF01) are not letters; U+1F600 is above U+FF01.
      const ids = await insertNames([
        ['a😀', 'x'],
        ['a！', 'x'],
      ])
      assert.deepEqual(await listIds({ sort: 'first_name' }), [ids[1], ids[0]])
    })

    it('sorts by the current name after an update (D15)', async () => {
      const ids = await insertRoster(SORT_ROSTER)
      const zanetti = (await store().get(ids[4]!))!
      const renamed = nextVersion(zanetti, { last_name: 'Abate' }, T0 + 9 * SECOND)
      await store().update(zanetti, renamed, historyEntry('updated', T0 + 9 * SECOND))
      assert.deepEqual(await listIds({ sort: 'last_name' }), pick(ids, [4, 5, 2, 0, 3, 1]))
    })
  })

  describe('beneficiaries: list filters (D17)', () => {
    const cases: readonly (readonly [string, Partial<ListQuery>, readonly number[]])[] = [
      ['status active', { status: 'active' }, [0, 3, 5]],
      ['status pending', { status: 'pending' }, [1, 4]],
      ['status inactive', { status: 'inactive' }, [2]],
      ['createdFrom, inclusive', { createdFrom: T0 + SECOND }, [0, 1, 2, 3, 4]],
      ['createdFrom one millisecond later', { createdFrom: T0 + SECOND + 1 }, [0, 2, 3]],
      ['createdBefore, exclusive', { createdBefore: T0 + 2 * SECOND }, [1, 4, 5]],
      [
        'createdBefore one millisecond later',
        { createdBefore: T0 + 2 * SECOND + 1 },
        [0, 1, 2, 4, 5],
      ],
      ['both bounds', { createdFrom: T0 + SECOND, createdBefore: T0 + 2 * SECOND }, [1, 4]],
      [
        'a one-millisecond range',
        { createdFrom: T0 + 2 * SECOND, createdBefore: T0 + 2 * SECOND + 1 },
        [0, 2],
      ],
      ['an empty range', { createdFrom: T0 + 2 * SECOND, createdBefore: T0 + 2 * SECOND }, []],
      ['status and createdFrom', { status: 'active', createdFrom: T0 + 2 * SECOND }, [0, 3]],
      [
        'status, both bounds',
        { status: 'pending', createdFrom: T0, createdBefore: T0 + SECOND },
        [],
      ],
    ]
    for (const [label, filters, rows] of cases) {
      it(`filters by ${label}, with the exact total (D17)`, async () => {
        const ids = await insertRoster(SORT_ROSTER)
        const page = await store().list(listQuery(filters))
        assert.deepEqual(
          page.items.map((item) => item.id),
          pick(ids, rows),
        )
        assert.equal(page.total, rows.length)
      })
    }

    it('combines filters with sort and paging, the total counting every match (D15, D17, D18)', async () => {
      const ids = await insertRoster(SORT_ROSTER)
      const query = { status: 'active', sort: 'created_at', descending: true } as const
      assert.deepEqual(await listIds(query), pick(ids, [3, 0, 5]))
      assert.deepEqual(await store().list(listQuery({ ...query, offset: 1, limit: 1 })), {
        items: [summaryOf((await store().get(ids[0]!))!)],
        total: 3,
      })
      assert.deepEqual(await store().list(listQuery({ ...query, offset: 3, limit: 1 })), {
        items: [],
        total: 3,
      })
    })

    it('combines search with filters and sort (D15, D16, D17)', async () => {
      const ids = await insertRoster(SORT_ROSTER)
      const search = searchTerms('rossi')
      assert.deepEqual(await listIds({ search, status: 'active' }), pick(ids, [0, 3]))
      assert.deepEqual(
        await listIds({ search: searchTerms('carla rossi'), createdBefore: T0 + 3 * SECOND }),
        pick(ids, [0]),
      )
      assert.deepEqual(
        await listIds({ search, sort: 'first_name', descending: true }),
        pick(ids, [1, 3, 0]),
      )
      const page = await store().list(listQuery({ search, offset: 1, limit: 1 }))
      assert.equal(page.total, 3)
      assert.deepEqual(
        page.items.map((item) => item.id),
        pick(ids, [1]),
      )
    })
  })

  describe('beneficiaries: search (D16)', () => {
    for (const [query, rows] of SEARCHES) {
      it(`finds ${JSON.stringify(rows)} for the search ${JSON.stringify(query)} (D16)`, async () => {
        const ids = await insertNames(SEARCH_ROSTER)
        const page = await store().list(listQuery({ search: searchTerms(query) }))
        assert.deepEqual(
          page.items.map((item) => item.id),
          pick(ids, rows),
        )
        assert.equal(page.total, rows.length)
      })
    }

    for (const [query, rows] of HOSTILE_SEARCHES) {
      it(`treats the search ${JSON.stringify(query)} as plain words, finding ${JSON.stringify(rows)} (D16)`, async () => {
        const ids = await insertNames(SEARCH_ROSTER)
        const page = await store().list(listQuery({ search: searchTerms(query) }))
        assert.deepEqual(
          page.items.map((item) => item.id),
          pick(ids, rows),
        )
        assert.equal(page.total, rows.length)
      })
    }

    it('finds nothing for an empty list of terms, whatever the other filters (D16)', async () => {
      await insertNames(SEARCH_ROSTER)
      assert.deepEqual(await store().list(listQuery({ search: [] })), { items: [], total: 0 })
      assert.deepEqual(
        await store().list(listQuery({ search: [], status: 'pending', sort: 'last_name' })),
        { items: [], total: 0 },
      )
    })

    it('finds names stored decomposed, with combining marks (D16)', async () => {
      const ids = await insertNames([['Thi\u0323', 'Nguye\u0302\u0303n']])
      assert.deepEqual(await listIds({ search: searchTerms('nguyễn thị') }), ids)
    })

    it('finds letters that keep their mark when decomposed, and ligatures, by plain letters (D16)', async () => {
      const ids = await insertNames([
        ['Łucja', 'Wałęsa'],
        ['Søren', 'Kierkegaard'],
        ['Đorđe', 'Straße'],
        ['Æsa', 'Œlund'],
        ['Lucia', 'Rossi'],
      ])
      assert.deepEqual(await listIds({ search: searchTerms('lucja walesa') }), pick(ids, [0]))
      assert.deepEqual(await listIds({ search: searchTerms('ŁUCJA') }), pick(ids, [0]))
      assert.deepEqual(await listIds({ search: searchTerms('soren') }), pick(ids, [1]))
      assert.deepEqual(await listIds({ search: searchTerms('dorde strasse') }), pick(ids, [2]))
      assert.deepEqual(await listIds({ search: searchTerms('STRASSE') }), pick(ids, [2]))
      assert.deepEqual(await listIds({ search: searchTerms('aesa oel') }), pick(ids, [3]))
      assert.deepEqual(await listIds({ search: searchTerms('luc') }), pick(ids, [0, 4]))
      // Sorted among the plain letters they fold to, not after `z`.
      assert.deepEqual(await listIds({ sort: 'first_name' }), pick(ids, [3, 2, 4, 0, 1]))
    })

    it('finds a record by its current name after an update, not by the old one (D16)', async () => {
      const ids = await insertNames(SEARCH_ROSTER)
      const mario = (await store().get(ids[0]!))!
      const renamed = nextVersion(mario, { last_name: 'Verdi' }, T0 + SECOND)
      await store().update(mario, renamed, historyEntry('updated', T0 + SECOND))
      assert.deepEqual(await listIds({ search: searchTerms('verdi') }), pick(ids, [0]))
      assert.deepEqual(await listIds({ search: searchTerms('rossi') }), pick(ids, [1]))
    })

    it('finds a record under its new status after a status change, by the same name (D16, D17)', async () => {
      const ids = await insertNames(SEARCH_ROSTER)
      const mario = (await store().get(ids[0]!))!
      const active = nextVersion(mario, { status: 'active' }, T0 + SECOND)
      await store().update(mario, active, historyEntry('status_changed', T0 + SECOND))
      const byName = searchTerms('mario')
      assert.deepEqual(await listIds({ search: byName, status: 'active' }), pick(ids, [0]))
      assert.deepEqual(await listIds({ search: byName, status: mario.status }), [])
    })

    it('no longer finds a deleted record (D13, D16)', async () => {
      const ids = await insertNames(SEARCH_ROSTER)
      await store().remove(ids[1]!, undefined, historyEntry('deleted', T0 + SECOND))
      const page = await store().list(listQuery({ search: searchTerms('mari') }))
      assert.deepEqual(
        page.items.map((item) => item.id),
        pick(ids, [0]),
      )
      assert.equal(page.total, 1)
    })
  })
}
