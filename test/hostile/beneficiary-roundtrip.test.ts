import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import fc from 'fast-check'
import { send } from '../server/server-fixtures.js'
import {
  freeTextArbitrary,
  HIDDEN_SAMPLES,
  NOT_ASSIGNED,
  validBeneficiaryArbitrary,
  type BeneficiaryValue,
} from './beneficiary-arbitraries.js'
import { birthDateOf, fiscalCode, personArbitrary } from './codice-fiscale.js'
import {
  accessToken,
  assertErrorBody,
  namedFields,
  openSqliteWorld,
  settings,
  storageDigest,
  TODAY,
  type SqliteWorld,
} from './hostile-fixtures.js'

/** One known way to break a body, and the fields the 422 must then name (D9, D10). */
interface Break {
  readonly label: string
  /** The paths it touches: two breaks on the same path, or on `a` and `a.b`, are not combined. */
  readonly targets: readonly string[]
  /** Every field the 422 must name for it. */
  readonly fields: readonly string[]
  /** Only a create can break this way (a required field left out). */
  readonly createOnly?: boolean
  readonly apply: (body: Record<string, unknown>) => void
}

type Body = Record<string, unknown>

function isObject(value: unknown): value is Body {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Sets `key` as an own property, even `__proto__`, as JSON.parse would. */
function put(target: Body, key: string, value: unknown): void {
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  })
}

function setField(path: string, value: unknown): (body: Body) => void {
  return (body) => put(body, path, value)
}

const VALID_ADDRESS = { street: 'Via Roma 1', city: 'Pisa', postal_code: '56100', country: 'IT' }

function setAddressField(field: string, value: unknown): (body: Body) => void {
  return (body) => {
    const address = { ...(isObject(body['address']) ? body['address'] : VALID_ADDRESS) }
    put(address, field, value)
    body['address'] = address
  }
}

function dropAddressField(field: string): (body: Body) => void {
  return (body) => {
    const address: Body = { ...(isObject(body['address']) ? body['address'] : VALID_ADDRESS) }
    delete address[field]
    body['address'] = address
  }
}

function setMetadataKey(key: string, value: unknown): (body: Body) => void {
  return (body) => {
    const metadata = { ...(isObject(body['metadata']) ? body['metadata'] : {}) }
    put(metadata, key, value)
    body['metadata'] = metadata
  }
}

function breaks(field: string, values: readonly unknown[], fields = [field]): fc.Arbitrary<Break> {
  return fc.constantFrom(...values).map((value) => ({
    label: `${field} = ${JSON.stringify(value)?.slice(0, 40)}`,
    targets: [field],
    fields,
    apply: setField(field, value),
  }))
}

const TOMORROW = new Date(Date.parse(TODAY) + 86_400_000).toISOString().slice(0, 10)
const NAME_BREAKS = [
  '',
  '  \t ',
  'é'.repeat(101),
  '😀'.repeat(101),
  42,
  null,
  true,
  {},
  ['Mario'],
  'Ma\u0000rio',
  'Ma\u0007rio',
  'Mario\u007f',
  'Ma\ud800rio',
  '\u0085Mario',
  // D8: a name holds a letter, and nothing invisible that disguises it.
  '\u200b',
  '\u200b\u200b\u200b',
  'Ma\u202erio',
  'Mario\u2028Rossi',
  'Mario\uffff',
  'Mario\u{e0041}',
  'Mar\u200cio',
  '\u3164',
  '42',
  '-',
]

function nameBreaks(field: string): fc.Arbitrary<Break> {
  return fc.oneof(breaks(field, NAME_BREAKS), fc.constant(leaveOut(field)))
}

function leaveOut(field: string): Break {
  return {
    label: `${field} left out`,
    targets: [field],
    fields: [field],
    createOnly: true,
    apply: (body) => void delete body[field],
  }
}

const fiscalFlip: fc.Arbitrary<Break> = fc
  .tuple(
    personArbitrary(TODAY),
    fc.integer({ min: 0, max: 15 }),
    fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'),
  )
  .filter(([person, position, char]) => fiscalCode(person).charAt(position) !== char)
  .map(([person, position, char]) => {
    const code = fiscalCode(person)
    const flipped = code.slice(0, position) + char + code.slice(position + 1)
    return {
      label: `fiscal_code ${code} flipped to ${flipped}`,
      targets: ['fiscal_code'],
      fields: ['fiscal_code'],
      apply: setField('fiscal_code', flipped),
    }
  })

// A valid code and a valid date of birth that disagree (D8): only `fiscal_code` is named.
const fiscalMismatch: fc.Arbitrary<Break> = fc
  .tuple(personArbitrary(TODAY), fc.integer({ min: 1, max: 27 }))
  .map(([person, shift]) => {
    const other = { ...person, day: ((person.day - 1 + shift) % 28) + 1 }
    return {
      label: `fiscal_code for ${birthDateOf(other)} with date_of_birth ${birthDateOf(person)}`,
      targets: ['fiscal_code', 'date_of_birth'],
      fields: ['fiscal_code'],
      apply: (body) => {
        body['date_of_birth'] = birthDateOf(person)
        body['fiscal_code'] = fiscalCode(other)
      },
    }
  })

const BREAKS: fc.Arbitrary<Break> = fc.oneof(
  nameBreaks('first_name'),
  nameBreaks('last_name'),
  fc.oneof(
    breaks('email', [
      'mario.example.org',
      'mario@example',
      'ma rio@example.org',
      'mario@@example.org',
      '@example.org',
      'mario@',
      'mario@example..org',
      'mario@.example.org',
      `${'a'.repeat(250)}@example.org`,
      'mario@exa\u2003mple.org',
      'mario\n@example.org',
      // D8: a dot-atom local part and LDH labels.
      'a@b.co<script>',
      'a@-b.co',
      '.a@b.co',
      'a.@b.co',
      'jos\u00e9@example.org',
      'mario@example.123',
      12,
      null,
      [],
    ]),
    fc.constant(leaveOut('email')),
  ),
  breaks('phone', [
    '12345',
    '1234567890123456',
    '+',
    '++393331234567',
    '39a3331234',
    'tel 3331234567',
    '333\u00001234567',
    '',
    123456789,
    true,
    {},
  ]),
  breaks('date_of_birth', [
    '2023-02-30',
    '2023-02-29',
    '1899-12-31',
    TOMORROW,
    '1985-13-01',
    '1985-00-10',
    '1985-12-32',
    '85-12-10',
    '1985/12/10',
    '1985-12-10T00:00:00Z',
    '',
    19851210,
    {},
  ]),
  fc.oneof(
    fiscalFlip,
    fiscalMismatch,
    breaks('fiscal_code', [
      'RSSMRA85T10A562',
      'RSSMRA85T10A562SS',
      'RSSMRA85T10A56 S',
      'RSSMRA85Z10A562S',
      'RSSMRA85T32A562S',
      '',
      123,
      [],
    ]),
  ),
  breaks('address', ['Via Roma 1', 42, [], true]),
  fc.constantFrom('street', 'city', 'postal_code', 'country').map((field) => ({
    label: `address.${field} left out`,
    targets: [`address.${field}`],
    fields: [`address.${field}`],
    apply: dropAddressField(field),
  })),
  fc
    .tuple(
      fc.constantFrom(
        ['street', ''],
        ['street', 'x'.repeat(201)],
        ['street', 7],
        ['street', null],
        ['city', ''],
        ['city', 'Pisa'.repeat(26)],
        ['city', 'Pi\u0000sa'],
        ['postal_code', ''],
        ['postal_code', 'ABC_1'],
        ['postal_code', '1'.repeat(17)],
        ['postal_code', 'Ä100'],
        ['postal_code', 56100],
        ['country', 'ITA'],
        ['country', 'I'],
        ['country', ''],
        ['country', 39],
        ['country', null],
        ['country', 'I T'],
        ...NOT_ASSIGNED.map((code) => ['country', code]),
        ['zip', '56100'],
        ['__proto__', {}],
        ['constructor', 'x'],
      ),
    )
    .map(([[field, value]]) => ({
      label: `address.${String(field)} = ${JSON.stringify(value)}`,
      targets: [`address.${String(field)}`],
      fields: [`address.${String(field)}`],
      apply: setAddressField(String(field), value),
    })),
  // D8: an address line holds nothing that hides or disguises text, as a name does not.
  fc
    .tuple(fc.constantFrom('street', 'city'), fc.constantFrom(...HIDDEN_SAMPLES))
    .map(([field, hidden]) => ({
      label: `address.${field} with ${JSON.stringify(hidden)}`,
      targets: [`address.${field}`],
      fields: [`address.${field}`],
      apply: setAddressField(field, `Via${hidden}Roma`),
    })),
  breaks('metadata', ['notes', 1, [], true]),
  fc
    .constantFrom<[string, unknown]>(
      ['k_nested', { a: 1 }],
      ['k_null', null],
      ['k_array', [1]],
      ['k_long', 'x'.repeat(1_001)],
      ['k_control', 'a\u0000b'],
      ...HIDDEN_SAMPLES.map((hidden, i): [string, unknown] => [`k_hidden_${i}`, `a${hidden}b`]),
      ['__proto__', 'x'],
      ['constructor', 'x'],
      ['prototype', 1],
    )
    .map(([key, value]) => ({
      label: `metadata.${key} = ${JSON.stringify(value).slice(0, 20)}`,
      targets: [`metadata.${key}`],
      fields: [`metadata.${key}`],
      apply: setMetadataKey(key, value),
    })),
  fc
    .constantFrom<[string, (body: Body) => void]>(
      [
        '51 keys',
        (body) =>
          void (body['metadata'] = Object.fromEntries(
            Array.from({ length: 51 }, (_, i) => [`k${i}`, i]),
          )),
      ],
      ['an empty key', setMetadataKey('', 'x')],
      ['a key of 65 characters', setMetadataKey('k'.repeat(65), 'x')],
      ['a key with a control character', setMetadataKey('a\u0001b', 'x')],
      ...HIDDEN_SAMPLES.map((hidden): [string, (body: Body) => void] => [
        `a key with ${JSON.stringify(hidden)}`,
        setMetadataKey(`a${hidden}b`, 'x'),
      ]),
    )
    .map(([label, apply]) => ({
      label: `metadata with ${label}`,
      targets: ['metadata'],
      fields: ['metadata'],
      apply,
    })),
  fc
    .tuple(
      fc.constantFrom(
        'nickname',
        'id',
        'status',
        'created_at',
        'updated_at',
        'Email',
        'first_name ',
        'version',
        '__proto__',
        'constructor',
        'prototype',
      ),
      fc.jsonValue({ maxDepth: 2 }),
    )
    .map(([key, value]) => ({
      label: `unknown or read-only ${key}`,
      targets: [key],
      fields: [key],
      apply: setField(key, value),
    })),
)

/** Whether `a` and `b` touch the same path, or one a path inside the other. */
function overlaps(a: Break, b: Break): boolean {
  return a.targets.some((x) =>
    b.targets.some((y) => x === y || x.startsWith(`${y}.`) || y.startsWith(`${x}.`)),
  )
}

/** One to four breaks on different paths. */
function breakSet(update: boolean): fc.Arbitrary<Break[]> {
  const candidate = update ? BREAKS.filter((b) => b.createOnly !== true) : BREAKS
  return fc.array(candidate, { minLength: 1, maxLength: 4 }).map((list) => {
    const kept: Break[] = []
    for (const item of list) if (!kept.some((other) => overlaps(item, other))) kept.push(item)
    return kept
  })
}

function broken(body: Body, list: readonly Break[]): { body: Body; fields: Set<string> } {
  const copy: Body = structuredClone(body)
  for (const item of list) item.apply(copy)
  return { body: copy, fields: new Set(list.flatMap((item) => item.fields)) }
}

/** `body` as JSON text with the key at `path` written a second time, with the value `again`. */
function withRepeatedKey(body: Body, path: readonly string[], again: unknown): string {
  const [outer, inner] = path as [string, string | undefined]
  const repeat = (object: Body, key: string): string => {
    const text = JSON.stringify(object)
    return `${text.slice(0, -1)},${JSON.stringify(key)}:${JSON.stringify(again)}}`
  }
  if (inner === undefined) return repeat(body, outer)
  const nested = repeat(body[outer] as Body, inner)
  const rest = Object.fromEntries(Object.entries(body).filter(([key]) => key !== outer))
  const text = JSON.stringify(rest)
  return `${text.slice(0, -1)},${JSON.stringify(outer)}:${nested}}`
}

function writableOf(detail: Record<string, unknown>): BeneficiaryValue {
  const { first_name, last_name, email, phone, date_of_birth, fiscal_code, address, metadata } =
    detail as unknown as BeneficiaryValue
  return { first_name, last_name, email, phone, date_of_birth, fiscal_code, address, metadata }
}

describe('generated beneficiaries against the API on SQLite (D7–D11)', () => {
  let world: SqliteWorld
  let token: string
  let target: number

  before(async () => {
    world = await openSqliteWorld('roundtrip')
    token = (await accessToken(world.service, world.writer)).access
    const created = await send(world.handler, 'POST', '/v3/beneficiaries', {
      token,
      body: { first_name: 'Target', last_name: 'Record', email: 'target@example.org' },
    })
    assert.equal(created.status, 201)
    target = created.json!['id'] as number
  })

  after(async () => {
    await world?.close()
  })

  it('D7, D8: every valid beneficiary round-trips exactly: create, then get, returns its fields in normal form', async () => {
    await fc.assert(
      fc.asyncProperty(validBeneficiaryArbitrary(TODAY), async ({ body, value }) => {
        const created = await send(world.handler, 'POST', '/v3/beneficiaries', { token, body })
        assert.equal(created.status, 201, created.body)
        const id = created.json!['id'] as number
        try {
          assert.ok(Number.isSafeInteger(id) && id > 0)
          assert.deepEqual(created.json, {
            id,
            first_name: value.first_name,
            last_name: value.last_name,
            email: value.email,
            status: 'pending',
            created_at: new Date(world.clock.now()).toISOString(),
          })
          const read = await send(world.handler, 'GET', `/v3/beneficiaries/${id}`, { token })
          assert.equal(read.status, 200, read.body)
          assert.deepEqual(writableOf(read.json!), value)
          assert.equal(read.json!['status'], 'pending')
          assert.deepEqual(Object.keys(read.json!).sort(), [
            'address',
            'created_at',
            'date_of_birth',
            'email',
            'first_name',
            'fiscal_code',
            'id',
            'last_name',
            'metadata',
            'phone',
            'status',
            'updated_at',
          ])
          // The normal form is a fixed point: sending it back changes nothing at all (D11).
          const digest = storageDigest(world.storage.database)
          const again = await send(world.handler, 'PUT', `/v3/beneficiaries/${id}`, {
            token,
            body: value,
          })
          assert.equal(again.status, 200, again.body)
          assert.deepEqual(again.json, read.json)
          assert.equal(storageDigest(world.storage.database), digest)
        } finally {
          const removed = await send(world.handler, 'DELETE', `/v3/beneficiaries/${id}`, { token })
          assert.equal(removed.status, 204)
        }
      }),
      settings(60),
    )
  })

  it('D9, D10: a valid body broken in known ways is refused with 422 naming exactly the broken fields, and nothing is stored', async () => {
    await fc.assert(
      fc.asyncProperty(
        validBeneficiaryArbitrary(TODAY, { maxMetadataKeys: 30 }),
        breakSet(false),
        async ({ body }, list) => {
          const bad = broken(body, list)
          const digest = storageDigest(world.storage.database)
          const answer = await send(world.handler, 'POST', '/v3/beneficiaries', {
            token,
            body: bad.body,
          })
          const context = list.map((item) => item.label).join('; ')
          assert.equal(answer.status, 422, `${context}: ${answer.body}`)
          const error = assertErrorBody(answer.status, answer.headers, answer.body, context)
          assert.equal(error.error, 'validation_failed', context)
          assert.deepEqual(namedFields(error), bad.fields, `${context}: ${answer.body}`)
          assert.equal(storageDigest(world.storage.database), digest, `${context}: storage changed`)
        },
      ),
      settings(250),
    )
  })

  it('D9–D11: a PUT broken in known ways is refused with 422 naming exactly the broken fields, and the record is unchanged', async () => {
    await fc.assert(
      fc.asyncProperty(
        validBeneficiaryArbitrary(TODAY, { maxMetadataKeys: 30 }),
        breakSet(true),
        async ({ body }, list) => {
          const bad = broken(body, list)
          const digest = storageDigest(world.storage.database)
          const answer = await send(world.handler, 'PUT', `/v3/beneficiaries/${target}`, {
            token,
            body: bad.body,
          })
          const context = list.map((item) => item.label).join('; ')
          assert.equal(answer.status, 422, `${context}: ${answer.body}`)
          const error = assertErrorBody(answer.status, answer.headers, answer.body, context)
          assert.deepEqual(namedFields(error), bad.fields, `${context}: ${answer.body}`)
          assert.equal(storageDigest(world.storage.database), digest, `${context}: storage changed`)
        },
      ),
      settings(150),
    )
  })

  it('D8, D14: a status reason with a control, invisible or formatting character is 422 naming reason, and nothing changes', async () => {
    await fc.assert(
      fc.asyncProperty(
        freeTextArbitrary(400),
        fc.constantFrom(...HIDDEN_SAMPLES, '\u0000', '\u0007', '\u007f'),
        fc.nat(),
        async (text, hidden, at) => {
          const chars = [...text.value]
          const place = 1 + (at % chars.length)
          const reason = [...chars.slice(0, place), hidden, ...chars.slice(place), '.'].join('')
          const digest = storageDigest(world.storage.database)
          const answer = await send(world.handler, 'POST', `/v3/beneficiaries/${target}/status`, {
            token,
            body: { status: 'active', reason },
          })
          const context = JSON.stringify(reason).slice(0, 60)
          assert.equal(answer.status, 422, `${context}: ${answer.body}`)
          const error = assertErrorBody(answer.status, answer.headers, answer.body, context)
          assert.deepEqual(namedFields(error), new Set(['reason']), context)
          assert.equal(storageDigest(world.storage.database), digest, `${context}: storage changed`)
        },
      ),
      settings(100),
    )
  })

  it('D12: a valid body that gives one of its keys twice is 400 bad_request naming the key, and nothing is stored', async () => {
    await fc.assert(
      fc.asyncProperty(
        validBeneficiaryArbitrary(TODAY, { maxMetadataKeys: 10 }),
        fc.nat(),
        fc.jsonValue({ maxDepth: 1 }),
        async ({ body }, pick, again) => {
          // Every key path of the body: top-level fields, and those of address and metadata.
          const paths: string[][] = []
          for (const [key, value] of Object.entries(body)) {
            paths.push([key])
            if (isObject(value)) for (const inner of Object.keys(value)) paths.push([key, inner])
          }
          const path = paths[pick % paths.length]!
          const text = withRepeatedKey(body, path, again)
          const digest = storageDigest(world.storage.database)
          const answer = await send(world.handler, 'POST', '/v3/beneficiaries', {
            token,
            raw: new TextEncoder().encode(text),
          })
          const context = `${path.join('.')} in ${text.slice(0, 80)}`
          assert.equal(answer.status, 400, `${context}: ${answer.body}`)
          const error = assertErrorBody(answer.status, answer.headers, answer.body, context)
          assert.equal(error.error, 'bad_request', context)
          assert.ok(error.message.includes(JSON.stringify(path.join('.'))), error.message)
          assert.equal(storageDigest(world.storage.database), digest, `${context}: storage changed`)
        },
      ),
      settings(100),
    )
  })
})
