import type { PageLinks, PageMeta } from './shapes.js'

/** Query parameters a page link carries, in the fixed order links write them (D18). */
export type LinkParams = ReadonlyArray<readonly [name: string, value: string | undefined]>

/**
 * `meta` and `links` of a paged response (specification 4.3, D18). Links are paths under `path`
 * (which already starts with the base path) and carry `page`, `per_page` and then every entry of
 * `params` that has a value, in that order, URL-encoded. With no results `total_pages` is 0 and
 * `first`/`last` point at page 1.
 */
export function pageOf(
  path: string,
  page: number,
  perPage: number,
  total: number,
  params: LinkParams = [],
): { meta: PageMeta; links: PageLinks } {
  const totalPages = Math.ceil(total / perPage)
  const lastPage = Math.max(totalPages, 1)
  let rest = ''
  for (const [name, value] of params) {
    if (value !== undefined) rest += `&${name}=${encodeURIComponent(value)}`
  }
  const link = (n: number) => `${path}?page=${n}&per_page=${perPage}${rest}`
  return {
    meta: { current_page: page, total_pages: totalPages, total_count: total, per_page: perPage },
    links: {
      first: link(1),
      last: link(lastPage),
      prev: page > 1 ? link(Math.min(page - 1, lastPage)) : null,
      next: page < totalPages ? link(page + 1) : null,
    },
  }
}
