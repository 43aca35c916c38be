// The peer's JSON schemas for Fastify: bodies, queries and responses, as an engineer writes them.

export const nullableString = { type: ['string', 'null'] }
export const address = {
  type: ['object', 'null'],
  additionalProperties: false,
  required: ['street', 'city', 'postal_code', 'country'],
  properties: {
    street: { type: 'string', minLength: 1, maxLength: 200 },
    city: { type: 'string', minLength: 1, maxLength: 100 },
    postal_code: { type: 'string', pattern: '^[A-Za-z0-9 -]{1,16}$' },
    country: { type: 'string', pattern: '^[A-Z]{2}$' },
  },
}
export const metadata = {
  type: 'object',
  maxProperties: 50,
  additionalProperties: { anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }] },
}
export const writable = {
  first_name: { type: 'string', minLength: 1, maxLength: 100 },
  last_name: { type: 'string', minLength: 1, maxLength: 100 },
  email: { type: 'string', format: 'email', maxLength: 254 },
  phone: { type: ['string', 'null'], pattern: '^\\+?[0-9 ().-]{6,20}$' },
  date_of_birth: { type: ['string', 'null'], format: 'date' },
  fiscal_code: { type: ['string', 'null'], pattern: '^[A-Za-z0-9]{16}$' },
  address,
  metadata,
}
export const listItem = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    first_name: { type: 'string' },
    last_name: { type: 'string' },
    email: { type: 'string' },
    phone: nullableString,
    status: { type: 'string' },
    created_at: { type: 'string' },
    updated_at: { type: 'string' },
  },
}
export const detail = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    first_name: { type: 'string' },
    last_name: { type: 'string' },
    email: { type: 'string' },
    phone: nullableString,
    date_of_birth: nullableString,
    fiscal_code: nullableString,
    address: {
      type: ['object', 'null'],
      properties: {
        street: { type: 'string' },
        city: { type: 'string' },
        postal_code: { type: 'string' },
        country: { type: 'string' },
      },
    },
    status: { type: 'string' },
    metadata: { type: 'object', additionalProperties: true },
    created_at: { type: 'string' },
    updated_at: { type: 'string' },
  },
}
export const created = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    first_name: { type: 'string' },
    last_name: { type: 'string' },
    email: { type: 'string' },
    status: { type: 'string' },
    created_at: { type: 'string' },
  },
}
export const page = {
  type: 'object',
  properties: {
    data: { type: 'array', items: listItem },
    meta: {
      type: 'object',
      properties: {
        current_page: { type: 'integer' },
        total_pages: { type: 'integer' },
        total_count: { type: 'integer' },
        per_page: { type: 'integer' },
      },
    },
    links: {
      type: 'object',
      properties: {
        first: { type: 'string' },
        last: { type: 'string' },
        prev: nullableString,
        next: nullableString,
      },
    },
  },
}
export const idParams = {
  type: 'object',
  properties: { id: { type: 'integer', minimum: 1 } },
}
