import Type from 'typebox'
import type { Static, TSchema } from 'typebox'
import Format from 'typebox/format'
import { BENEFICIARY_STATUSES } from '../beneficiary-fields.js'
import { COUNTRY_CODES } from './country-codes.js'
import { isFiscalCode } from './fiscal-code.js'

/**
 * Name of the custom string format for an Italian codice fiscale, registered with TypeBox when
 * this module loads. OpenAPI readers that do not know it treat it as a plain string.
 */
export const FISCAL_CODE_FORMAT = 'codice-fiscale'
Format.Set(FISCAL_CODE_FORMAT, isFiscalCode)

/** `schema` or `null`. */
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()])

/** An instant, as the API writes it. */
export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC.' })

/** A beneficiary's status (specification section 3). */
export const Status = Type.Enum(BENEFICIARY_STATUSES)

/** Names reserved anywhere in a body, so no input can reach an object's prototype (D8). */
export const RESERVED_KEYS = ['__proto__', 'constructor', 'prototype'] as const

const TEXT =
  'Trimmed and NFC-normalised; control characters are refused, and so are invisible and formatting characters (zero-width spaces, bidirectional overrides, the byte order mark, tags, variation selectors, line separators, private use, noncharacters such as U+FFFF); a zero-width joiner or non-joiner only between letters of a script that spells with it.'

/** `first_name` and `last_name` (D8). */
export const PersonName = Type.String({
  minLength: 1,
  maxLength: 100,
  description: `1 to 100 characters, at least one of them a letter. ${TEXT}`,
})

// RFC 5322's atext, the characters of a dot-atom's atoms.
const ATOM = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
// RFC 1035's letters, digits and hyphens, neither first nor last.
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?'
// The top-level label starts with a letter: `a@127.0.0.1` is not an address.
const TOP_LABEL = '[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?'

/**
 * `email` (D8), stored as given. The local part a dot-atom of at most 64 characters (RFC 5321
 * 4.5.3.1.1), the domain two or more labels of letters, digits and hyphens. Each piece matches
 * in one way only, so the pattern runs in linear time on any input.
 */
export const Email = Type.String({
  maxLength: 254,
  pattern: `^(?=[^@]{1,64}@)${ATOM}(?:\\.${ATOM})*@(?:${LABEL}\\.)+${TOP_LABEL}$`,
  description:
    "A dot-atom local part of at most 64 characters (ASCII letters, digits and !#$%&'*+/=?^_`{|}~-, dots only between them), @, and a domain of two or more labels of ASCII letters, digits and hyphens, none starting or ending with a hyphen (an internationalised domain in its xn-- form); at most 254 characters. Stored as given.",
})

/** `phone` (D8), after spaces, dashes, dots and parentheses are removed. */
export const Phone = Type.String({
  pattern: '^\\+?[0-9]{6,15}$',
  description:
    '6 to 15 digits, optionally after +. Spaces, dashes, dots and parentheses are removed on input.',
})

/** `date_of_birth` (D8). */
export const DateOfBirth = Type.String({
  format: 'date',
  description: 'A real calendar date YYYY-MM-DD, from 1900-01-01 to today.',
})

/** `fiscal_code` (D8). */
export const FiscalCode = Type.String({
  format: FISCAL_CODE_FORMAT,
  description:
    'Italian codice fiscale, upper-cased on input, with a correct check character; its birth date must agree with date_of_birth. Unique.',
})

/** The address object (specification 2.2, D8): all four fields are required. */
export const Address = Type.Object(
  {
    street: Type.String({ minLength: 1, maxLength: 200 }),
    city: Type.String({ minLength: 1, maxLength: 100 }),
    postal_code: Type.String({ minLength: 1, maxLength: 16, pattern: '^[A-Za-z0-9 -]+$' }),
    country: Type.Enum(COUNTRY_CODES as readonly string[], {
      description: 'An assigned ISO 3166-1 alpha-2 code, upper-cased on input.',
    }),
  },
  { additionalProperties: false, description: TEXT },
)

/** The metadata object (D8): flat, at most 50 keys of 1–64 characters, scalar values. */
export const Metadata = Type.Record(
  Type.String(),
  Type.Union([Type.String({ maxLength: 1000 }), Type.Number(), Type.Boolean()]),
  {
    maxProperties: 50,
    propertyNames: { minLength: 1, maxLength: 64, not: { enum: [...RESERVED_KEYS] } },
    description: `Free-form flat object. String values: at most 1000 characters. ${TEXT} Keys are taken as given, and refused with the same characters.`,
  },
)

/**
 * Body of `POST /beneficiaries/{id}/status` (D14). `pending` passes validation but no
 * transition leads to it: the service answers `invalid_transition`.
 */
export const StatusBody = Type.Object(
  {
    status: Status,
    reason: Type.Optional(Type.String({ maxLength: 500, description: TEXT })),
  },
  { additionalProperties: false },
)

/** What `setStatus` takes (D14), derived from the schema. */
export type StatusBody = Static<typeof StatusBody>
