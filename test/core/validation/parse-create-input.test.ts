import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { BadRequestError } from '../../../core/errors.js'
import { COUNTRY_CODES, parseCreateInput } from '../../../core/validation/index.js'
import { fieldsOf, problemsOf, withCheckCharacter } from './validation-helpers.js'

const TODAY = '2025-03-15'
const VALID = { first_name: 'Mario', last_name: 'Rossi', email: 'mario.rossi@example.it' }
const ADDRESS = { street: 'Via Roma 1', city: 'Milano', postal_code: '20121', country: 'IT' }

function create(extra: Record<string, unknown>): ReturnType<typeof parseCreateInput> {
  return parseCreateInput({ ...VALID, ...extra }, TODAY)
}

function fieldsOfCreate(extra: Record<string, unknown>): string[] {
  return fieldsOf(() => create(extra))
}

describe('parseCreateInput: required fields and defaults (D7)', () => {
  it('accepts the three required fields and fills the optional ones with null and {}', () => {
    assert.deepEqual(parseCreateInput(VALID, TODAY), {
      ...VALID,
      phone: null,
      date_of_birth: null,
      fiscal_code: null,
      address: null,
      metadata: {},
    })
  })

  it('names each missing required field', () => {
    assert.deepEqual(
      fieldsOf(() => parseCreateInput({}, TODAY)),
      ['email', 'first_name', 'last_name'],
    )
    assert.deepEqual(
      fieldsOf(() => parseCreateInput({ first_name: 'Mario' }, TODAY)),
      ['email', 'last_name'],
    )
  })

  it('treats null optional fields like absent ones', () => {
    const fields = create({
      phone: null,
      date_of_birth: null,
      fiscal_code: null,
      address: null,
      metadata: null,
    })
    assert.equal(fields.phone, null)
    assert.equal(fields.address, null)
    assert.deepEqual(fields.metadata, {})
  })

  it('treats an undefined property from an in-process caller as absent', () => {
    assert.equal(create({ phone: undefined }).phone, null)
  })

  it('refuses null for a required field', () => {
    assert.deepEqual(fieldsOfCreate({ first_name: null, email: null }), ['email', 'first_name'])
  })

  it('accepts every field at once and returns them normalised', () => {
    const fields = create({
      phone: '+39 02 1234 5678',
      date_of_birth: '1985-12-10',
      fiscal_code: 'rssmra85t10a562s',
      address: { ...ADDRESS, country: 'it' },
      metadata: { source: ' web ', campaign_id: 42, consent: true },
    })
    assert.deepEqual(fields, {
      ...VALID,
      phone: '+390212345678',
      date_of_birth: '1985-12-10',
      fiscal_code: 'RSSMRA85T10A562S',
      address: ADDRESS,
      metadata: { source: 'web', campaign_id: 42, consent: true },
    })
  })
})

describe('parseCreateInput: the body must be a JSON object (D12)', () => {
  for (const body of [null, undefined, 'text', 42, true, [], [VALID], new Date(0)]) {
    it(`throws bad_request for ${Array.isArray(body) ? 'an array' : String(body)}`, () => {
      assert.throws(
        () => parseCreateInput(body, TODAY),
        (error) => error instanceof BadRequestError && error.code === 'bad_request',
      )
    })
  }

  it('accepts an object without a prototype', () => {
    const body = Object.assign(Object.create(null) as object, VALID)
    assert.equal(parseCreateInput(body, TODAY).first_name, 'Mario')
  })

  it('throws a TypeError when the embedding code passes a bad today', () => {
    assert.throws(() => parseCreateInput(VALID, '2025-3-15'), TypeError)
    assert.throws(() => parseCreateInput(VALID, '2025-02-30'), TypeError)
  })
})

describe('parseCreateInput: strings (D8)', () => {
  it('trims every string and normalises it to NFC', () => {
    const decomposed = 'Nguye\u0302\u0303n'
    const fields = create({
      first_name: '  Jose\u0301 ',
      last_name: `\u00a0${decomposed}\n`,
      email: ' mario@example.it\t',
      address: { street: ' Via Roma 1 ', city: ' Milano', postal_code: '20121 ', country: ' it ' },
      metadata: { notes: '  caf\u0065\u0301  ' },
    })
    assert.equal(fields.first_name, 'Jos\u00e9')
    assert.equal(fields.last_name, 'Nguy\u1ec5n')
    assert.equal(fields.email, 'mario@example.it')
    assert.deepEqual(fields.address, ADDRESS)
    assert.deepEqual(fields.metadata, { notes: 'caf\u00e9' })
  })

  it('refuses control characters inside every kind of string field', () => {
    assert.deepEqual(
      fieldsOfCreate({
        first_name: 'Ma\u0000rio',
        last_name: 'Ro\tssi',
        email: 'mario\u0007@example.it',
        phone: '0212\u001b34567',
        date_of_birth: '1985-12\u0000-10',
        fiscal_code: 'RSSMRA85T10A562S\u0085x',
        address: { ...ADDRESS, street: 'Via\u007fRoma', city: 'Mi\nlano' },
        metadata: { notes: 'line one\nline two' },
      }),
      [
        'address.city',
        'address.street',
        'date_of_birth',
        'email',
        'first_name',
        'fiscal_code',
        'last_name',
        'metadata.notes',
        'phone',
      ],
    )
  })

  it('refuses lone surrogates but accepts characters outside the BMP', () => {
    assert.deepEqual(fieldsOfCreate({ first_name: 'Ma\ud800rio', last_name: 'Ro\udc00ssi' }), [
      'first_name',
      'last_name',
    ])
    assert.equal(create({ first_name: 'Mario \u{1F600}' }).first_name, 'Mario \u{1F600}')
  })

  it('counts name length in code points after NFC: 100 is the limit', () => {
    assert.equal(create({ first_name: 'a'.repeat(100) }).first_name.length, 100)
    assert.equal(create({ first_name: '\u{10400}'.repeat(100) }).first_name.length, 200)
    assert.equal(create({ first_name: 'e\u0301'.repeat(100) }).first_name, '\u00e9'.repeat(100))
    assert.deepEqual(fieldsOfCreate({ first_name: 'a'.repeat(101), last_name: 'b'.repeat(101) }), [
      'first_name',
      'last_name',
    ])
  })

  it('refuses names that are empty after trimming', () => {
    assert.deepEqual(fieldsOfCreate({ first_name: '', last_name: '   ' }), [
      'first_name',
      'last_name',
    ])
  })

  it('D8, D10: refuses a name without a letter, naming the field', () => {
    for (const name of ['-', "'", '42', '\u0301', '\u{1F600}', '. .']) {
      assert.deepEqual(
        problemsOf(() => create({ last_name: name })),
        [{ field: 'last_name', message: 'must contain at least one letter' }],
        JSON.stringify(name),
      )
    }
  })

  it('D8, D10: refuses invisible and formatting characters that disguise a name, naming the field', () => {
    for (const name of [
      '\u200b',
      'Mario\u200b',
      'Ma\u202erio',
      'Mario\u2028Rossi',
      'Mario\u2029Rossi',
      'Mario\uffff',
      'Mario\ufdd0',
      'Mario\u{e0041}\u{e007f}',
      'Mario\u00ad',
      'Mario\u2066x\u2069',
      'Ma\ufeffrio',
      '\u3164',
      'Mario\ue000',
      'Mar\u200cio',
      'Mario\u200d',
      '\u200dMario',
    ]) {
      assert.deepEqual(
        problemsOf(() => create({ first_name: name })),
        [{ field: 'first_name', message: 'must not contain invisible or formatting characters' }],
        JSON.stringify(name),
      )
    }
  })

  it('D8: accepts names in every script, with marks, apostrophes, and joiners where a script spells with them', () => {
    for (const name of [
      "D'Angelo",
      'Nguy\u1ec5n',
      'Zo\u00eb-Anne',
      '\u5f20\u4f1f',
      '\u062d\u0633\u0646\u200c\u0632\u0627\u062f\u0647',
      '\u0928\u092e\u0938\u094d\u200d\u0924\u0947',
      '\u0391\u03bb\u03ad\u03be\u03b7\u03c2',
      'O\u2019Brien',
      'Mario \u{1F600}',
    ]) {
      assert.equal(create({ first_name: name }).first_name, name)
    }
  })

  it('refuses values of the wrong type', () => {
    assert.deepEqual(
      fieldsOfCreate({ first_name: 42, last_name: ['Rossi'], email: {}, phone: 393331234567 }),
      ['email', 'first_name', 'last_name', 'phone'],
    )
  })
})

describe('parseCreateInput: the text rules of names in every free-text field (D8)', () => {
  const HIDDEN = [
    'Via\u202eRoma',
    'Via\u200bRoma',
    'Via Roma\uffff',
    'Via\ufeffRoma',
    'Via Roma\u{e0041}\u{e007f}',
    'Via\u2028Roma',
    'Via Roma\u00ad',
    'Via Roma\ue000',
    'Via\u200dRoma',
  ]
  const HIDDEN_MESSAGE = 'must not contain invisible or formatting characters'

  it('D8, D10: refuses invisible and formatting characters in every address line, naming it', () => {
    for (const text of HIDDEN) {
      const address = { ...ADDRESS, street: text, city: text }
      assert.deepEqual(
        problemsOf(() => create({ address })),
        [
          { field: 'address.street', message: HIDDEN_MESSAGE },
          { field: 'address.city', message: HIDDEN_MESSAGE },
        ],
        JSON.stringify(text),
      )
    }
  })

  it('D8, D10: refuses them in metadata values, naming each key, and in metadata keys', () => {
    for (const text of HIDDEN) {
      assert.deepEqual(
        problemsOf(() => create({ metadata: { notes: text, other: `${text} again`, n: 1 } })),
        [
          { field: 'metadata.notes', message: HIDDEN_MESSAGE },
          { field: 'metadata.other', message: HIDDEN_MESSAGE },
        ],
        JSON.stringify(text),
      )
      assert.deepEqual(
        problemsOf(() => create({ metadata: { [text]: 'x' } })),
        [
          {
            field: 'metadata',
            message: 'keys must not contain invisible or formatting characters',
          },
        ],
        JSON.stringify(text),
      )
    }
  })

  it('D8: trims and NFC-normalises address lines and metadata values, and keeps any script', () => {
    const created = create({
      address: { ...ADDRESS, street: '  Pia\u0300zza Duomo 1 ', city: '\u5317\u4eac' },
      metadata: {
        notes: ' e\u0301 \u{1F600} ',
        persian: '\u062d\u0633\u0646\u200c\u0632\u0627\u062f\u0647',
      },
    })
    assert.equal(created.address?.street, 'Pi\u00e0zza Duomo 1')
    assert.equal(created.address?.city, '\u5317\u4eac')
    assert.equal(created.metadata['notes'], '\u00e9 \u{1F600}')
    assert.equal(created.metadata['persian'], '\u062d\u0633\u0646\u200c\u0632\u0627\u062f\u0647')
  })
})

describe('parseCreateInput: email (D8)', () => {
  const LONGEST = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(58)}.it`

  it('accepts a dot-atom local part and a domain of LDH labels, and stores them as given', () => {
    assert.equal(LONGEST.length, 254)
    for (const email of [
      'a@b.it',
      'Mario.Rossi@Example.IT',
      'mario+tag@mail.example.co.uk',
      "o'brien@example.ie",
      "!#$%&'*+/=?^_`{|}~-@example.org",
      'a-b@x-1.example.museum',
      'mario@xn--universit-y1a.it',
      'a@b.c',
      LONGEST,
    ]) {
      assert.equal(create({ email }).email, email)
    }
  })

  it('D8, D10: refuses addresses without one @, a dotted domain, or with spaces, naming the field', () => {
    for (const email of [
      'mario',
      'mario@',
      '@example.it',
      'mario@example',
      'mario@@example.it',
      'mario@exa@mple.it',
      'mario rossi@example.it',
      'mario@exam ple.it',
      'mario@.example.it',
      'mario@example.it.',
      'mario@example..it',
    ]) {
      assert.deepEqual(
        problemsOf(() => create({ email })),
        [{ field: 'email', message: 'is not a valid e-mail address' }],
        email,
      )
    }
  })

  it('D8, D10: refuses what is not a dot-atom or an LDH domain, naming the field', () => {
    for (const email of [
      'a@b.co<script>',
      'a@-b.co',
      'a@b-.co',
      'a@b.-co',
      'a@b.co-',
      '.a@b.co',
      'a.@b.co',
      'a..b@c.it',
      'a"b@c.it',
      'a(b)@c.it',
      'a,b@c.it',
      'a\\b@c.it',
      'jos\u00e9@example.it',
      'mario@universit\u00e0.it',
      'mario@exa_mple.it',
      'mario@127.0.0.1',
      'mario@[127.0.0.1]',
      'mario@example.123',
      `${'a'.repeat(65)}@example.it`,
      `a@${'b'.repeat(64)}.it`,
    ]) {
      assert.deepEqual(
        problemsOf(() => create({ email })),
        [{ field: 'email', message: 'is not a valid e-mail address' }],
        email,
      )
    }
  })

  it('refuses an address longer than 254 characters', () => {
    assert.deepEqual(fieldsOfCreate({ email: `x${LONGEST}` }), ['email'])
  })
})

describe('parseCreateInput: phone (D8)', () => {
  it('removes spaces, dashes, dots and parentheses and stores the compact form', () => {
    assert.equal(create({ phone: '+39 (02) 1234-56.78' }).phone, '+390212345678')
    assert.equal(create({ phone: '123456' }).phone, '123456')
    assert.equal(create({ phone: '+123456789012345' }).phone, '+123456789012345')
  })

  it('refuses fewer than 6 or more than 15 digits, letters and misplaced plus signs', () => {
    for (const phone of [
      '12345',
      '1234567890123456',
      '++39123456',
      '39+123456',
      '0212345x',
      '',
      '+',
      '02/123456',
    ]) {
      assert.deepEqual(fieldsOfCreate({ phone }), ['phone'], phone)
    }
  })
})

describe('parseCreateInput: date_of_birth (D8)', () => {
  it('accepts real calendar dates from 1900-01-01 to today', () => {
    for (const date of ['1900-01-01', '2000-02-29', '1985-12-10', TODAY]) {
      assert.equal(create({ date_of_birth: date }).date_of_birth, date)
    }
  })

  it('refuses dates that do not exist or are not written YYYY-MM-DD', () => {
    for (const date of [
      '2023-02-29',
      '1900-02-29',
      '2023-02-30',
      '2023-04-31',
      '2023-13-01',
      '2023-00-10',
      '1985-12-1',
      '10/12/1985',
      '1985-12-10T00:00:00Z',
    ]) {
      assert.deepEqual(fieldsOfCreate({ date_of_birth: date }), ['date_of_birth'], date)
    }
  })

  it('refuses dates after today and before 1900-01-01', () => {
    assert.deepEqual(fieldsOfCreate({ date_of_birth: '2025-03-16' }), ['date_of_birth'])
    assert.deepEqual(fieldsOfCreate({ date_of_birth: '1899-12-31' }), ['date_of_birth'])
  })

  it('follows the today it is given, not the machine clock', () => {
    assert.equal(
      parseCreateInput({ ...VALID, date_of_birth: '2030-01-01' }, '2030-01-01').date_of_birth,
      '2030-01-01',
    )
  })
})

describe('parseCreateInput: fiscal_code (D8)', () => {
  it('upper-cases the code', () => {
    assert.equal(create({ fiscal_code: ' rssmra85t10a562s ' }).fiscal_code, 'RSSMRA85T10A562S')
  })

  it('accepts an omocodia variant', () => {
    const code = withCheckCharacter('RSSMRA85T10A56N')
    assert.equal(create({ fiscal_code: code, date_of_birth: '1985-12-10' }).fiscal_code, code)
  })

  it('refuses a wrong check character and a malformed code', () => {
    for (const code of [
      'RSSMRA85T10A562T',
      'RSSMRA85T10A562',
      'RSSMRA85F10A562S',
      '1234567890123456',
    ]) {
      assert.deepEqual(fieldsOfCreate({ fiscal_code: code }), ['fiscal_code'], code)
    }
  })

  it("accepts a woman's code whose day is the day of birth plus 40", () => {
    const code = withCheckCharacter('RSSMRA85T50A562')
    assert.equal(create({ fiscal_code: code, date_of_birth: '1985-12-10' }).fiscal_code, code)
  })

  it('refuses a code that disagrees with date_of_birth, naming fiscal_code', () => {
    assert.deepEqual(
      fieldsOfCreate({ fiscal_code: 'RSSMRA85T10A562S', date_of_birth: '1985-12-11' }),
      ['fiscal_code'],
    )
    assert.deepEqual(
      fieldsOfCreate({ fiscal_code: 'RSSMRA85T10A562S', date_of_birth: '1986-12-10' }),
      ['fiscal_code'],
    )
  })

  it('reports only the date when the date itself is out of range', () => {
    assert.deepEqual(
      fieldsOfCreate({ fiscal_code: 'RSSMRA85T10A562S', date_of_birth: '2099-12-10' }),
      ['date_of_birth'],
    )
  })
})

describe('parseCreateInput: address (D8)', () => {
  it('accepts the limits of each field', () => {
    const address = {
      street: 's'.repeat(200),
      city: 'c'.repeat(100),
      postal_code: 'AB-12 3456789012',
      country: 'GB',
    }
    assert.deepEqual(create({ address }).address, address)
  })

  it('requires all four fields, naming each one missing', () => {
    assert.deepEqual(fieldsOfCreate({ address: {} }), [
      'address.city',
      'address.country',
      'address.postal_code',
      'address.street',
    ])
    assert.deepEqual(fieldsOfCreate({ address: { street: 'Via Roma 1' } }), [
      'address.city',
      'address.country',
      'address.postal_code',
    ])
  })

  it('refuses fields that are too long, empty or badly formed', () => {
    assert.deepEqual(
      fieldsOfCreate({
        address: {
          street: 's'.repeat(201),
          city: '',
          postal_code: 'A'.repeat(17),
          country: 'ITA',
        },
      }),
      ['address.city', 'address.country', 'address.postal_code', 'address.street'],
    )
    for (const postal of ['20_121', '20121!', ' ', 'Z\u00fcrich']) {
      assert.deepEqual(
        fieldsOfCreate({ address: { ...ADDRESS, postal_code: postal } }),
        ['address.postal_code'],
        postal,
      )
    }
  })

  it('accepts every assigned ISO 3166-1 alpha-2 code, in any case', () => {
    assert.equal(COUNTRY_CODES.length, 249)
    for (const country of COUNTRY_CODES) {
      assert.equal(
        create({ address: { ...ADDRESS, country: country.toLowerCase() } }).address?.country,
        country,
      )
    }
  })

  it('refuses codes that are not assigned, such as UK and XX', () => {
    for (const country of ['UK', 'XX', 'EU', 'XK', 'ZZ', 'I', '', 'it1']) {
      assert.deepEqual(
        fieldsOfCreate({ address: { ...ADDRESS, country } }),
        ['address.country'],
        country,
      )
    }
  })

  it('refuses an address that is not an object', () => {
    for (const address of ['Via Roma 1, Milano', 42, [ADDRESS], true]) {
      assert.deepEqual(fieldsOfCreate({ address }), ['address'])
    }
  })

  it('names unknown fields inside the address (D9)', () => {
    assert.deepEqual(fieldsOfCreate({ address: { ...ADDRESS, zip: '20121', province: 'MI' } }), [
      'address.province',
      'address.zip',
    ])
  })
})

describe('parseCreateInput: metadata (D8)', () => {
  it('accepts string, number and boolean values', () => {
    const metadata = { source: 'web', campaign_id: 7, ratio: -0.5, consent: false, notes: '' }
    assert.deepEqual(create({ metadata }).metadata, metadata)
  })

  it('accepts 50 keys, 64-character keys and 1000-character values', () => {
    const metadata = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`key${i}`, i]))
    assert.equal(Object.keys(create({ metadata }).metadata).length, 50)
    const long = { ['k'.repeat(64)]: 'v'.repeat(1000) }
    assert.deepEqual(create({ metadata: long }).metadata, long)
  })

  it('refuses more than 50 keys, naming metadata', () => {
    const metadata = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`key${i}`, i]))
    assert.deepEqual(fieldsOfCreate({ metadata }), ['metadata'])
  })

  it('refuses empty keys and keys over 64 characters, naming metadata', () => {
    assert.deepEqual(fieldsOfCreate({ metadata: { '': 1 } }), ['metadata'])
    assert.deepEqual(fieldsOfCreate({ metadata: { ['k'.repeat(65)]: 1 } }), ['metadata'])
    assert.deepEqual(fieldsOfCreate({ metadata: { 'bad\u0000key': 1 } }), ['metadata'])
  })

  it('refuses nested objects, arrays, null and overlong strings, naming each key', () => {
    assert.deepEqual(
      fieldsOfCreate({
        metadata: { nested: { a: 1 }, list: [1, 2], nothing: null, long: 'v'.repeat(1001), ok: 1 },
      }),
      ['metadata.list', 'metadata.long', 'metadata.nested', 'metadata.nothing'],
    )
  })

  it('refuses non-finite numbers from an in-process caller', () => {
    assert.deepEqual(fieldsOfCreate({ metadata: { a: Number.NaN, b: Number.POSITIVE_INFINITY } }), [
      'metadata.a',
      'metadata.b',
    ])
  })

  it('names keys holding dots and slashes exactly', () => {
    assert.deepEqual(fieldsOfCreate({ metadata: { 'a.b': {}, 'x/y~z': [], a: 'ok' } }), [
      'metadata.a.b',
      'metadata.x/y~z',
    ])
  })

  it('refuses metadata that is not an object', () => {
    for (const metadata of ['notes', 1, [['a', 1]]]) {
      assert.deepEqual(fieldsOfCreate({ metadata }), ['metadata'])
    }
  })
})

describe('parseCreateInput: prototype keys (D8)', () => {
  it('refuses __proto__, constructor and prototype as metadata keys, naming each', () => {
    const body = JSON.parse(
      '{"first_name":"Mario","last_name":"Rossi","email":"m@example.it",' +
        '"metadata":{"__proto__":{"polluted":true},"constructor":"x","prototype":1,"ok":"y"}}',
    ) as unknown
    assert.deepEqual(
      fieldsOf(() => parseCreateInput(body, TODAY)),
      ['metadata.__proto__', 'metadata.constructor', 'metadata.prototype'],
    )
  })

  it('refuses them at the top level and in the address as unknown fields', () => {
    const body = JSON.parse(
      '{"first_name":"Mario","last_name":"Rossi","email":"m@example.it","__proto__":{"polluted":true},' +
        '"constructor":{"prototype":{"polluted":true}},' +
        '"address":{"street":"a","city":"b","postal_code":"1","country":"IT","__proto__":{"polluted":true}}}',
    ) as unknown
    assert.deepEqual(
      fieldsOf(() => parseCreateInput(body, TODAY)),
      ['__proto__', 'address.__proto__', 'constructor'],
    )
  })

  it('never lets an own __proto__ property reach a prototype', () => {
    const body = JSON.parse(
      '{"first_name":"Mario","last_name":"Rossi","email":"m@example.it","metadata":{"__proto__":{"polluted":true}}}',
    ) as unknown
    assert.throws(() => parseCreateInput(body, TODAY))
    assert.equal(({} as Record<string, unknown>).polluted, undefined)
    const fields = create({ metadata: { notes: 'x' } })
    assert.equal(Object.getPrototypeOf(fields.metadata), Object.prototype)
    assert.equal((fields.metadata as Record<string, unknown>).polluted, undefined)
  })
})

describe('parseCreateInput: unknown and read-only fields (D9)', () => {
  it('names each read-only and unknown field once', () => {
    assert.deepEqual(
      fieldsOfCreate({
        id: 1,
        status: 'active',
        created_at: 'x',
        updated_at: 'y',
        nickname: 'M',
        Email: 'x',
      }),
      ['Email', 'created_at', 'id', 'nickname', 'status', 'updated_at'],
    )
  })

  it('tells read-only fields apart from unknown ones', () => {
    const problems = problemsOf(() => create({ id: 1, status: 'active', nickname: 'M', age: 3 }))
    const message = (field: string) => problems.find((p) => p.field === field)?.message
    assert.equal(message('id'), message('status'))
    assert.equal(message('nickname'), message('age'))
    assert.notEqual(message('id'), message('nickname'))
  })
})

describe('parseCreateInput: every problem at once (D10)', () => {
  it('lists every invalid field, nested ones with dotted paths, well past eight problems', () => {
    assert.deepEqual(
      fieldsOf(() =>
        parseCreateInput(
          {
            first_name: '',
            last_name: 'x'.repeat(101),
            email: 'not-an-email',
            phone: '12',
            date_of_birth: '2023-02-30',
            fiscal_code: 'RSSMRA85T10A562T',
            address: { street: '', city: 5, postal_code: 'a_b', country: 'UK', zip: '1' },
            metadata: { nested: {}, list: [], __proto__x: null },
            id: 7,
            colour: 'blue',
          },
          TODAY,
        ),
      ),
      [
        'address.city',
        'address.country',
        'address.postal_code',
        'address.street',
        'address.zip',
        'colour',
        'date_of_birth',
        'email',
        'first_name',
        'fiscal_code',
        'id',
        'last_name',
        'metadata.__proto__x',
        'metadata.list',
        'metadata.nested',
        'phone',
      ],
    )
  })

  it('gives one entry per field', () => {
    const problems = problemsOf(() =>
      create({ first_name: 'a\u0000'.repeat(60), address: { zip: 1 } }),
    )
    const fields = problems.map((p) => p.field)
    assert.equal(new Set(fields).size, fields.length)
  })

  it('never repeats the offending value in a message', () => {
    const secret = 'SECRET4242'
    const problems = problemsOf(() =>
      create({
        first_name: `${secret}\u0000`,
        email: `${secret} @x`,
        phone: `${secret}`,
        fiscal_code: secret,
        date_of_birth: secret,
        address: { street: secret, city: secret, postal_code: `${secret}!`, country: secret },
        metadata: { notes: `${secret}`.repeat(200) },
      }),
    )
    assert.ok(problems.length >= 8)
    for (const problem of problems) assert.ok(!problem.message.includes(secret), problem.field)
  })
})
