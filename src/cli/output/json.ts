// --json output: one JSON document on stdout, nothing else there (messages go to stderr),
// so `transferfs info ID --json | jq .` always works.

export function writeJson(value: unknown, out: NodeJS.WritableStream = process.stdout): void {
  out.write(`${JSON.stringify(value, null, 2)}\n`)
}

/** A transfer as commands show it: everything the service said but its key (a secret). */
export function publicTransfer<T extends { key?: string | null }>(t: T): Omit<T, 'key'> {
  const { key: _key, ...rest } = t
  return rest
}
