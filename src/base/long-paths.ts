// File system calls on paths of any length. The kernel takes at most PATH_MAX - 1 bytes of
// path in one call, but a tree may be deeper than that: a path that fits under a mount can
// be too long once the same names sit under a longer folder (the outbox's staging tree in
// the data folder), and relative names make trees of any depth. A long path is walked in
// hops: the longest leading folder that fits is opened (O_PATH: no read right needed, no
// contents read), and the rest is named through /proc/self/fd/<fd>/, as openat() would.
// The folders are closed once the call is done; a short path goes straight through.
import { promises as fsp, type Dirent, type BigIntStats, type Stats } from 'node:fs'
import type { FileHandle } from 'node:fs/promises'
import path from 'node:path'

/** Bytes of the longest path one system call takes (PATH_MAX counts the terminating NUL). */
export const LONGEST_PATH = 4095
/** Linux's O_PATH, which Node's constants lack: a handle that only names a folder. */
const O_PATH = 0o10000000
const O_DIRECTORY = 0o200000

const bytes = (s: string): number => Buffer.byteLength(s)

/** Runs `op` with a path naming the same file as `p` that fits one system call. */
export async function withShortPath<T>(p: string, op: (short: string) => Promise<T>): Promise<T> {
  if (bytes(p) <= LONGEST_PATH || !path.isAbsolute(p)) return op(p)
  const held: FileHandle[] = []
  try {
    return await op(await shorten(p, held))
  } finally {
    await Promise.all(held.map((h) => h.close().catch(() => undefined)))
  }
}

/** `withShortPath` for the two paths of a rename. */
export function withShortPaths<T>(a: string, b: string, op: (a: string, b: string) => Promise<T>): Promise<T> {
  return withShortPath(a, (sa) => withShortPath(b, (sb) => op(sa, sb)))
}

async function shorten(p: string, held: FileHandle[]): Promise<string> {
  let base = '' // '' is the root; else /proc/self/fd/<a held folder>
  let rest = p.split('/').filter(Boolean)
  const named = (n: number): string => `${base}/${rest.slice(0, n).join('/')}`
  while (bytes(named(rest.length)) > LONGEST_PATH) {
    // The most leading names that fit, never the last: it is what the call acts on.
    let n = 0
    while (n < rest.length - 1 && bytes(named(n + 1)) <= LONGEST_PATH) n++
    if (n === 0) throw Object.assign(new Error(`path too long: ${p.slice(0, 64)}…`), { code: 'ENAMETOOLONG' })
    const folder = await fsp.open(named(n), O_PATH | O_DIRECTORY)
    held.push(folder)
    base = `/proc/self/fd/${folder.fd}`
    rest = rest.slice(n)
  }
  return named(rest.length)
}

/** The fs/promises calls the staging tree makes, each taking a path of any length. */
export const longPathFs = {
  lstat: ((p: string, opts?: { bigint?: boolean }) => withShortPath(p, (s) => fsp.lstat(s, opts))) as {
    (p: string): Promise<Stats>
    (p: string, opts: { bigint: true }): Promise<BigIntStats>
  },
  readdir: (p: string): Promise<string[]> => withShortPath(p, (s) => fsp.readdir(s)),
  readdirTyped: (p: string): Promise<Dirent[]> => withShortPath(p, (s) => fsp.readdir(s, { withFileTypes: true })),
  readlink: (p: string): Promise<string> => withShortPath(p, (s) => fsp.readlink(s)),
  open: (p: string, flags: number | string, mode?: number): Promise<FileHandle> => withShortPath(p, (s) => fsp.open(s, flags, mode)),
  truncate: (p: string, size: number): Promise<void> => withShortPath(p, (s) => fsp.truncate(s, size)),
  unlink: (p: string): Promise<void> => withShortPath(p, (s) => fsp.unlink(s)),
  mkdir: (p: string, mode: number): Promise<void> => withShortPath(p, async (s) => void (await fsp.mkdir(s, { mode }))),
  rmdir: (p: string): Promise<void> => withShortPath(p, (s) => fsp.rmdir(s)),
  rename: (from: string, to: string): Promise<void> => withShortPaths(from, to, (a, b) => fsp.rename(a, b)),
  symlink: (target: string, p: string): Promise<void> => withShortPath(p, (s) => fsp.symlink(target, s)),
  lchown: (p: string, uid: number, gid: number): Promise<void> => withShortPath(p, (s) => fsp.lchown(s, uid, gid)),
  lutimes: (p: string, atime: Date | number, mtime: Date | number): Promise<void> => withShortPath(p, (s) => fsp.lutimes(s, atime, mtime)),
}

/**
 * Removes `p` and everything below it; nothing there is no error. Node's own recursive rm
 * names every file by its whole path, so a tree deeper than one call takes is walked here.
 */
export async function removeTree(p: string): Promise<void> {
  try {
    await fsp.rm(p, { recursive: true, force: true })
    return
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENAMETOOLONG') throw err
  }
  await removeDeep(p)
}

async function removeDeep(p: string): Promise<void> {
  let st: Stats
  try {
    st = await longPathFs.lstat(p)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return
    throw err
  }
  if (!st.isDirectory()) return longPathFs.unlink(p)
  for (const name of await longPathFs.readdir(p)) await removeDeep(path.join(p, name))
  await longPathFs.rmdir(p)
}
