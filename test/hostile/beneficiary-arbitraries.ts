import fc from 'fast-check'
import { birthDateOf, fiscalCode, personArbitrary } from './codice-fiscale.js'

// Generators of beneficiary bodies that respect every rule of D7–D10, each paired with what the
// API must give back: the rules' normal form (trimmed, NFC, phone compacted, fiscal code and
// country upper-cased), computed here from the decisions, not by the product's code.

/** D8: control characters (and lone surrogates) are refused in every string. */
const CONTROL = /[\p{Cc}\p{Cs}]/u
export const RESERVED_KEYS = ['__proto__', 'constructor', 'prototype']

/** D8's normal form of a string field. */
export function normalText(text: string): string {
  return text.normalize('NFC').trim()
}

/** Length in characters (code points), as D8 counts them. */
export function characters(text: string): number {
  return [...text].length
}

/**
 * Any printable text (graphemes from every script, emoji, combining sequences), sometimes with
 * surrounding spaces or decomposed; valid when its normal form has 1 to `max` characters.
 */
export function textArbitrary(
  max: number,
  min = 1,
): fc.Arbitrary<{ input: string; value: string }> {
  return fc
    .tuple(
      fc.oneof(
        fc.string({ unit: 'grapheme', minLength: min, maxLength: Math.min(max, 30) }),
        fc.string({ unit: 'grapheme-ascii', minLength: min, maxLength: max }),
        fc.string({ unit: 'grapheme', minLength: min, maxLength: max }),
      ),
      fc.constantFrom('', ' ', '\t', '\u00a0', ' \u3000'),
      fc.boolean(),
    )
    .map(([text, pad, decompose]) => {
      const input = `${pad}${decompose ? text.normalize('NFD') : text}${pad}`
      return { input, value: normalText(input) }
    })
    .filter(
      ({ value }) => characters(value) >= min && characters(value) <= max && !CONTROL.test(value),
    )
}

/**
 * What no free text may hold beyond D8's control characters, names, address lines, metadata
 * keys and values and a status reason alike: the default-ignorable and format characters,
 * private use, unassigned code points and line or paragraph separators; written here from the
 * decision, not taken from the product. Joiners are left out of generated text altogether.
 */
export const HIDDEN = /[\p{Default_Ignorable_Code_Point}\p{Cf}\p{Co}\p{Cn}\p{Zl}\p{Zp}]/u

/** Characters D8 refuses in any free text, each hidden in its own way (for broken bodies). */
export const HIDDEN_SAMPLES: readonly string[] = [
  '\u202e',
  '\u200b',
  '\uffff',
  '\ufeff',
  '\u{e0041}',
  '\u2028',
  '\u00ad',
  '\ue000',
  '\u2066',
  '\ufe0f',
  '\u3164',
]

/** Whether D8 takes `text` (in its normal form) as free text: nothing hidden, no control. */
export function isTextByD8(text: string): boolean {
  return !HIDDEN.test(text) && !CONTROL.test(text)
}

/** Whether D8 takes `name` (in its normal form) as a person's name: a letter, nothing hidden. */
export function isNameByD8(name: string): boolean {
  return /\p{L}/u.test(name) && isTextByD8(name)
}

/** Free text D8 takes, of 1 (or `min`) to `max` characters, from every script. */
export function freeTextArbitrary(
  max: number,
  min = 1,
): fc.Arbitrary<{ input: string; value: string }> {
  return textArbitrary(max, min).filter(({ value }) => isTextByD8(value))
}

/** A person's name (D8: 1–100 characters, a letter among them), with letters from every script. */
export const personNameArbitrary = textArbitrary(100).filter(({ value }) => isNameByD8(value))

const ATEXT = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+/=?^_`{|}~-"
const LDH = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-'

const atom = fc.string({ unit: fc.constantFrom(...ATEXT), minLength: 1, maxLength: 10 })
const label = fc
  .string({ unit: fc.constantFrom(...LDH), minLength: 1, maxLength: 12 })
  .filter((text) => !text.startsWith('-') && !text.endsWith('-'))
const topLabel = label.filter((text) => /^[A-Za-z]/.test(text))

/**
 * An e-mail address of D8's syntax: a dot-atom local part of at most 64 characters,
 * two or more labels of letters, digits and hyphens (none at either end, the last starting with a
 * letter), at most 254 in all; sometimes with spaces around it, which D8 trims.
 */
export const emailArbitrary: fc.Arbitrary<{ input: string; value: string }> = fc
  .tuple(
    fc.array(atom, { minLength: 1, maxLength: 4 }),
    fc.array(label, { minLength: 1, maxLength: 3 }),
    topLabel,
    fc.constantFrom('', ' ', '\t'),
  )
  .map(([atoms, labels, top, pad]) => {
    const address = `${atoms.join('.')}@${[...labels, top].join('.')}`
    return { input: `${pad}${address}${pad}`, value: address }
  })
  .filter(({ value }) => value.indexOf('@') <= 64 && value.length <= 254)

/** A phone number written with the separators D8 removes; the value is the compact form. */
export const phoneArbitrary: fc.Arbitrary<{ input: string; value: string }> = fc
  .tuple(
    fc.boolean(),
    fc.array(fc.constantFrom(...'0123456789'), { minLength: 6, maxLength: 15 }),
    fc.array(fc.constantFrom('', '', '', ' ', '-', '.', '(', ')', ' - '), {
      minLength: 15,
      maxLength: 15,
    }),
  )
  .map(([plus, digits, separators]) => {
    const input = (plus ? '+' : '') + digits.map((d, i) => d + (separators[i] ?? '')).join('')
    return { input, value: (plus ? '+' : '') + digits.join('') }
  })

/**
 * Every assigned ISO 3166-1 alpha-2 code, from the ICU data of Node's Intl (independent of the
 * product's table): the two-letter regions Intl can name, less the codes ISO reserves but has not
 * assigned (exceptionally or transitionally reserved, user-assigned, withdrawn).
 */
export const NOT_ASSIGNED = [
  ...'AC AN BU CP CQ CS DD DG DY EA EU EZ FX HV IC NH QO RH SU TA TP UK UN VD XK YD YU ZR'.split(
    ' ',
  ),
  // User-assigned: AA, QM–QZ, XA–XZ, ZZ.
  'AA',
  ...'MNOPQRSTUVWXYZ'.split('').map((letter) => `Q${letter}`),
  ...'ABCDEFGHIJKLMNOPQRSTUVWXYZ'.split('').map((letter) => `X${letter}`),
  'ZZ',
]

export const ASSIGNED_COUNTRIES: readonly string[] = (() => {
  const names = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'code' })
  const codes: string[] = []
  for (let a = 65; a <= 90; a++) {
    for (let b = 65; b <= 90; b++) {
      const code = String.fromCharCode(a, b)
      if (names.of(code) !== code && !NOT_ASSIGNED.includes(code)) codes.push(code)
    }
  }
  return codes
})()

/** Mixed case: D8 upper-cases the fiscal code and the country on input. */
function anyCase(text: string): fc.Arbitrary<string> {
  return fc
    .array(fc.boolean(), { minLength: text.length, maxLength: text.length })
    .map((lower) => [...text].map((c, i) => (lower[i] ? c.toLowerCase() : c)).join(''))
}

export interface Expected<T> {
  readonly input: T
  readonly value: T
}

export type AddressValue = { street: string; city: string; postal_code: string; country: string }

/** An address of D8: all four fields, lengths within bounds, an assigned country in any case. */
export const addressArbitrary: fc.Arbitrary<Expected<AddressValue>> = fc
  .record({
    street: freeTextArbitrary(200),
    city: freeTextArbitrary(100),
    postal: fc.stringMatching(/^[A-Za-z0-9-](?:[A-Za-z0-9 -]{0,14}[A-Za-z0-9-])?$/),
    country: fc.constantFrom(...ASSIGNED_COUNTRIES).chain(anyCase),
  })
  .map(({ street, city, postal, country }) => ({
    input: { street: street.input, city: city.input, postal_code: postal, country },
    value: {
      street: street.value,
      city: city.value,
      postal_code: postal,
      country: country.toUpperCase(),
    },
  }))

type MetadataValue = string | number | boolean

const metadataKey = fc
  .oneof(
    fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 64 }),
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }),
    fc.constantFrom('source', 'campaign_id', 'notes', ' padded ', 'hasOwnProperty', 'toString'),
  )
  .filter(
    (key) =>
      characters(key) >= 1 &&
      characters(key) <= 64 &&
      isTextByD8(key) &&
      !RESERVED_KEYS.includes(key),
  )

const metadataValue: fc.Arbitrary<Expected<MetadataValue>> = fc.oneof(
  freeTextArbitrary(1_000, 0).map(({ input, value }) => ({ input, value })),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => ({
    input: n,
    // JSON has no -0: it reads back as 0.
    value: JSON.parse(JSON.stringify(n)) as number,
  })),
  fc.integer().map((n) => ({ input: n, value: n })),
  fc.boolean().map((b) => ({ input: b, value: b })),
)

/** Flat metadata of D8: at most `maxKeys` keys of 1–64 characters, scalar values. */
export function metadataArbitrary(
  maxKeys = 50,
): fc.Arbitrary<Expected<Record<string, MetadataValue>>> {
  return fc
    .uniqueArray(fc.tuple(metadataKey, metadataValue), {
      maxLength: maxKeys,
      selector: ([key]) => key,
    })
    .map((entries) => ({
      input: Object.fromEntries(entries.map(([key, value]) => [key, value.input])),
      value: Object.fromEntries(entries.map(([key, value]) => [key, value.value])),
    }))
}

/** What a valid create body must read back as (the detail shape's writable fields). */
export interface BeneficiaryValue {
  first_name: string
  last_name: string
  email: string
  phone: string | null
  date_of_birth: string | null
  fiscal_code: string | null
  address: AddressValue | null
  metadata: Record<string, MetadataValue>
}

/** A valid create body and its expected value. */
export interface ValidBeneficiary {
  readonly body: Record<string, unknown>
  readonly value: BeneficiaryValue
}

/** How an optional field appears in a body: absent, `null`, or set. */
type Presence = 'absent' | 'null' | 'set'
const presence = fc.constantFrom<Presence>('absent', 'null', 'set', 'set')

/**
 * A valid create body: the three required fields, and each optional one absent, `null` or set.
 * When both `date_of_birth` and `fiscal_code` are set, the code is computed for that birth date
 * (and the person's names, sex and a municipality), with omocodia or without.
 */
export function validBeneficiaryArbitrary(
  today: string,
  options: { maxMetadataKeys?: number } = {},
): fc.Arbitrary<ValidBeneficiary> {
  return fc
    .record({
      first: personNameArbitrary,
      last: personNameArbitrary,
      email: emailArbitrary,
      phone: fc.tuple(presence, phoneArbitrary),
      dob: presence,
      code: fc.tuple(presence, fc.boolean()),
      person: personArbitrary(today),
      address: fc.tuple(presence, addressArbitrary),
      metadata: fc.tuple(presence, metadataArbitrary(options.maxMetadataKeys ?? 50)),
    })
    .map((g) => {
      const body: Record<string, unknown> = {
        first_name: g.first.input,
        last_name: g.last.input,
        email: g.email.input,
      }
      const value: BeneficiaryValue = {
        first_name: g.first.value,
        last_name: g.last.value,
        email: g.email.value,
        phone: null,
        date_of_birth: null,
        fiscal_code: null,
        address: null,
        metadata: {},
      }
      const optional = <K extends keyof BeneficiaryValue>(
        field: K,
        how: Presence,
        input: unknown,
        expected: BeneficiaryValue[K],
      ): void => {
        if (how === 'absent') return
        body[field] = how === 'null' ? null : input
        if (how === 'set') value[field] = expected
      }
      optional('phone', g.phone[0], g.phone[1].input, g.phone[1].value)
      optional('date_of_birth', g.dob, birthDateOf(g.person), birthDateOf(g.person))
      const code = fiscalCode(g.person)
      optional('fiscal_code', g.code[0], g.code[1] ? code.toLowerCase() : code, code)
      optional('address', g.address[0], g.address[1].input, g.address[1].value)
      optional('metadata', g.metadata[0], g.metadata[1].input, g.metadata[1].value)
      return { body, value }
    })
}
