// NFSv3 attributes (RFC 1813): fattr3 written from the core's NodeAttr, the optional
// attributes and weak cache consistency data that replies carry, and sattr3 read from
// SETATTR, CREATE and MKDIR calls.
import { constants as C } from 'node:fs'
import type { NodeAttr } from '../vfs/core.js'
import { fileIdOf } from './handles.js'
import { XdrError, type XdrReader, type XdrWriter } from './xdr.js'

export const FTYPE = { REG: 1, DIR: 2, BLK: 3, CHR: 4, LNK: 5, SOCK: 6, FIFO: 7 } as const

/** The one file system the server exports. */
const FSID = 0x7472_6673n
const BLOCK = 4096

/** Bytes a fattr3 takes. */
export const FATTR3_BYTES = 84

function ftypeOf(mode: number): number {
  switch (mode & C.S_IFMT) {
    case C.S_IFDIR: return FTYPE.DIR
    case C.S_IFLNK: return FTYPE.LNK
    case C.S_IFBLK: return FTYPE.BLK
    case C.S_IFCHR: return FTYPE.CHR
    case C.S_IFSOCK: return FTYPE.SOCK
    case C.S_IFIFO: return FTYPE.FIFO
    default: return FTYPE.REG
  }
}

export function isDirectory(a: NodeAttr): boolean {
  return (a.mode & C.S_IFMT) === C.S_IFDIR
}

function writeTime(w: XdrWriter, d: Date): void {
  const ms = Math.max(0, d.getTime())
  w.uint32(Math.floor(ms / 1000)).uint32((ms % 1000) * 1_000_000)
}

export function writeFattr(w: XdrWriter, p: string, a: NodeAttr): void {
  w.uint32(ftypeOf(a.mode)).uint32(a.mode & 0o7777).uint32(a.nlink).uint32(a.uid).uint32(a.gid)
  w.uint64(a.size).uint64(Math.ceil(a.size / BLOCK) * BLOCK)
  w.uint32(0).uint32(0) // rdev: no devices here
  w.uint64(FSID).uint64(fileIdOf(p))
  writeTime(w, a.atime)
  writeTime(w, a.mtime)
  writeTime(w, a.ctime)
}

/** post_op_attr: the attributes when at hand, else "none". */
export function writePostOpAttr(w: XdrWriter, p: string, a: NodeAttr | null | undefined): void {
  if (!a) {
    w.bool(false)
    return
  }
  w.bool(true)
  writeFattr(w, p, a)
}

/** wcc_data with no attributes before and `after` (or none) after. */
export function writeWcc(w: XdrWriter, p: string, after: NodeAttr | null | undefined): void {
  w.bool(false)
  writePostOpAttr(w, p, after)
}

/** A time to set: null leaves it as it is, 'now' is the server's clock. */
export type SetTime = Date | 'now' | null

/** sattr3: what a SETATTR, CREATE or MKDIR asks to set (null: leave as it is). */
export interface SetAttrs {
  mode: number | null
  uid: number | null
  gid: number | null
  size: number | null
  atime: SetTime
  mtime: SetTime
}

function readSetTime(r: XdrReader): SetTime {
  const how = r.uint32()
  if (how === 0) return null
  if (how === 1) return 'now'
  if (how !== 2) throw new XdrError(`time_how ${how}`)
  const seconds = r.uint32()
  const nanos = r.uint32()
  return new Date(seconds * 1000 + Math.floor(nanos / 1_000_000))
}

export function readSattr(r: XdrReader): SetAttrs {
  const mode = r.bool() ? r.uint32() : null
  const uid = r.bool() ? r.uint32() : null
  const gid = r.bool() ? r.uint32() : null
  const size = r.bool() ? r.uint64() : null
  const atime = readSetTime(r)
  const mtime = readSetTime(r)
  return { mode, uid, gid, size, atime, mtime }
}
