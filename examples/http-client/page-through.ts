/**
 * The example's use of the typed client: page through every beneficiary of a server by
 * `links.next`, and count what the client did on its own on the way (logins, refreshes, waits
 * for `Retry-After`). It imports the client by the package's name, as a host application does.
 */
import {
  BeneficiaryClient,
  type BeneficiaryClientOptions,
  type ClientEvent,
  type ListQueryInput,
} from 'beneficiary-service/client'

/** What paging through a list took. */
export interface PagingReport {
  /** Beneficiaries seen. */
  readonly count: number
  /** 429s (or 503s) the client waited out before sending the request again. */
  readonly waits: number
  /** Access tokens it renewed with its refresh token. */
  readonly refreshes: number
}

/**
 * Pages through every beneficiary matching `query` with a new client, printing every tenth
 * through `print`.
 */
export async function pageThrough(
  options: BeneficiaryClientOptions,
  query: ListQueryInput,
  print: (line: string) => void,
): Promise<PagingReport> {
  const events: ClientEvent[] = []
  const client = new BeneficiaryClient({
    ...options,
    onEvent: (event) => {
      events.push(event)
      options.onEvent?.(event)
    },
  })
  let count = 0
  for await (const beneficiary of client.listAll(query)) {
    if (count % 10 === 0) {
      print(`  #${beneficiary.id} ${beneficiary.last_name}, ${beneficiary.first_name}`)
    }
    count++
  }
  return {
    count,
    waits: events.filter((event) => event.type === 'retry').length,
    refreshes: events.filter((event) => event.type === 'token' && event.action === 'refresh')
      .length,
  }
}
