// Every NFSv3 procedure through libnfs's own C API, a client none of us wrote: a small program
// (fixtures/libnfs-probe.c, built here with cc against libnfs-dev) runs a list of operations
// on `transferfs serve-nfs`, and node's fs runs the same list on the FUSE mount of the same
// account. Each answer and each error code must be the same, allowed and refused alike
// (read-only folders, outbox/, additions to sent/, missing names, ENOTEMPTY, EEXIST). Where
// NFS and FUSE differ by protocol, the step says why and holds each side to its own answer.
import { createHash } from 'node:crypto'
import { constants as C, promises as fsp } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TransferClient } from '../../src/api/client.js'
import type { SentRecord } from '../../src/send/ports.js'
import { bytes } from '../cli/harness.js'
import { login, mount, serviceClient, transferFolder, useAccount, type Account } from '../mount/harness.js'
import { python, run, tempDir, unmountAll } from '../support/mount.js'
import { startTestService, type TestService } from '../support/service.js'
import { nfsUrl, serveNfs, type NfsServe } from './harness.js'

const PROBE_SOURCE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/libnfs-probe.c')
const CLIP = bytes(300_000, 5)
const NOTES = Buffer.from('Notes on the cut\n')
const MiB = 1024 * 1024

/** One operation, its arguments, and what is checked of its answers. */
interface Step {
  op: string
  args: Array<string | number>
  /** The answer both give (a pattern where it holds figures): most steps are held to each other only. */
  want?: string | RegExp
  /** Applied to both answers before they are compared: what differs by protocol, masked (with why, in `nfs.why`). */
  mask?: (answer: string) => string
  /** Where NFS answers otherwise by protocol: what it gives, what the FUSE mount gives, and why. */
  nfs?: { want: string | RegExp; fuse: string | RegExp; why: string }
}

let service: TestService
let client: TransferClient
let fuse: Account
let server: NfsServe
let probe: string
let transferId: string
/** The transfer's folder under inbox/ and under sent/ (the main user sent it to themself). */
let inboxName: string
let sentName: string

beforeAll(async () => {
  service = await startTestService()
  client = await serviceClient(service)
  await service.controls.seedInbox(service.user.email, 2, { subjectPrefix: 'Probed' })
  // A transfer sent to this user by this user: in inbox/, and in sent/ where the accounts'
  // sent logs name it, as this machine's sends are named (with what adds files to it later).
  const files = [{ name: 'clip.bin', data: CLIP }, { name: 'docs/notes.txt', data: NOTES }]
  const init = await client.transfers.initialize({ subject: 'Rushes', to: [service.user.email] })
  for (const f of files) {
    await client.upload.uploadFile({
      transferUrl: init.transferurl, transferId: init.transferid, transferKey: init.transferkey, fileName: f.name,
      source: { size: f.data.length, read: async (start, end) => f.data.subarray(start, end) },
    })
  }
  transferId = (await client.transfers.complete(init.transferid, init.transferkey)).id
  const sentLog = `${JSON.stringify({
    transferid: transferId, subject: 'Rushes', recipients: [service.user.email], sentAt: Date.now(), url: null,
    files: files.map((f) => ({ name: f.name, size: f.data.length, md5: createHash('md5').update(f.data).digest('hex') })),
    transferurl: init.transferurl, transferkey: init.transferkey,
  } satisfies SentRecord)}\n`

  const build = await tempDir()
  probe = path.join(build, 'libnfs-probe')
  const flags = await run('pkg-config', ['--cflags', '--libs', 'libnfs'])
  expect(flags.code, `libnfs-dev is not installed: ${flags.stderr}`).toBe(0)
  const cc = await run('cc', ['-O1', '-Wall', '-o', probe, PROBE_SOURCE, ...flags.stdout.trim().split(/\s+/)], { timeoutMs: 60_000 })
  expect(cc.code, cc.stderr).toBe(0)

  // Two accounts of the same user, each with folders of its own: one mounted with FUSE, one
  // served over NFS, so that each starts from an empty outbox. Nothing is sent while the steps
  // run (settle time of an hour): the outbox keeps what they write.
  const quiet = { TRANSFERFS_SETTLE_MS: '1h' }
  fuse = await useAccount(service, quiet)
  await login(service)
  await writeSentLog(fuse, sentLog)
  await mount(fuse)
  const nfs = await useAccount(service, quiet)
  await login(service)
  await writeSentLog(nfs, sentLog)
  server = await serveNfs([nfs.mountDir])
  inboxName = path.basename(await transferFolder(fuse.mountDir, transferId))
  const sent = await fsp.readdir(path.join(fuse.mountDir, 'sent'))
  sentName = sent.find((n) => n.endsWith(`(${transferId})`)) ?? ''
  expect(sentName, sent.join(', ')).not.toBe('')
}, 180_000)

/** The account's sent log (its data folder's sent.jsonl), as the sends of this machine write it. */
async function writeSentLog(account: Account, text: string): Promise<void> {
  await fsp.mkdir(path.join(account.home, 'data'), { recursive: true })
  await fsp.writeFile(path.join(account.home, 'data', 'sent.jsonl'), text)
}

afterAll(async () => {
  await server?.stop()
  await unmountAll()
  await client?.close()
  await service?.close()
})

const ERRNO_NAMES = new Map<number, string>()
for (const [name, n] of Object.entries(os.constants.errno)) if (!ERRNO_NAMES.has(n)) ERRNO_NAMES.set(n, name)

/** "err 2" as "err ENOENT"; a listing's entries sorted (libnfs gives them in the server's order). */
function normal(answer: string): string {
  const m = /^err (\d+)$/.exec(answer)
  if (m) return `err ${ERRNO_NAMES.get(Number(m[1])) ?? m[1]}`
  if (answer.startsWith('ok\t')) return ['ok', ...answer.split('\t').slice(1).sort()].join('\t')
  return answer
}

/** FNV-1a of bytes, as the probe digests what it read. */
function fnv1a(b: Buffer): string {
  let h = 0x811c9dc5
  for (const x of b) h = Math.imul(h ^ x, 0x01000193) >>> 0
  return h.toString(16).padStart(8, '0')
}

const typeOf = (mode: number): string => ((mode & C.S_IFMT) === C.S_IFDIR ? 'd' : (mode & C.S_IFMT) === C.S_IFLNK ? 'l' : (mode & C.S_IFMT) === C.S_IFREG ? '-' : '?')
const perms = (mode: number): string => (mode & 0o7777).toString(8).padStart(4, '0')

/** The steps run through libnfs: one line each, "err N" or "ok" and what was found. */
async function throughLibnfs(steps: Step[]): Promise<string[]> {
  const input = steps.map((s) => [s.op, ...s.args].join('\t')).join('\n') + '\n'
  const r = await run(probe, [nfsUrl(server.port, '/')], { input, timeoutMs: 120_000 })
  expect(r.code, r.stderr).toBe(0)
  const lines = r.stdout.split('\n').slice(0, steps.length)
  expect(lines, r.stdout).toHaveLength(steps.length)
  return lines.map(normal)
}

/** The same steps through node's fs on the FUSE mount, answered in the probe's words. */
async function throughFuse(steps: Step[]): Promise<string[]> {
  const at = (p: string | number): string => path.join(fuse.mountDir, String(p))
  let file = null as fsp.FileHandle | null
  const answer = async (s: Step): Promise<string> => {
    const [a, b, c] = s.args
    switch (s.op) {
      case 'stat':
      case 'lstat': {
        const st = await (s.op === 'stat' ? fsp.stat : fsp.lstat)(at(a!))
        return `ok ${typeOf(st.mode)} ${perms(st.mode)} ${st.size} ${st.nlink} ${st.uid} ${st.gid}`
      }
      case 'mtime':
        return `ok ${Math.floor((await fsp.stat(at(a!))).mtimeMs / 1000)}`
      case 'access':
        await fsp.access(at(a!), Number(b))
        return 'ok'
      case 'readlink':
        return `ok ${await fsp.readlink(at(a!))}`
      case 'read': {
        const fh = await fsp.open(at(a!), 'r')
        try {
          const buf = Buffer.alloc(Number(c))
          let n = 0
          for (let got = 1; got > 0 && n < buf.length; n += got) got = (await fh.read(buf, n, buf.length - n, Number(b) + n)).bytesRead
          return `ok ${n} ${fnv1a(buf.subarray(0, n))}`
        } finally {
          await fh.close()
        }
      }
      case 'readdir': {
        const entries = []
        for (const name of await fsp.readdir(at(a!))) {
          const st = await fsp.lstat(path.join(at(a!), name))
          entries.push(`${name}|${typeOf(st.mode)}|${perms(st.mode)}|${st.size}`)
        }
        return ['ok', ...entries].join('\t')
      }
      case 'statvfs': {
        const s = await fsp.statfs(at(a!))
        return `ok ${s.blocks * s.bsize} ${s.bfree * s.bsize} ${s.bavail * s.bsize} ${s.files} ${s.ffree}`
      }
      case 'pathconf': {
        // Linux's pathconf asks nothing about case: the tree's names are case-sensitive and
        // kept as given, which a step shows by looking up a name in another case.
        const r = await python('import os, sys; print(os.pathconf(sys.argv[1], "PC_NAME_MAX"), os.pathconf(sys.argv[1], "PC_NO_TRUNC"))', at(a!))
        const [nameMax, noTrunc] = r.stdout.trim().split(' ')
        return `ok ${nameMax} ${noTrunc} 0 1`
      }
      case 'open':
        await file?.close()
        file = null
        file = await fsp.open(at(a!), Number(b), Number.parseInt(String(c), 8))
        return 'ok'
      case 'pwrite': {
        if (!file) return 'err EBADF'
        const data = Buffer.from(String(b))
        return `ok ${(await file.write(data, 0, data.length, Number(a))).bytesWritten}`
      }
      case 'fsync':
        if (!file) return 'err EBADF'
        await file.sync()
        return 'ok'
      case 'close': {
        const f = file
        file = null
        if (!f) return 'err EBADF'
        await f.close()
        return 'ok'
      }
      case 'truncate': await fsp.truncate(at(a!), Number(b)); return 'ok'
      case 'chmod': await fsp.chmod(at(a!), Number.parseInt(String(b), 8)); return 'ok'
      case 'utimes': await fsp.utimes(at(a!), Number(b), Number(c)); return 'ok'
      case 'unlink': await fsp.unlink(at(a!)); return 'ok'
      case 'rmdir': await fsp.rmdir(at(a!)); return 'ok'
      case 'mkdir': await fsp.mkdir(at(a!), Number.parseInt(String(b), 8)); return 'ok'
      case 'rename': await fsp.rename(at(a!), at(b!)); return 'ok'
      case 'symlink': await fsp.symlink(String(a), at(b!)); return 'ok'
      case 'link': await fsp.link(at(a!), at(b!)); return 'ok'
      case 'mknod': {
        // node has no mknod: Python's os.mknod is mknod(2).
        const r = await python('import os, sys\ntry:\n  os.mknod(sys.argv[1], int(sys.argv[2], 8)); print("ok")\nexcept OSError as e:\n  print("err " + str(e.errno))', at(a!), String(b))
        return normal(r.stdout.trim())
      }
      default:
        throw new Error(`no such step: ${s.op}`)
    }
  }
  const out: string[] = []
  for (const s of steps) {
    out.push(normal(await answer(s).catch((err: NodeJS.ErrnoException) => `err ${err.code ?? err.message}`)))
  }
  await file?.close()
  return out
}

/** The steps through both; each pair of answers checked as the step says. */
async function compare(steps: Step[]): Promise<void> {
  const [nfs, fs] = await Promise.all([throughLibnfs(steps), throughFuse(steps)])
  const failures: string[] = []
  const holds = (answer: string, want: string | RegExp): boolean => (typeof want === 'string' ? answer === want : want.test(answer))
  steps.forEach((s, i) => {
    const name = [s.op, ...s.args].join(' ')
    const n = nfs[i] as string
    const f = fs[i] as string
    if (s.nfs) {
      if (!holds(n, s.nfs.want) || !holds(f, s.nfs.fuse)) failures.push(`${name}: NFS ${n} (wanted ${String(s.nfs.want)}), FUSE ${f} (wanted ${String(s.nfs.fuse)})`)
      return
    }
    const mask = s.mask ?? ((x: string) => x)
    if (mask(n) !== mask(f)) failures.push(`${name}: NFS ${n}, FUSE ${f}`)
    else if (s.want !== undefined && !holds(f, s.want)) failures.push(`${name}: both ${f}, wanted ${String(s.want)}`)
  })
  expect(failures, failures.join('\n')).toEqual([])
}

const O_CREATE_NEW = C.O_CREAT | C.O_EXCL | C.O_WRONLY
const ROFS = 'err EROFS'
/** NFS clients are given `.status`'s size as the length of its text (on FUSE it is 0, and reads go past it). */
const STATUS_SIZE = /(\.status\|-\|\d+\|)\d+/
const maskStatusSize = (answer: string): string => answer.replace(STATUS_SIZE, '$1N')

describe('libnfs\'s C API against the FUSE mount, step by step', () => {
  it('reads the tree alike: attributes, access, links, reads, listings, the file system\'s figures', async () => {
    const t = `/inbox/${inboxName}`
    await compare([
      { op: 'stat', args: ['/'], want: /^ok d / },
      { op: 'stat', args: ['/inbox'] },
      { op: 'stat', args: [t] },
      { op: 'stat', args: [`${t}/clip.bin`], want: /^ok - \d{4} 300000 / },
      { op: 'stat', args: [`${t}/docs`] },
      { op: 'lstat', args: [`${t}/docs/notes.txt`] },
      { op: 'stat', args: [`/by-id/${transferId}/clip.bin`] },
      { op: 'stat', args: [`/sent/${sentName}/clip.bin`] },
      {
        op: 'stat', args: ['/.status'],
        nfs: { want: /^ok - \d{4} [1-9]\d* /, fuse: /^ok - \d{4} 0 /, why: 'NFS clients read no further than the size they are given, so NFS gives .status the length of its text' },
      },
      // Names are case-sensitive; missing names, names below a file, names too long.
      { op: 'stat', args: [`${t}/CLIP.BIN`], want: 'err ENOENT' },
      { op: 'stat', args: ['/inbox/No such transfer'], want: 'err ENOENT' },
      { op: 'stat', args: ['/nothing-here'], want: 'err ENOENT' },
      { op: 'stat', args: [`${t}/clip.bin/below`], want: 'err ENOTDIR' },
      { op: 'stat', args: [`/inbox/${'x'.repeat(256)}`], want: 'err ENOENT' },
      { op: 'mtime', args: [`${t}/clip.bin`] },
      { op: 'access', args: [`${t}/clip.bin`, C.R_OK], want: 'ok' },
      { op: 'access', args: [`${t}/clip.bin`, C.X_OK], want: 'err EACCES' },
      { op: 'access', args: [`${t}/clip.bin`, C.W_OK] },
      { op: 'access', args: ['/outbox', C.W_OK | C.X_OK], want: 'ok' },
      { op: 'access', args: [`${t}/missing.bin`, C.R_OK], want: 'err ENOENT' },
      { op: 'readlink', args: [`${t}/clip.bin`], want: 'err EINVAL' },
      { op: 'readlink', args: [`${t}/missing`], want: 'err ENOENT' },
      { op: 'read', args: [`${t}/clip.bin`, 0, 300_000], want: `ok 300000 ${fnv1a(CLIP)}` },
      { op: 'read', args: [`${t}/clip.bin`, 123_456, 1000], want: `ok 1000 ${fnv1a(CLIP.subarray(123_456, 124_456))}` },
      { op: 'read', args: [`${t}/clip.bin`, 299_990, 100], want: `ok 10 ${fnv1a(CLIP.subarray(299_990))}` },
      { op: 'read', args: [`${t}/clip.bin`, 300_000, 10], want: `ok 0 ${fnv1a(Buffer.alloc(0))}` },
      { op: 'read', args: [`/by-id/${transferId}/docs/notes.txt`, 0, 100], want: `ok ${NOTES.length} ${fnv1a(NOTES)}` },
      { op: 'read', args: [t, 0, 10], want: 'err EISDIR' },
      { op: 'read', args: [`${t}/missing`, 0, 10], want: 'err ENOENT' },
      { op: 'readdir', args: ['/'], mask: maskStatusSize, want: /^ok\t\.status\|-\|\d{4}\|0\tby-id\|d\|/ },
      { op: 'readdir', args: ['/inbox'] },
      { op: 'readdir', args: [t], want: /^ok\t(?=.*clip\.bin\|-\|\d{4}\|300000)(?=.*docs\|d\|)/ },
      { op: 'readdir', args: [`${t}/docs`] },
      { op: 'readdir', args: [`/by-id/${transferId}`] },
      { op: 'readdir', args: ['/search/Probed'], want: /^ok\t[^\t]*Probed 1 [^\t]*\|d\|[^\t]*\t[^\t]*Probed 2 [^\t]*\|d\|/ },
      { op: 'readdir', args: ['/sent'] },
      { op: 'readdir', args: [`/sent/${sentName}`] },
      { op: 'readdir', args: ['/outbox'], want: 'ok' },
      { op: 'readdir', args: [`${t}/clip.bin`], want: 'err ENOTDIR' },
      { op: 'readdir', args: ['/inbox/No such transfer'], want: 'err ENOENT' },
      { op: 'statvfs', args: ['/'], want: /^ok [1-9]\d* \d+ \d+ [1-9]\d* \d+$/ },
      { op: 'pathconf', args: ['/'], want: 'ok 255 1 0 1' },
    ])
  }, 120_000)

  it('FSINFO offers reads and writes of 1 MiB (FUSE has no such figure: the kernel sets its own)', async () => {
    const [answer] = await throughLibnfs([{ op: 'fsinfo', args: [] }])
    const [readMax, writeMax] = (answer as string).split(' ').slice(1).map(Number)
    expect(readMax).toBeGreaterThanOrEqual(MiB)
    expect(writeMax).toBeGreaterThanOrEqual(MiB)
  })

  it('refuses changes alike where the tree is read-only', async () => {
    const t = `/inbox/${inboxName}`
    const noOpen = 'NFS has no open: a file opens wherever it is, and the first WRITE gets the refusal FUSE gives at open'
    await compare([
      { op: 'open', args: [`${t}/new.txt`, O_CREATE_NEW, '0644'], want: ROFS },
      { op: 'open', args: [`${t}/clip.bin`, O_CREATE_NEW, '0644'], want: 'err EEXIST' },
      { op: 'open', args: [`${t}/clip.bin`, C.O_WRONLY, '0'], nfs: { want: 'ok', fuse: ROFS, why: noOpen } },
      { op: 'pwrite', args: [0, 'x'], nfs: { want: ROFS, fuse: 'err EBADF', why: noOpen } },
      { op: 'close', args: [], nfs: { want: 'ok', fuse: 'err EBADF', why: noOpen } },
      { op: 'truncate', args: [`${t}/clip.bin`, 0], want: ROFS },
      { op: 'chmod', args: [`${t}/clip.bin`, '0600'], want: ROFS },
      { op: 'utimes', args: [`${t}/clip.bin`, 1_600_000_000, 1_600_000_000], want: ROFS },
      { op: 'unlink', args: [`${t}/clip.bin`], want: ROFS },
      { op: 'unlink', args: [`${t}/missing.bin`] },
      { op: 'unlink', args: ['/.status'], want: ROFS },
      { op: 'mkdir', args: ['/inbox/New folder', '0755'], want: ROFS },
      { op: 'mkdir', args: [`${t}/docs`, '0755'], want: 'err EEXIST' },
      { op: 'rmdir', args: [t], want: ROFS },
      { op: 'rmdir', args: [`${t}/clip.bin`] },
      { op: 'rename', args: [`${t}/clip.bin`, `${t}/moved.bin`], want: ROFS },
      { op: 'rename', args: [`${t}/clip.bin`, '/outbox/clip.bin'] },
      { op: 'rename', args: [`${t}/missing.bin`, `${t}/moved.bin`] },
      { op: 'symlink', args: ['clip.bin', `${t}/link`], want: ROFS },
      { op: 'link', args: [`${t}/clip.bin`, `${t}/hard`], want: 'err EPERM' },
      { op: 'mknod', args: [`${t}/fifo`, (C.S_IFIFO | 0o644).toString(8)], want: 'err EPERM' },
      { op: 'mkdir', args: ['/by-id/new', '0755'] },
      { op: 'unlink', args: [`/sent/${sentName}/clip.bin`], want: ROFS },
      { op: 'mkdir', args: ['/sent/New folder', '0755'], want: ROFS },
    ])
  }, 120_000)

  it('allows in outbox/ and in a sent transfer what the FUSE mount allows, and refuses the rest alike', async () => {
    await compare([
      { op: 'open', args: ['/outbox/a.txt', O_CREATE_NEW, '0644'], want: 'ok' },
      { op: 'pwrite', args: [0, 'hello, world'], want: 'ok 12' },
      { op: 'pwrite', args: [12, '!'], want: 'ok 1' },
      { op: 'fsync', args: [], want: 'ok' },
      { op: 'close', args: [], want: 'ok' },
      { op: 'stat', args: ['/outbox/a.txt'], want: /^ok - 0644 13 / },
      { op: 'read', args: ['/outbox/a.txt', 0, 100], want: `ok 13 ${fnv1a(Buffer.from('hello, world!'))}` },
      { op: 'open', args: ['/outbox/a.txt', O_CREATE_NEW, '0644'], want: 'err EEXIST' },
      { op: 'open', args: [`/outbox/${'x'.repeat(256)}`, O_CREATE_NEW, '0644'], want: 'err ENAMETOOLONG' },
      { op: 'chmod', args: ['/outbox/a.txt', '0600'], want: 'ok' },
      { op: 'utimes', args: ['/outbox/a.txt', 1_600_000_000, 1_600_000_000], want: 'ok' },
      { op: 'mtime', args: ['/outbox/a.txt'], want: 'ok 1600000000' },
      { op: 'truncate', args: ['/outbox/a.txt', 5], want: 'ok' },
      { op: 'stat', args: ['/outbox/a.txt'], want: /^ok - 0600 5 / },
      { op: 'mkdir', args: ['/outbox/d', '0755'], want: 'ok' },
      { op: 'mkdir', args: ['/outbox/d', '0755'], want: 'err EEXIST' },
      { op: 'mkdir', args: ['/outbox/missing/d', '0755'], want: 'err ENOENT' },
      { op: 'open', args: ['/outbox/d/b.txt', O_CREATE_NEW, '0644'], want: 'ok' },
      { op: 'pwrite', args: [0, 'inside'], want: 'ok 6' },
      { op: 'close', args: [], want: 'ok' },
      { op: 'rmdir', args: ['/outbox/d'], want: 'err ENOTEMPTY' },
      { op: 'rename', args: ['/outbox/d/b.txt', '/outbox/d/c.txt'], want: 'ok' },
      { op: 'rename', args: ['/outbox/d/b.txt', '/outbox/d/e.txt'], want: 'err ENOENT' },
      { op: 'rename', args: ['/outbox/a.txt', '/inbox/a.txt'] },
      { op: 'symlink', args: ['c.txt', '/outbox/d/link'], want: 'ok' },
      { op: 'readlink', args: ['/outbox/d/link'], want: 'ok c.txt' },
      { op: 'lstat', args: ['/outbox/d/link'], want: /^ok l \d{4} 5 / },
      { op: 'link', args: ['/outbox/d/c.txt', '/outbox/d/hard'], want: 'err EPERM' },
      // A FIFO has no place in a transfer. (A regular file by mknod(2), which the FUSE mount
      // makes, has no NFS counterpart to compare: NFSv3's MKNOD makes no regular files, and
      // libnfs refuses one before asking.)
      { op: 'mknod', args: ['/outbox/fifo', (C.S_IFIFO | 0o644).toString(8)], want: 'err EPERM' },
      { op: 'readdir', args: ['/outbox'] },
      { op: 'readdir', args: ['/outbox/d'] },
      { op: 'unlink', args: ['/outbox/d/link'], want: 'ok' },
      { op: 'unlink', args: ['/outbox/d/c.txt'], want: 'ok' },
      { op: 'unlink', args: ['/outbox/d/c.txt'], want: 'err ENOENT' },
      { op: 'rmdir', args: ['/outbox/d'], want: 'ok' },
      { op: 'rmdir', args: ['/outbox/d'], want: 'err ENOENT' },
      { op: 'unlink', args: ['/outbox/a.txt'], want: 'ok' },
      // Files added to a transfer sent before.
      { op: 'open', args: [`/sent/${sentName}/added.txt`, O_CREATE_NEW, '0644'], want: 'ok' },
      { op: 'pwrite', args: [0, 'an addition'], want: 'ok 11' },
      { op: 'close', args: [], want: 'ok' },
      { op: 'stat', args: [`/sent/${sentName}/added.txt`], want: /^ok - \d{4} 11 / },
      { op: 'unlink', args: [`/sent/${sentName}/added.txt`], want: 'ok' },
      { op: 'readdir', args: ['/outbox'], want: 'ok' },
    ])
  }, 120_000)
})
