import type { BeneficiaryListItem, Paged } from '../core/shapes.js'

/** Characters `JSON.stringify` escapes in a string (and surrogates, which it may escape). */
const NEEDS_ESCAPING = /["\\\u0000-\u001f\ud800-\udfff]/

function string(value: string): string {
  return NEEDS_ESCAPING.test(value) ? JSON.stringify(value) : `"${value}"`
}

function nullable(value: string | null): string {
  return value === null ? 'null' : string(value)
}

/**
 * The body of a list page: exactly `JSON.stringify(page)` (a property test holds it to that),
 * written from the known shape instead of walking the objects. A page of 20 costs about half of
 * `JSON.stringify`'s time, which was the largest piece of a list request outside SQLite.
 */
export function listPageJson(page: Paged<BeneficiaryListItem>): string {
  let body = '{"data":['
  const items = page.data
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!
    if (i > 0) body += ','
    body +=
      `{"id":${item.id},"first_name":${string(item.first_name)},` +
      `"last_name":${string(item.last_name)},"email":${string(item.email)},` +
      `"phone":${nullable(item.phone)},"status":${string(item.status)},` +
      `"created_at":${string(item.created_at)},"updated_at":${string(item.updated_at)}}`
  }
  const { meta, links } = page
  return (
    `${body}],"meta":{"current_page":${meta.current_page},"total_pages":${meta.total_pages},` +
    `"total_count":${meta.total_count},"per_page":${meta.per_page}},` +
    `"links":{"first":${string(links.first)},"last":${string(links.last)},` +
    `"prev":${nullable(links.prev)},"next":${nullable(links.next)}}}`
  )
}
