// Safe names: every name the service gives (a subject, a file name, an id) becomes one
// a POSIX file system accepts and a person can read, and no two entries of one folder
// end up alike. Pure functions only.
//
// The mapping (one code point at a time):
//   "/"                      → "∕" (U+2215 DIVISION SLASH)      (only in subjects and ids: in a
//                                                                 file name "/" makes folders)
//   U+0000..U+001F (NUL, \n) → U+2400..U+241F control pictures ("␀", "␊", ...)
//   U+007F (DEL)             → "␡" (U+2421)
//   U+0080..U+009F (C1)      → "�" (U+FFFD)
//   lone surrogate halves    → "�" (U+FFFD)   (they have no UTF-8 form)
//   a whole name "." / ".."  → "．" / "．．" (U+FF0E FULLWIDTH FULL STOP)
//   an empty name            → "(unnamed)"
// Names over 255 UTF-8 bytes keep their extension and lose the end of their stem, marked
// with "…"; cuts fall between code points, never inside one. Collisions within one folder
// get " (2)", " (3)", ... before the extension, in a stable order decided by the caller.
// The mapping need not be reversible: lookups go through each folder's name table.

export const NAME_MAX_BYTES = 255
/** What a name shows for "/" (U+2215 DIVISION SLASH). */
export const SLASH_STAND_IN = '∕'

const ELLIPSIS = '…'
/** An extension worth keeping when shortening: short, no dots or blanks in it. */
const EXTENSION = /\.[^.\s]{1,16}$/u

export function byteLength(name: string): number {
  return Buffer.byteLength(name, 'utf8')
}

/** Maps the characters a name may not hold; leaves the length alone. */
export function mapCharacters(raw: string, slash = SLASH_STAND_IN): string {
  let out = ''
  for (const ch of raw) {
    const cp = ch.codePointAt(0)!
    if (cp === 0x2f) out += slash
    else if (cp < 0x20) out += String.fromCodePoint(0x2400 + cp)
    else if (cp === 0x7f) out += '\u2421'
    else if (cp >= 0x80 && cp <= 0x9f) out += '\uFFFD'
    else if (cp >= 0xd800 && cp <= 0xdfff) out += '\uFFFD'
    else out += ch
  }
  return out
}

/** One path component: mapped, never ".", ".." or empty, at most 255 bytes. */
export function safeName(raw: string): string {
  const mapped = mapCharacters(raw)
  if (mapped === '') return '(unnamed)'
  if (mapped === '.') return '．'
  if (mapped === '..') return '．．'
  return fitName(mapped)
}

export function splitExtension(name: string): [stem: string, ext: string] {
  const match = EXTENSION.exec(name)
  // A dot file (".bashrc") has no extension: its stem would be empty.
  if (!match || match.index === 0) return [name, '']
  return [name.slice(0, match.index), match[0]]
}

/** The longest prefix of `text` (whole code points) of at most `maxBytes` UTF-8 bytes. */
export function truncateBytes(text: string, maxBytes: number): string {
  if (byteLength(text) <= maxBytes) return text
  let out = ''
  let used = 0
  for (const ch of text) {
    const size = byteLength(ch)
    if (used + size > maxBytes) break
    out += ch
    used += size
  }
  return out
}

/** `stem + tail` within maxBytes, shortening the stem (marked "…") if needed; tail is kept. */
function fitWithTail(stem: string, tail: string, maxBytes: number): string {
  if (byteLength(stem) + byteLength(tail) <= maxBytes) return stem + tail
  const budget = maxBytes - byteLength(tail) - byteLength(ELLIPSIS)
  if (budget < 1) {
    // The tail alone is too long (a giant extension): shorten the whole name instead.
    return truncateBytes(stem + tail, maxBytes - byteLength(ELLIPSIS)) + ELLIPSIS
  }
  return truncateBytes(stem, budget) + ELLIPSIS + tail
}

/**
 * The text a name typed on the mount stands for: its "∕" are read as "/", since that is how
 * every name here shows one (a subject copied from a folder name means the subject).
 */
export function textOfName(name: string): string {
  return name.replaceAll(SLASH_STAND_IN, '/')
}

/** Shortens a mapped name to maxBytes, keeping its extension. */
export function fitName(name: string, maxBytes = NAME_MAX_BYTES): string {
  if (byteLength(name) <= maxBytes) return name
  const [stem, ext] = splitExtension(name)
  return fitWithTail(stem, ext, maxBytes)
}

/** `name` with " (n)" before its extension, still within maxBytes. */
export function withSuffix(name: string, n: number, maxBytes = NAME_MAX_BYTES): string {
  const [stem, ext] = splitExtension(name)
  return fitWithTail(stem, ` (${n})${ext}`, maxBytes)
}

/**
 * Unique names for one folder. `names` come in the caller's stable order; the first holder
 * of a name keeps it (so do names already reserved, which always win), the others get
 * " (2)", " (3)", ... skipping any name already taken. Same input, same output.
 */
export function disambiguate(names: readonly string[], reserved: readonly string[] = []): string[] {
  const taken = new Set<string>(reserved)
  const result: (string | undefined)[] = names.map((name) => {
    if (taken.has(name)) return undefined
    taken.add(name)
    return name
  })
  return names.map((name, i) => {
    const kept = result[i]
    if (kept !== undefined) return kept
    for (let n = 2; ; n++) {
      const candidate = withSuffix(name, n)
      if (!taken.has(candidate)) {
        taken.add(candidate)
        return candidate
      }
    }
  })
}

/** "YYYY-MM-DD" of a unix ms time, in UTC; "undated" when there is none. */
export function utcDate(ms: number | null | undefined): string {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms <= 0) return 'undated'
  const date = new Date(ms)
  return Number.isNaN(date.getTime()) ? 'undated' : date.toISOString().slice(0, 10)
}

/**
 * A transfer's folder: "<YYYY-MM-DD> <subject> (<id>)". The subject is shortened first so the
 * id, which makes the name unique, survives.
 */
export function transferFolderName(sentdate: number | null | undefined, subject: string | null | undefined, id: string): string {
  const title = mapCharacters(subject?.trim() ? subject.trim() : '(no subject)')
  const head = `${utcDate(sentdate)} `
  const tail = ` (${mapCharacters(id)})`
  if (byteLength(head) + byteLength(tail) + 8 > NAME_MAX_BYTES) {
    // Only an absurd id gets here; the name is still valid, just shortened at its end.
    return fitName(head + title + tail)
  }
  return head + fitWithTail(title, tail, NAME_MAX_BYTES - byteLength(head))
}

/** True for a name that is a valid, visible POSIX file name as this module promises. */
export function isSafeName(name: string): boolean {
  if (name === '' || name === '.' || name === '..') return false
  if (byteLength(name) > NAME_MAX_BYTES) return false
  for (const ch of name) {
    const cp = ch.codePointAt(0)!
    if (cp === 0x2f || cp < 0x20 || cp === 0x7f || (cp >= 0xd800 && cp <= 0xdfff)) return false
  }
  return true
}
