// A null filesystem for the benchmarks: fuse-native with nothing behind it. It shows a
// tree given as a list of entries and answers every read from one buffer in RAM, with the
// kernel options transferfs mounts with (entry and attribute timeouts, page cache kept
// across opens). What it costs to list or read is the floor of FUSE + fuse-native + the
// kernel on this machine, so transferfs' figures are held against it in the same run.
//
//   node null-fs.js MOUNTDIR SPEC.json      prints "ready" once mounted; SIGTERM unmounts
//
// SPEC.json: {"entries": [["d", "inbox"], ["f", "inbox/a/b.bin", 1234], ...]}; a file's
// bytes are the first `size` bytes of one shared buffer (as large as the largest file).
// With "readAheadKb": n (root only) the mount gets that kernel readahead, as transferfs'
// mount run as root gets its readAheadKb; without it, the kernel's own 128 KiB.
import type FuseType from 'fuse-native'
import { readFileSync } from 'node:fs'
import { stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { resolveSettings } from '../../src/config/settings.js'
import { loadFuse } from '../../src/fuse/addon.js'
import { findMount } from '../../src/fuse/mountinfo.js'

// The FUSE library transferfs mounts with in the same run (TRANSFERFS_FUSE_LIBRARY), so both sides stand on the same one.
const { Fuse, backend } = loadFuse(resolveSettings({ env: process.env }).settings.fuseLibrary)
type Fuse = FuseType

const [mountDir, specFile] = process.argv.slice(2)
if (!mountDir || !specFile) {
  process.stderr.write('usage: null-fs MOUNTDIR SPEC.json\n')
  process.exit(2)
}
const spec = JSON.parse(readFileSync(specFile, 'utf8')) as { entries: Array<['d', string] | ['f', string, number]>; readAheadKb?: number }

interface Node {
  dir: boolean
  size: number
  children: Map<string, Node>
}
const rootNode: Node = { dir: true, size: 0, children: new Map() }
function place(p: string, node: Node): void {
  const parts = p.split('/').filter(Boolean)
  let at = rootNode
  for (const part of parts.slice(0, -1)) {
    let next = at.children.get(part)
    if (!next) at.children.set(part, (next = { dir: true, size: 0, children: new Map() }))
    at = next
  }
  at.children.set(parts[parts.length - 1]!, node)
}
let largest = 0
for (const e of spec.entries) {
  if (e[0] === 'd') place(e[1], { dir: true, size: 0, children: new Map() })
  else {
    place(e[1], { dir: false, size: e[2], children: new Map() })
    largest = Math.max(largest, e[2])
  }
}
const bytes = Buffer.alloc(largest)
for (let i = 0; i + 8 <= bytes.length; i += 4096) bytes.writeDoubleBE(i, i)

function lookup(p: string): Node | undefined {
  let at: Node | undefined = rootNode
  for (const part of p.split('/').filter(Boolean)) at = at?.children.get(part)
  return at
}

const mtime = new Date()
const uid = process.getuid?.() ?? 0
const gid = process.getgid?.() ?? 0
const ops: FuseType.FuseOps = {
  getattr(p, cb) {
    const n = lookup(p)
    if (!n) return cb(Fuse.ENOENT)
    cb(0, { mtime, atime: mtime, ctime: mtime, size: n.dir ? 4096 : n.size, mode: n.dir ? 0o40555 : 0o100444, uid, gid, nlink: n.dir ? 2 : 1 })
  },
  readdir(p, cb) {
    const n = lookup(p)
    if (!n?.dir) return cb(Fuse.ENOENT)
    cb(0, [...n.children.keys()])
  },
  open(p, _flags, cb) {
    const n = lookup(p)
    if (!n || n.dir) return cb(Fuse.ENOENT)
    cb(0, 1)
  },
  read(p, _fd, buf, len, pos, cb) {
    const n = lookup(p)
    if (!n) return cb(Fuse.ENOENT)
    const end = Math.min(n.size, pos + len)
    if (end <= pos) return cb(0)
    cb(bytes.copy(buf, 0, pos, end))
  },
  release(_p, _fd, cb) {
    cb(0)
  },
}

// The options transferfs' mount uses for the kernel's caches (src/fuse/mount.ts).
const fuse = new Fuse(path.resolve(mountDir), ops, { force: true, mkdir: true, autoUnmount: true, attrTimeout: 30, entryTimeout: 30, autoCache: true })
/** The readahead the spec asks for, written where transferfs' mount writes its own (src/fuse/mount.ts). */
async function applyReadahead(): Promise<void> {
  if (!spec.readAheadKb) return
  // Once the kernel has the INIT reply (a stat of the mount answers only then), as transferfs'
  // mount does: written before it, the readahead was set back to what INIT gave (128 KiB on
  // libfuse 2, seen once in two runs).
  await stat(path.resolve(mountDir!))
  const m = await findMount(path.resolve(mountDir!))
  if (!m) throw new Error(`${mountDir} is not in the mount table`)
  await writeFile(`/sys/class/bdi/${m.major}:${m.minor}/read_ahead_kb`, String(spec.readAheadKb))
}

fuse.mount((err) => {
  if (err) {
    process.stderr.write(`null-fs: ${err.message}\n`)
    process.exit(1)
  }
  applyReadahead().then(
    () => process.stdout.write(`ready (${backend})\n`),
    (e: Error) => {
      process.stderr.write(`null-fs: readahead: ${e.message}\n`)
      fuse.unmount(() => process.exit(1))
    },
  )
})
process.on('SIGTERM', () => {
  fuse.unmount(() => process.exit(0))
  // An unmount that never calls back (the folder already detached) must not keep us alive.
  setTimeout(() => process.exit(0), 2000).unref()
})
