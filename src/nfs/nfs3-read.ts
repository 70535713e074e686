// The NFSv3 procedures that read the tree (RFC 1813): GETATTR, LOOKUP, ACCESS, READLINK,
// READ, READDIR, READDIRPLUS, FSSTAT, FSINFO and PATHCONF, each on the core as the FUSE
// adapter drives it.
import { bytesLength, giveBack, isBytes } from '../read/bytes.js'
import type { NodeAttr } from '../vfs/core.js'
import { FATTR3_BYTES, isDirectory, writeFattr, writePostOpAttr } from './attrs.js'
import { childPath, fileIdOf, parentPath } from './handles.js'
import type { Listing } from './listings.js'
import { NAME_MAX_BYTES } from '../vfs/names.js'
import { attrOf, attrOfHandle, attrOrNull, readHandle, readName, type NfsContext, type Procedure } from './procedure.js'
import { AUTH_UNIX, type Credential } from './rpc.js'
import { NFS3, NfsStatusError, statusOf } from './status.js'
import { opaqueSize } from './xdr.js'

/** Bytes of READ and WRITE the server takes in one call (FSINFO's rtmax and wtmax). */
export const MAX_IO_BYTES = 1024 * 1024
/** The preferred size of a READDIR reply. */
const DIR_PREF_BYTES = 64 * 1024
/** The largest file size this server gives. */
const MAX_FILE_SIZE = Number.MAX_SAFE_INTEGER

export const ACCESS3 = { READ: 0x1, LOOKUP: 0x2, MODIFY: 0x4, EXTEND: 0x8, DELETE: 0x10, EXECUTE: 0x20 } as const
/** FSINFO properties: symbolic links, the same pathconf everywhere, settable times. */
const FSF3_SYMLINK = 0x2
const FSF3_HOMOGENEOUS = 0x8
const FSF3_CANSETTIME = 0x10

const getattr: Procedure = async (r, cx) => {
  const p = readHandle(r, cx)
  const a = await attrOfHandle(cx, p)
  return (w) => writeFattr(w, p, a)
}

/** The entry `name` names in folder `dir` (with "." and ".."), its NFC form tried too: macOS sends names decomposed. */
async function lookupIn(cx: NfsContext, dir: string, name: string): Promise<{ path: string; attr: NodeAttr }> {
  if (name === '.') return { path: dir, attr: await attrOf(cx, dir) }
  if (name === '..') return { path: parentPath(dir), attr: await attrOf(cx, parentPath(dir)) }
  const p = childPath(dir, name)
  try {
    return { path: p, attr: await attrOf(cx, p) }
  } catch (err) {
    const composed = name.normalize('NFC')
    if (composed === name || statusOf(err) !== NFS3.NOENT) throw err
    const q = childPath(dir, composed)
    return { path: q, attr: await attrOf(cx, q) }
  }
}

const lookup: Procedure = async (r, cx) => {
  const dir = readHandle(r, cx)
  const name = readName(r)
  const dirAttr = await attrOfHandle(cx, dir)
  if (!isDirectory(dirAttr)) throw new NfsStatusError(NFS3.NOTDIR)
  const found = await lookupIn(cx, dir, name)
  return (w) => {
    w.opaque(cx.handles.handleOf(found.path))
    writePostOpAttr(w, found.path, found.attr)
    writePostOpAttr(w, dir, dirAttr)
  }
}

/** The rwx bits of `a` that apply to the caller: the owner's to the owner and to root, the others' to anyone else. */
function bitsFor(a: NodeAttr, cred: Credential): number {
  const uid = cred.flavor === AUTH_UNIX ? cred.uid : -1
  if (uid === 0) return ((a.mode >> 6) & 7) | 6 // root reads and writes, but runs only what is executable
  return uid === a.uid ? (a.mode >> 6) & 7 : a.mode & 7
}

/** ACCESS: what the caller's class may do by the modes shown, as the FUSE mount's default_permissions checks them. */
export function accessGranted(a: NodeAttr, cred: Credential, asked: number): number {
  const bits = bitsFor(a, cred)
  let granted = 0
  if (bits & 4) granted |= ACCESS3.READ
  if (isDirectory(a)) {
    if (bits & 1) granted |= ACCESS3.LOOKUP
    if (bits & 2) granted |= ACCESS3.MODIFY | ACCESS3.EXTEND | ACCESS3.DELETE
  } else {
    if (bits & 2) granted |= ACCESS3.MODIFY | ACCESS3.EXTEND
    if (bits & 1) granted |= ACCESS3.EXECUTE
  }
  return granted & asked
}

const access: Procedure = async (r, cx, cred) => {
  const p = readHandle(r, cx)
  const asked = r.uint32()
  const a = await attrOfHandle(cx, p)
  return (w) => {
    writePostOpAttr(w, p, a)
    w.uint32(accessGranted(a, cred, asked))
  }
}

const readlink: Procedure = async (r, cx) => {
  const p = readHandle(r, cx)
  const a = await attrOfHandle(cx, p)
  if (!cx.core.readlink) throw new NfsStatusError(NFS3.INVAL)
  const target = await cx.core.readlink(p)
  return (w) => {
    writePostOpAttr(w, p, a)
    w.string(target)
  }
}

const read: Procedure = async (r, cx) => {
  const p = readHandle(r, cx)
  const offset = r.uint64()
  const count = Math.min(r.uint32(), MAX_IO_BYTES)
  const a = await attrOfHandle(cx, p)
  if (isDirectory(a)) throw new NfsStatusError(NFS3.ISDIR)
  const bytes = count === 0 || offset >= a.size ? [] : await cx.reads.reading(p, (fh) => cx.core.read(p, fh, offset, count))
  if (!isBytes(bytes) || bytesLength(bytes) > count) throw new NfsStatusError(NFS3.IO)
  const n = bytesLength(bytes)
  return (w) => {
    try {
      writePostOpAttr(w, p, a)
      w.uint32(n).bool(offset + n >= a.size)
      w.opaqueParts(Buffer.isBuffer(bytes) ? [bytes] : bytes)
    } finally {
      giveBack(bytes)
    }
  }
}

/** One entry of a READDIR(PLUS) page. */
interface Entry {
  name: string
  path: string
  cookie: bigint
  /** Its attributes as the listing took them (READDIRPLUS), or null. */
  attr: NodeAttr | null
}

/** Bytes of a READDIR(PLUS) reply before its entries: status, dir attributes, verifier, list end, eof. */
const PAGE_OVERHEAD = 4 + 4 + FATTR3_BYTES + 8 + 4 + 4
/** An entry's fileid, name and cookie, with the word that says it follows. */
const entryBytes = (name: string): number => 4 + 8 + opaqueSize(Buffer.byteLength(name)) + 8

/**
 * An entry's cookie: 1 and 2 for "." and "..", then a 53-bit digest of its name (FNV-1a in two
 * lanes), so that a page resumes after the entry named, wherever the listing moved it: a
 * transfer that arrives at the top of `inbox/` between two pages shifts every position.
 */
function cookieOf(index: number, name: string): bigint {
  if (index < 2) return BigInt(index + 1)
  let a = 0x811c9dc5
  let b = 0x050c5d1f
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i)
    a = Math.imul(a ^ c, 0x01000193)
    b = Math.imul(b ^ c, 0x01000193) ^ (a >>> 15)
  }
  return BigInt((a >>> 0) + (b & 0x1fffff) * 2 ** 32) + 3n
}

/**
 * Each held listing's entries by cookie, made at its second page: a client pages a large folder
 * in many calls, each of which would otherwise hash every name before where it starts.
 */
const positions = new WeakMap<Listing, Map<bigint, number>>()

/** Where a page after `cookie` starts in `listing`; BAD_COOKIE when the entry it names is gone. */
function startAfter(listing: Listing, cookie: bigint): number {
  if (cookie <= 2n) return Number(cookie)
  let byCookie = positions.get(listing)
  if (!byCookie) {
    byCookie = new Map()
    for (let i = 2; i < listing.names.length; i++) {
      const c = cookieOf(i, listing.names[i] as string)
      if (!byCookie.has(c)) byCookie.set(c, i) // the first of two names that share a cookie, as a scan finds it
    }
    positions.set(listing, byCookie)
  }
  const at = byCookie.get(cookie)
  if (at === undefined) throw new NfsStatusError(NFS3.BAD_COOKIE)
  return at + 1
}

/** The path of a listing's entry `name` in `dir`. */
const entryPath = (dir: string, name: string): string => (name === '.' ? dir : name === '..' ? parentPath(dir) : childPath(dir, name))

/**
 * The listing a page is cut from: for a page after the first, the one its verifier names
 * (listings.ts); otherwise a new one: ".", "..", then the core's names, with their attributes
 * when `plus`.
 */
async function listingFor(cx: NfsContext, dir: string, cookie: bigint, verifier: Buffer, plus: boolean): Promise<Listing> {
  const held = cookie === 0n ? undefined : cx.listings.find(verifier, dir, plus)
  if (held) return held
  const names = ['.', '..', ...(await cx.core.readdir(dir))]
  const attrs = plus ? await Promise.all(names.map((name) => attrOrNull(cx, entryPath(dir, name)))) : undefined
  return cx.listings.hold(dir, names, attrs)
}

/**
 * The entries of `listing` after `cookie`, as many as fit. `fits` is told each entry's name and
 * path, and says whether it goes in.
 */
function page(listing: Listing, cookie: bigint, fits: (name: string, path: string) => boolean): { entries: Entry[]; eof: boolean } {
  const { names, dir } = listing
  const entries: Entry[] = []
  let i = startAfter(listing, cookie)
  for (; i < names.length; i++) {
    const name = names[i] as string
    const path = entryPath(dir, name)
    if (!fits(name, path)) break
    entries.push({ name, path, cookie: cookieOf(i, name), attr: listing.attrs?.[i] ?? null })
  }
  if (entries.length === 0 && i < names.length) throw new NfsStatusError(NFS3.TOOSMALL)
  return { entries, eof: i >= names.length }
}

const readdir: Procedure = async (r, cx) => {
  const dir = readHandle(r, cx)
  const cookie = r.bigUint64()
  const verifier = r.fixed(8)
  const count = r.uint32()
  const dirAttr = await attrOfHandle(cx, dir)
  if (!isDirectory(dirAttr)) throw new NfsStatusError(NFS3.NOTDIR)
  const listing = await listingFor(cx, dir, cookie, verifier, false)
  let used = PAGE_OVERHEAD
  const { entries, eof } = page(listing, cookie, (name) => (used += entryBytes(name)) <= count)
  return (w) => {
    writePostOpAttr(w, dir, dirAttr)
    w.fixed(listing.verifier)
    for (const e of entries) w.bool(true).uint64(fileIdOf(e.path)).string(e.name).uint64(e.cookie)
    w.bool(false).bool(eof)
  }
}

const readdirplus: Procedure = async (r, cx) => {
  const dir = readHandle(r, cx)
  const cookie = r.bigUint64()
  const verifier = r.fixed(8)
  const dircount = r.uint32()
  const maxcount = r.uint32()
  const dirAttr = await attrOfHandle(cx, dir)
  if (!isDirectory(dirAttr)) throw new NfsStatusError(NFS3.NOTDIR)
  const listing = await listingFor(cx, dir, cookie, verifier, true)
  let dirBytes = 0
  let used = PAGE_OVERHEAD
  const { entries, eof } = page(listing, cookie, (name, path) => {
    dirBytes += entryBytes(name)
    used += entryBytes(name) + 4 + FATTR3_BYTES + 4 + opaqueSize(cx.handles.handleOf(path).length)
    return used <= maxcount && dirBytes <= dircount
  })
  return (w) => {
    writePostOpAttr(w, dir, dirAttr)
    w.fixed(listing.verifier)
    for (const e of entries) {
      w.bool(true).uint64(fileIdOf(e.path)).string(e.name).uint64(e.cookie)
      writePostOpAttr(w, e.path, e.attr)
      w.bool(true).opaque(cx.handles.handleOf(e.path))
    }
    w.bool(false).bool(eof)
  }
}

const fsstat: Procedure = async (r, cx) => {
  const p = readHandle(r, cx)
  const a = await attrOfHandle(cx, p)
  const s = await cx.core.statfs(p)
  return (w) => {
    writePostOpAttr(w, p, a)
    w.uint64(s.blocks * s.frsize).uint64(s.bfree * s.frsize).uint64(s.bavail * s.frsize)
    w.uint64(s.files).uint64(s.ffree).uint64(s.favail)
    w.uint32(0) // invarsec: the figures may change at any time
  }
}

const fsinfo: Procedure = async (r, cx) => {
  const p = readHandle(r, cx)
  const a = await attrOfHandle(cx, p)
  return (w) => {
    writePostOpAttr(w, p, a)
    w.uint32(MAX_IO_BYTES).uint32(MAX_IO_BYTES).uint32(4096) // rtmax, rtpref, rtmult
    w.uint32(MAX_IO_BYTES).uint32(MAX_IO_BYTES).uint32(4096) // wtmax, wtpref, wtmult
    w.uint32(DIR_PREF_BYTES).uint64(MAX_FILE_SIZE)
    w.uint32(0).uint32(1_000_000) // time_delta: times are kept to the millisecond
    w.uint32(FSF3_SYMLINK | FSF3_HOMOGENEOUS | FSF3_CANSETTIME)
  }
}

const pathconf: Procedure = async (r, cx) => {
  const p = readHandle(r, cx)
  const a = await attrOfHandle(cx, p)
  return (w) => {
    writePostOpAttr(w, p, a)
    w.uint32(1).uint32(NAME_MAX_BYTES) // linkmax, name_max
    w.bool(true).bool(true).bool(false).bool(true) // no_trunc, chown_restricted, case_insensitive, case_preserving
  }
}

/** The read side's procedures by number (RFC 1813). */
export const READ_PROCEDURES = new Map<number, Procedure>([
  [1, getattr], [3, lookup], [4, access], [5, readlink], [6, read],
  [16, readdir], [17, readdirplus], [18, fsstat], [19, fsinfo], [20, pathconf],
])
