/**
 * What the scale-out example shows through the balancer: the write limit counted once for all
 * instances, a logout honoured by each of them, and the auth limit keyed on the real client
 * address whatever X-Forwarded-For the client sends. Each outcome is checked: a broken promise
 * throws.
 */
import assert from 'node:assert/strict'
import type { Answer, BalancerClient } from './balancer-client.js'

/** The client the example provisioned. */
export interface Credentials {
  readonly client_id: string
  readonly client_secret: string
}

const API = '/v3'

/** Runs the demonstration; `print` gets one line per step. */
export async function demonstrate(
  client: BalancerClient,
  neighbour: BalancerClient,
  credentials: Credentials,
  print: (line: string) => void,
): Promise<void> {
  const login = await client.send('POST', `${API}/auth/login`, { body: credentials })
  expect(login, 200)
  const token = String(login.json!['access_token'])
  const refreshToken = String(login.json!['refresh_token'])
  print(`client ${client.address} logged in through the balancer (answered by ${login.servedBy})`)

  // The write limit (10 a minute per client) is one bucket in Redis, whichever instance counts.
  const servedBy = new Set<string>()
  for (let n = 1; n <= 10; n++) {
    const body = { first_name: 'Scale', last_name: `Out${n}`, email: `scale.out${n}@example.org` }
    const created = await client.send('POST', `${API}/beneficiaries`, { token, body })
    expect(created, 201)
    assert.equal(created.headers['x-ratelimit-remaining'], String(10 - n), 'one shared bucket')
    servedBy.add(created.servedBy)
    print(
      `write ${n}: 201 from ${created.servedBy}, ${created.headers['x-ratelimit-remaining']} left`,
    )
  }
  assert.equal(servedBy.size, 3, 'the balancer spread the writes over the three instances')
  const refused = await client.send('POST', `${API}/beneficiaries`, {
    token,
    body: { first_name: 'Scale', last_name: 'Out11', email: 'scale.out11@example.org' },
  })
  expect(refused, 429)
  print(
    `write 11: 429 from ${refused.servedBy}, retry after ${String(refused.json!['retry_after'])} s: ` +
      'the limit of 10 a minute holds across the three instances',
  )

  // A logout on one instance is honoured by all: revocations live in the database (D30).
  const logout = await client.send('POST', `${API}/auth/logout`, { token })
  expect(logout, 204)
  print(`logout: 204 from ${logout.servedBy}`)
  const refusedBy: string[] = []
  for (let n = 0; n < 3; n++) {
    const read = await client.send('GET', `${API}/beneficiaries?per_page=1`, { token })
    expect(read, 401)
    assert.equal(read.json!['error'], 'invalid_token')
    refusedBy.push(read.servedBy)
  }
  assert.equal(new Set(refusedBy).size, 3, 'each instance was asked')
  print(`the same token: 401 invalid_token from ${refusedBy.join(', ')}`)
  const refresh = await client.send('POST', `${API}/auth/refresh`, {
    body: { refresh_token: refreshToken },
  })
  expect(refresh, 401)
  print(`its refresh token: 401 from ${refresh.servedBy}`)

  // The auth limit (5 a minute per client address) keys on the address the balancer saw:
  // a forged X-Forwarded-For is replaced by the balancer, so it cannot open a new bucket.
  let forged = 0
  let limited: Answer | undefined
  while (limited === undefined) {
    const spoof = `203.0.113.${forged + 1}`
    const attempt = await client.send('POST', `${API}/auth/login`, {
      body: credentials,
      headers: { 'x-forwarded-for': spoof },
    })
    if (attempt.status === 429) limited = attempt
    else expect(attempt, 200)
    forged++
    assert.ok(forged <= 5, 'a forged X-Forwarded-For escaped the auth limit')
  }
  print(
    `${forged} logins with a forged X-Forwarded-For: the last got 429 from ${limited.servedBy}, ` +
      `since ${client.address} had used its 5 logins and refreshes of the minute`,
  )
  const other = await neighbour.send('POST', `${API}/auth/login`, { body: credentials })
  expect(other, 200)
  print(
    `client ${neighbour.address} logs in: 200 from ${other.servedBy} (the limit is per address)`,
  )
  await neighbour.send('POST', `${API}/auth/logout`, {
    token: String(other.json!['access_token']),
  })
}

function expect(answer: Answer, status: number): void {
  assert.equal(
    answer.status,
    status,
    `expected ${status}, got ${answer.status} from ${answer.servedBy}: ${JSON.stringify(answer.json)}`,
  )
}
