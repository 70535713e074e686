// Which outbox names are temporary, which folders name recipients, and which entry a
// path belongs to. Pure functions: the rules the user reads about in the docs.

const TEMP_SUFFIXES = ['~', '.swp', '.swo', '.swx', '.part', '.tmp', '.crdownload']

/**
 * Temporary names never send: hidden dot files (rsync's `.name.XXXXXX`, `.DS_Store`),
 * and what editors and browsers write before renaming (`~`, `.swp`, `.part`, `.tmp`,
 * `.crdownload`). At the top level such an entry waits until renamed; inside a folder
 * entry it is left out of the transfer (but while open it keeps the folder waiting).
 */
export function isTemporaryName(name: string): boolean {
  if (name.startsWith('.')) return true
  const lower = name.toLowerCase()
  return TEMP_SUFFIXES.some((s) => lower.endsWith(s))
}

const EMAIL = /^[^\s@,]+@[^\s@,]+\.[^\s@,]+$/

export function isEmailAddress(text: string): boolean {
  return EMAIL.test(text)
}

/**
 * The recipients a top-level folder name stands for, or null when it is an ordinary
 * folder. Rule: the name is a comma-separated list, every part (trimmed) is an e-mail
 * address or one of the configured contact group names (case-insensitive), and at
 * least one part is present. "Project X" is an ordinary folder unless a contact group
 * of that name is configured.
 */
export function recipientsOf(folderName: string, groups: readonly string[]): string[] | null {
  if (isTemporaryName(folderName)) return null
  const parts = folderName.split(',').map((p) => p.trim())
  if (parts.length === 0 || parts.some((p) => p === '')) return null
  const known = new Map(groups.map((g) => [g.trim().toLowerCase(), g.trim()]))
  const out: string[] = []
  for (const p of parts) {
    if (isEmailAddress(p)) out.push(p)
    else if (known.has(p.toLowerCase())) out.push(known.get(p.toLowerCase()) as string)
    else return null
  }
  return out
}

/** "/a/b" → ["a", "b"]; "/" → []. Throws on "." / ".." / empty components. */
export function splitPath(p: string): string[] {
  if (!p.startsWith('/')) throw new Error(`not an absolute outbox path: ${p}`)
  const parts = p.split('/').filter((c) => c !== '')
  for (const c of parts) if (c === '.' || c === '..' || c.includes('\0')) throw new Error(`bad path component in ${p}`)
  return parts
}

/** True when `p` is `base` or lies inside it. */
export function isWithin(p: string, base: string): boolean {
  if (base === '/') return true
  return p === base || p.startsWith(base + '/')
}

export function basename(p: string): string {
  const parts = splitPath(p)
  return parts[parts.length - 1] ?? ''
}
