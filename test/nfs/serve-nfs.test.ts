// `transferfs serve-nfs` against the real local service, through NFS clients we did not
// write: libnfs's nfs-ls and nfs-cat (each mounts the folder that holds what it names, so MNT
// of sub-folders is exercised) and, where the kernel has one, Linux's own NFS client. Our own
// RPC client is used only where no such client can: malformed input, and one handle kept
// across a restart of the server.
import { createHash } from 'node:crypto'
import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { login, useAccount, useOneFile, type Account } from '../mount/harness.js'
import { run } from '../support/mount.js'
import { libnfs, listedNames, MOUNT_PROGRAM, NFS_PROGRAM, nfsUrl, RpcClient, serveNfs, type NfsServe } from './harness.js'

const FILE = 'clip.mov'
const SIZE = 3 * 1024 * 1024 + 12_345
// A long subject: the file's path is past the 63 bytes a handle carries, so its handle is a
// digest that only the table in the data folder resolves after a restart. Its "é" is one code
// point (NFC), as the service's names usually are; macOS asks for it decomposed (NFD).
const world = useOneFile(FILE, SIZE, 42, 'Rushes for the café scene, second cut with the colour grade')

let account: Account
let server: NfsServe
let folder: string

beforeAll(async () => {
  account = await useAccount(world.service)
  await login(world.service)
  await world.service.controls.seedInbox(world.service.user.email, 3, { subjectPrefix: 'Seeded' })
  server = await serveNfs([path.join(account.home, 'mnt')])
  const inbox = await libnfs('nfs-ls', nfsUrl(server.port, '/inbox'))
  expect(inbox.code, inbox.stderr).toBe(0)
  folder = listedNames(inbox.stdout).find((n) => n.endsWith(`(${world.transferId})`)) ?? ''
  expect(folder, inbox.stdout).not.toBe('')
}, 180_000)

afterAll(async () => {
  await server?.stop()
})

/** md5 of what nfs-cat writes for `p`. */
async function md5Through(p: string): Promise<string> {
  const r = await libnfs('nfs-cat', nfsUrl(server.port, p), { encoding: 'latin1', timeoutMs: 60_000 })
  expect(r.code, r.stderr).toBe(0)
  return createHash('md5').update(Buffer.from(r.stdout, 'latin1')).digest('hex')
}

describe('serve-nfs through libnfs', () => {
  it('prints the port first, as JSON, and lists the root, the inbox and a transfer', async () => {
    expect(server.port).toBeGreaterThan(0)
    const root = await libnfs('nfs-ls', nfsUrl(server.port, '/'))
    expect(root.code, root.stderr).toBe(0)
    expect(listedNames(root.stdout).sort()).toEqual(['.status', 'by-id', 'inbox', 'outbox', 'search', 'sent'])
    const inbox = await libnfs('nfs-ls', nfsUrl(server.port, '/inbox'))
    expect(listedNames(inbox.stdout).filter((n) => n.includes('Seeded'))).toHaveLength(3)
    const transfer = await libnfs('nfs-ls', nfsUrl(server.port, `/inbox/${folder}`))
    expect(transfer.code, transfer.stderr).toBe(0)
    const line = transfer.stdout.split('\n').find((l) => l.endsWith(` ${FILE}`))
    expect(line, transfer.stdout).toMatch(new RegExp(`^-r.* ${SIZE} ${FILE}$`))
  })

  it('reads a file whole, with the md5 the service gives, from inbox/ and by-id/', async () => {
    expect(await md5Through(`/inbox/${folder}/${FILE}`)).toBe(world.md5)
    expect(await md5Through(`/by-id/${world.transferId}/${FILE}`)).toBe(world.md5)
  })
})

/** The handle LOOKUP gives for `name` in the folder of `dir`. */
async function lookup(c: RpcClient, dir: Buffer, name: string): Promise<Buffer> {
  const r = await c.call(NFS_PROGRAM, 3, 3, (w) => w.opaque(dir).string(name))
  expect(r.uint32()).toBe(0)
  return Buffer.from(r.opaque(64))
}

/** The first `count` bytes READ gives from the handle, and the status. */
async function readStart(c: RpcClient, fh: Buffer, count: number): Promise<{ status: number; data: Buffer | null }> {
  const r = await c.call(NFS_PROGRAM, 3, 6, (w) => w.opaque(fh).uint64(0).uint32(count))
  const status = r.uint32()
  if (status !== 0) return { status, data: null }
  if (r.bool()) r.fixed(84)
  r.uint32()
  r.bool()
  return { status, data: Buffer.from(r.opaque(count)) }
}

describe('what macOS asks for', () => {
  it('finds a name asked for decomposed (NFD), and lists it once', async () => {
    expect(folder.normalize('NFD')).not.toBe(folder)
    const c = await RpcClient.connect(server.port)
    const mnt = await c.call(MOUNT_PROGRAM, 3, 1, (w) => w.string('/inbox'))
    expect(mnt.uint32()).toBe(0)
    const inbox = Buffer.from(mnt.opaque(64))
    expect((await lookup(c, inbox, folder.normalize('NFD'))).equals(await lookup(c, inbox, folder))).toBe(true)
    c.close()
    const listed = listedNames((await libnfs('nfs-ls', nfsUrl(server.port, '/inbox'))).stdout)
    expect(listed.filter((n) => n.normalize('NFC') === folder)).toEqual([folder])
  })

  it('reads .status whole (its size shows as 0 on the FUSE mount, and NFS clients read no further than the size)', async () => {
    // "//": libnfs mounts the folder before the last slash, and for "/.status" it asks for "" and
    // then gives up on the export list; "//.status" has it mount "/".
    const r = await libnfs('nfs-cat', nfsUrl(server.port, '//.status'))
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^outbox: .*\n[^]*cache: /)
  })
})

describe('handles across a restart', () => {
  it('a handle taken before the server restarts reads the same file after it, on the same port', async () => {
    let c = await RpcClient.connect(server.port)
    const mnt = await c.call(MOUNT_PROGRAM, 3, 1, (w) => w.string('/'))
    expect(mnt.uint32()).toBe(0)
    const root = Buffer.from(mnt.opaque(64))
    const inbox = await lookup(c, root, 'inbox')
    const dir = await lookup(c, inbox, folder)
    const file = await lookup(c, dir, FILE)
    expect(file.length).toBeLessThanOrEqual(64)
    // A digest, not the path: only the table resolves it after the restart.
    expect(file.length).toBe(25)
    const before = await readStart(c, file, 4096)
    expect(before.status).toBe(0)
    c.close()

    const port = server.port
    expect(await server.stop()).toBe(0)
    server = await serveNfs([path.join(account.home, 'mnt'), '--port', String(port)])
    expect(server.port).toBe(port)

    c = await RpcClient.connect(server.port)
    const after = await readStart(c, file, 4096)
    expect(after.status).toBe(0)
    expect(after.data?.equals(before.data as Buffer)).toBe(true)
    const attr = await c.call(NFS_PROGRAM, 3, 1, (w) => w.opaque(file))
    expect(attr.uint32()).toBe(0)
    c.close()
  })
})

describe('malformed and unexpected calls', () => {
  it('answers each with the error RPC gives it, ends only a connection that sends a record past the limit, and serves on', async () => {
    const c = await RpcClient.connect(server.port)
    // Another program, another version, a procedure past the last.
    await c.call(100021, 4, 0, undefined, 1) // PROG_UNAVAIL (the lock manager is not served)
    const mismatch = await c.call(NFS_PROGRAM, 4, 0, undefined, 2) // PROG_MISMATCH
    expect([mismatch.uint32(), mismatch.uint32()]).toEqual([3, 3])
    await c.call(NFS_PROGRAM, 3, 22, undefined, 3) // PROC_UNAVAIL
    await c.call(MOUNT_PROGRAM, 3, 9, undefined, 3)
    // Arguments cut short: a handle's length with no handle, a READ with no offset.
    await c.call(NFS_PROGRAM, 3, 1, (w) => w.uint32(64), 4) // GARBAGE_ARGS
    await c.call(NFS_PROGRAM, 3, 6, (w) => w.opaque(Buffer.from([1])), 4)
    // A handle the server never made: STALE, not a crash.
    const stale = await c.call(NFS_PROGRAM, 3, 1, (w) => w.opaque(Buffer.from([2, ...Buffer.alloc(24, 7)])))
    expect(stale.uint32()).toBe(70)
    // A record too short for a header is dropped; the connection goes on.
    c.send(Buffer.from([0x80, 0, 0, 4, 1, 2, 3, 4]))
    await c.call(NFS_PROGRAM, 3, 0)
    // A record mark of 2 GiB: that connection is ended, before any of it is read.
    c.send(Buffer.from([0xff, 0xff, 0xff, 0xff]))
    expect(await c.closedWithin(5000)).toBe(true)

    const again = await RpcClient.connect(server.port)
    await again.call(NFS_PROGRAM, 3, 0)
    again.close()
    expect(await md5Through(`/by-id/${world.transferId}/${FILE}`)).toBe(world.md5)
  })
})

/** A kernel NFS mount, when this kernel has an NFS client; always undone (umount -f -l, bounded). */
describe('the Linux kernel NFS client', () => {
  let mounted: string | null = null
  afterEach(async () => {
    if (mounted) await run('umount', ['-f', '-l', mounted], { timeoutMs: 10_000 })
    mounted = null
  })

  it('lists, reads with the right md5, and stays usable across a restart of the server', async (ctx) => {
    const dir = path.join(account.home, 'kernel-mnt')
    await mkdir(dir, { recursive: true })
    const opts = `vers=3,proto=tcp,port=${server.port},mountport=${server.port},mountproto=tcp,nolock,soft,timeo=100,retrans=3`
    const m = await run('mount', ['-t', 'nfs', '-o', opts, '127.0.0.1:/', dir], { timeoutMs: 30_000 })
    if (m.code !== 0 && /No such device|unknown filesystem type/.test(m.stderr)) {
      // This kernel has no NFS client (no nfs module): the libnfs tests above stand alone.
      ctx.skip()
    }
    expect(m.code, m.stderr).toBe(0)
    mounted = dir
    const ls = await run('ls', [path.join(dir, 'inbox')], { timeoutMs: 30_000 })
    expect(ls.stdout).toContain(folder)
    const file = path.join(dir, 'inbox', folder, FILE)
    const sum = async (): Promise<string> => (await run('md5sum', [file], { timeoutMs: 60_000 })).stdout.split(' ')[0] as string
    expect(await sum()).toBe(world.md5)

    const port = server.port
    await server.stop()
    server = await serveNfs([path.join(account.home, 'mnt'), '--port', String(port)])
    await run('sh', ['-c', 'echo 3 > /proc/sys/vm/drop_caches'])
    expect(await sum()).toBe(world.md5)
  })
})
