// The benchmark's "typical peer": the same /v3 routes and response shapes, written by hand the way
// an engineer would with the most popular fast framework. Fastify with JSON schemas for bodies,
// queries and responses, one straightforward table (better-sqlite3, or PostgreSQL through pg),
// jose verifying an HS256 token on every request, LIMIT/OFFSET with COUNT(*), LIKE (ILIKE on
// PostgreSQL) search, pino request logging. Deliberately ordinary: the baseline a user would
// otherwise pick, not a straw man.
//
// Usage: node bench/peer/server.mjs --db bench/.data/peer.db --port 4200
//        node bench/peer/server.mjs --database-url postgres://…/db?options=-csearch_path%3Dpeer
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { parseArgs } from 'node:util'
import Fastify from 'fastify'
import { SignJWT, jwtVerify } from 'jose'
import { created, detail, idParams, page, writable } from './schemas.mjs'

const { values } = parseArgs({
  options: {
    db: { type: 'string', default: 'peer.db' },
    'database-url': { type: 'string' },
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: '4200' },
    'log-level': { type: 'string', default: 'info' },
  },
})

const ISSUER = 'peer'
const AUDIENCE = 'peer'
const jwtSecret = process.env.PEER_JWT_SECRET
  ? new TextEncoder().encode(process.env.PEER_JWT_SECRET)
  : randomBytes(32)

const db =
  values['database-url'] === undefined
    ? (await import('./sqlite-store.mjs')).openSqliteStore(values.db)
    : await (await import('./pg-store.mjs')).openPgStore(values['database-url'])

function problem(reply, code, error, message) {
  return reply.code(code).send({ error, message, code })
}

function toDetail(row) {
  return {
    id: row.id,
    first_name: row.first_name,
    last_name: row.last_name,
    email: row.email,
    phone: row.phone,
    date_of_birth: row.date_of_birth,
    fiscal_code: row.fiscal_code,
    address: row.address === null ? null : JSON.parse(row.address),
    status: row.status,
    metadata: JSON.parse(row.metadata),
    created_at: row.created_at,
    updated_at: row.updated_at,
  }
}

const app = Fastify({ logger: { level: values['log-level'] } })

app.setErrorHandler((error, request, reply) => {
  if (error.validation) {
    return reply.code(422).send({
      error: 'validation_failed',
      message: 'The request is invalid.',
      code: 422,
      details: error.validation.map((issue) => ({
        field: issue.instancePath.slice(1).replaceAll('/', '.') || issue.params.missingProperty,
        message: issue.message,
      })),
    })
  }
  if (db.isUniqueViolation(error)) {
    return reply.code(422).send({
      error: 'validation_failed',
      message: 'The request is invalid.',
      code: 422,
      details: [{ field: 'fiscal_code', message: 'is already registered' }],
    })
  }
  if (error.statusCode && error.statusCode < 500) {
    return problem(reply, error.statusCode, 'bad_request', error.message)
  }
  request.log.error(error)
  return problem(reply, 500, 'internal_error', 'Something went wrong.')
})

app.addHook('onRequest', async (request, reply) => {
  if (request.url.startsWith('/v3/auth/') || request.url === '/healthz') return
  const header = request.headers.authorization
  if (!header || !header.startsWith('Bearer ')) {
    return problem(reply, 401, 'invalid_token', 'A bearer token is required.')
  }
  try {
    const { payload } = await jwtVerify(header.slice(7), jwtSecret, {
      algorithms: ['HS256'],
      issuer: ISSUER,
      audience: AUDIENCE,
    })
    request.user = payload
  } catch (error) {
    const expired = error.code === 'ERR_JWT_EXPIRED'
    return problem(
      reply,
      401,
      expired ? 'token_expired' : 'invalid_token',
      'The token is not valid.',
    )
  }
})

function requireScope(scope) {
  return async (request, reply) => {
    if (!String(request.user.scope).split(' ').includes(scope)) {
      return problem(reply, 403, 'insufficient_scope', `The token lacks the ${scope} scope.`)
    }
  }
}

app.post(
  '/v3/auth/login',
  {
    schema: {
      body: {
        type: 'object',
        required: ['client_id', 'client_secret'],
        properties: { client_id: { type: 'string' }, client_secret: { type: 'string' } },
      },
    },
  },
  async (request, reply) => {
    const { client_id, client_secret } = request.body
    const client = await db.findClient(client_id)
    const presented = createHash('sha256').update(client_secret).digest()
    const stored = client ? Buffer.from(client.secret_hash, 'hex') : Buffer.alloc(32)
    if (!client || !timingSafeEqual(presented, stored)) {
      return problem(reply, 401, 'invalid_credentials', 'Invalid client credentials.')
    }
    const accessToken = await new SignJWT({ scope: client.scopes })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setSubject(client.id)
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(jwtSecret)
    return {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token: randomBytes(32).toString('base64url'),
      scope: client.scopes,
    }
  },
)

app.get(
  '/v3/beneficiaries',
  {
    preHandler: requireScope('read'),
    schema: {
      querystring: {
        type: 'object',
        properties: {
          page: { type: 'integer', minimum: 1, default: 1 },
          per_page: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
          search: { type: 'string', maxLength: 100 },
          status: { type: 'string', enum: ['active', 'inactive', 'pending'] },
          created_from: { type: 'string', format: 'date' },
          created_to: { type: 'string', format: 'date' },
        },
      },
      response: { 200: page },
    },
  },
  async (request) => {
    const { page, per_page, search, status, created_from, created_to } = request.query
    const where = []
    const params = []
    const next = (value) => {
      params.push(value)
      return db.placeholder(params.length)
    }
    if (search) {
      const prefix = `${search}%`
      where.push(`(first_name ${db.like} ${next(prefix)} OR last_name ${db.like} ${next(prefix)})`)
    }
    if (status) where.push(`status = ${next(status)}`)
    if (created_from) where.push(`created_at >= ${next(created_from)}`)
    if (created_to) where.push(`created_at <= ${next(`${created_to}T23:59:59.999Z`)}`)
    const whereSql = where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''
    const total = await db.count(whereSql, params)
    const data = await db.page(whereSql, params, per_page, (page - 1) * per_page)

    const totalPages = Math.ceil(total / per_page)
    const link = (n) => {
      const query = new URLSearchParams()
      query.set('page', String(n))
      query.set('per_page', String(per_page))
      if (search) query.set('search', search)
      if (status) query.set('status', status)
      if (created_from) query.set('created_from', created_from)
      if (created_to) query.set('created_to', created_to)
      return `/v3/beneficiaries?${query}`
    }
    return {
      data,
      meta: { current_page: page, total_pages: totalPages, total_count: total, per_page },
      links: {
        first: link(1),
        last: link(Math.max(totalPages, 1)),
        prev: page > 1 ? link(page - 1) : null,
        next: page < totalPages ? link(page + 1) : null,
      },
    }
  },
)

app.get(
  '/v3/beneficiaries/:id',
  { preHandler: requireScope('read'), schema: { params: idParams, response: { 200: detail } } },
  async (request, reply) => {
    const row = await db.findById(request.params.id)
    if (!row) return problem(reply, 404, 'not_found', 'The beneficiary was not found.')
    return toDetail(row)
  },
)

app.post(
  '/v3/beneficiaries',
  {
    preHandler: requireScope('write'),
    schema: {
      body: {
        type: 'object',
        additionalProperties: false,
        required: ['first_name', 'last_name', 'email'],
        properties: writable,
      },
      response: { 201: created },
    },
  },
  async (request, reply) => {
    const body = request.body
    const now = new Date().toISOString()
    const id = await db.insert({
      first_name: body.first_name,
      last_name: body.last_name,
      email: body.email,
      phone: body.phone ?? null,
      date_of_birth: body.date_of_birth ?? null,
      fiscal_code: body.fiscal_code ?? null,
      address: body.address ? JSON.stringify(body.address) : null,
      metadata: JSON.stringify(body.metadata ?? {}),
      created_at: now,
      updated_at: now,
    })
    return reply.code(201).send({
      id,
      first_name: body.first_name,
      last_name: body.last_name,
      email: body.email,
      status: 'pending',
      created_at: now,
    })
  },
)

app.put(
  '/v3/beneficiaries/:id',
  {
    preHandler: requireScope('write'),
    schema: {
      params: idParams,
      body: { type: 'object', additionalProperties: false, properties: writable },
      response: { 200: detail },
    },
  },
  async (request, reply) => {
    const row = await db.findById(request.params.id)
    if (!row) return problem(reply, 404, 'not_found', 'The beneficiary was not found.')
    const current = toDetail(row)
    const next = { ...current, ...request.body, updated_at: new Date().toISOString() }
    await db.update({
      id: current.id,
      first_name: next.first_name,
      last_name: next.last_name,
      email: next.email,
      phone: next.phone,
      date_of_birth: next.date_of_birth,
      fiscal_code: next.fiscal_code,
      address: next.address ? JSON.stringify(next.address) : null,
      metadata: JSON.stringify(next.metadata),
      updated_at: next.updated_at,
    })
    return next
  },
)

app.get('/healthz', async () => ({ status: 'ok' }))

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    app
      .close()
      .then(() => db.close())
      .finally(() => process.exit(0))
  })
}

await app.listen({ host: values.host, port: Number(values.port) })
