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
// Names over 255 UTF-8 bytes keep their extension and lose the end of their stem, which is
// marked with "…~" and the first 8 hex digits of the SHA-256 of the whole (mapped) name:
// "<start of the stem>…~1a2b3c4d.pdf". Two long names that differ anywhere, not only in
// their first 255 bytes, so stay apart once cut. Cuts fall between code points, never
// inside one. Collisions within one folder get " (2)", " (3)", ... before the extension
// (after the mark of a cut name, and a name the number makes too long is cut and marked
// as above), in a stable order decided by the caller: the same list gives the same names.
// The mapping need not be reversible: lookups go through each folder's name table.
import { hash } from 'node:crypto'

export const NAME_MAX_BYTES = 255
/** What a name shows for "/" (U+2215 DIVISION SLASH). */
export const SLASH_STAND_IN = '∕'

const ELLIPSIS = '…'
/** Hex digits of the SHA-256 a cut name carries: enough that long names rarely meet once cut. */
const MARK_HEX_DIGITS = 8
/** An extension worth keeping when shortening: short, no dots or blanks in it. */
const EXTENSION = /\.[^.\s]{1,16}$/u

export function byteLength(name: string): number {
  return Buffer.byteLength(name, 'utf8')
}

/** UTF-8 bytes of one code point; a lone surrogate half is written as U+FFFD, 3 bytes. */
function utf8Size(cp: number): number {
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4
}

/** A character mapCharacters changes: "/", C0, DEL, C1, or half of a surrogate pair alone. */
const MAPPED = /[\u0000-\u001f\u007f-\u009f/]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/** Maps the characters a name may not hold; leaves the length alone. */
export function mapCharacters(raw: string, slash = SLASH_STAND_IN): string {
  // Most names need nothing: a transfer of many files is named without copying each.
  if (!MAPPED.test(raw)) return raw
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
  const bytes = byteLength(text)
  if (bytes <= maxBytes) return text
  // As many bytes as code units: all ASCII, one byte each.
  if (bytes === text.length) return text.slice(0, maxBytes)
  let used = 0
  let end = 0
  for (const ch of text) {
    used += utf8Size(ch.codePointAt(0)!)
    if (used > maxBytes) break
    end += ch.length
  }
  return text.slice(0, end)
}

/** What a name cut short carries where its stem ends: "…~" and the start of the SHA-256 of `name`. */
function cutMark(name: string): string {
  return `${ELLIPSIS}~${hash('sha256', name, 'hex').slice(0, MARK_HEX_DIGITS)}`
}

/** `head` shortened so that `head + mark + tail` fits maxBytes; `mark` and `tail` are kept whole. */
function cutWithMark(head: string, mark: string, tail: string, maxBytes: number): string {
  const budget = maxBytes - byteLength(mark) - byteLength(tail)
  if (budget < 1) {
    // The tail alone is too long (a giant id or extension): the whole name is cut instead.
    return truncateBytes(head + tail, maxBytes - byteLength(mark)) + mark
  }
  return truncateBytes(head, budget) + mark + tail
}

/** `stem + tail` within maxBytes, shortening the stem (marked "…") if needed; tail is kept. */
function fitWithTail(stem: string, tail: string, maxBytes: number): string {
  if (byteLength(stem) + byteLength(tail) <= maxBytes) return stem + tail
  return cutWithMark(stem, ELLIPSIS, tail, maxBytes)
}

/**
 * The text a name typed on the mount stands for: its "∕" are read as "/", since that is how
 * every name here shows one (a subject copied from a folder name means the subject).
 */
export function textOfName(name: string): string {
  return name.replaceAll(SLASH_STAND_IN, '/')
}

/** The end of a stem that a cut left: "…~" and 8 hex digits. */
const CUT_MARK = new RegExp(`${ELLIPSIS}~[0-9a-f]{${MARK_HEX_DIGITS}}$`, 'u')

/**
 * Shortens a mapped name to maxBytes, keeping its extension; the stem's end gives way to
 * the mark of the whole name, so names that differ only past the cut stay apart.
 */
export function fitName(name: string, maxBytes = NAME_MAX_BYTES): string {
  if (byteLength(name) <= maxBytes) return name
  const [stem, ext] = splitExtension(name)
  return cutWithMark(stem, cutMark(name), ext, maxBytes)
}

/**
 * `name` with " (n)" before its extension, still within maxBytes. When the number makes it
 * too long, the stem is cut (an earlier mark dropped) and marked with the whole of `name`:
 * the numbered forms of two names that share their start do not meet.
 */
export function withSuffix(name: string, n: number, maxBytes = NAME_MAX_BYTES): string {
  return numbering(name, maxBytes)(n)
}

/** withSuffix for one name and any number: the name is split, and hashed if need be, once. */
function numbering(name: string, maxBytes = NAME_MAX_BYTES): (n: number) => string {
  const [stem, ext] = splitExtension(name)
  const stemBytes = byteLength(stem)
  let cut: { head: string; mark: string } | undefined
  return (n) => {
    const tail = ` (${n})${ext}`
    if (stemBytes + byteLength(tail) <= maxBytes) return stem + tail
    cut ??= { head: stem.replace(CUT_MARK, ''), mark: cutMark(name) }
    return cutWithMark(cut.head, cut.mark, tail, maxBytes)
  }
}

/**
 * Unique names for one folder. `names` come in the caller's stable order; the first holder
 * of a name keeps it (so do names already reserved, which always win), the others get
 * " (2)", " (3)", ... skipping any name already taken. Same input, same output.
 *
 * One pass: each name remembers the next number to try. Every number below it was taken
 * when it was passed, and a taken name stays taken, so no number is tried twice and the
 * names come out as trying " (2)", " (3)", ... afresh for each would give them. A sender
 * cannot make this slow: numbered names that would be cut carry their name's mark, so two
 * names share candidates only if their marks agree.
 */
export function disambiguate(names: readonly string[], reserved: readonly string[] = []): string[] {
  const taken = new Set<string>(reserved)
  const first = names.map((name) => {
    if (taken.has(name)) return false
    taken.add(name)
    return true
  })
  const next = new Map<string, { n: number; numbered: (n: number) => string }>()
  return names.map((name, i) => {
    if (first[i]) return name
    let numbers = next.get(name)
    if (!numbers) next.set(name, (numbers = { n: 2, numbered: numbering(name) }))
    let candidate = numbers.numbered(numbers.n)
    while (taken.has(candidate)) candidate = numbers.numbered(++numbers.n)
    numbers.n++
    taken.add(candidate)
    return candidate
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
