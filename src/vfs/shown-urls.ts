// The service's addresses as the mount shows them (`.transfer.json`, `link.url`, the
// `user.xdg.origin.url` attribute): without their query. A download or preview address
// carries the reader's `trackid` and, once a protected transfer is unlocked, a `token` that
// stands in for its password: whoever reads the address fetches the file without either,
// and keeps doing so after the mount is gone. The reads themselves use the addresses as the
// service gave them; only what is shown loses the query (and any fragment).

/** `url` without its query and fragment; anything that is not an http(s) address as it is. */
export function withoutQuery(url: string): string {
  if (!/^https?:\/\//i.test(url)) return url
  const cut = url.search(/[?#]/)
  return cut < 0 ? url : url.slice(0, cut)
}

/** `value` with every http(s) address in it (at any depth) stripped of its query. */
export function withoutQueries<T>(value: T): T {
  if (typeof value === 'string') return withoutQuery(value) as T
  if (Array.isArray(value)) return value.map(withoutQueries) as T
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [name, inner] of Object.entries(value)) out[name] = withoutQueries(inner)
    return out as T
  }
  return value
}
