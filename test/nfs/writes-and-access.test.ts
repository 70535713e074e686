// Sending through `transferfs serve-nfs` and who it lets in, against the real local service:
// libnfs's nfs-cp into outbox/ sends the file once, with its md5; writes not committed before a
// restart are sent only once the client sends them again and commits; an unprivileged source
// port, another uid, or another address than 127.0.0.1 get nothing.
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TransferClient } from '../../src/api/client.js'
import { run, waitFor } from '../support/mount.js'
import { startTestService, type TestService } from '../support/service.js'
import { bytes, clientAs, md5, sendingAccount, sentRecords, transferFiles } from '../send-mount/helpers.js'
import type { Account } from '../mount/harness.js'
import type { XdrWriter } from '../../src/nfs/xdr.js'
import { libnfs, listedNames, MOUNT_PROGRAM, NFS_PROGRAM, nfsUrl, RpcClient, serveNfs, type NfsServe } from './harness.js'

const USER = { email: 'nfs-sender@example.com', password: 'nfs-sender-pw', name: 'NFS Sender' }

let service: TestService
let client: TransferClient
let account: Account
let server: NfsServe

beforeAll(async () => {
  service = await startTestService()
  await service.controls.createUser(USER)
  client = await clientAs(service, USER)
  account = await sendingAccount(service, USER)
  server = await serveNfs([path.join(account.home, 'mnt')])
}, 120_000)

afterAll(async () => {
  await server?.stop()
  await client?.close()
  await service?.close()
})

/** The sends recorded for a file named `name`, once `count` of them are (or after timeoutMs). */
async function sendsOf(name: string, count = 1, timeoutMs = 30_000): Promise<Array<{ transferid: string }>> {
  const of = async () => (await sentRecords(account)).filter((r) => r.files.some((f) => f.name === name))
  await waitFor(async () => (await of()).length >= count, timeoutMs, 200)
  return of()
}

/** The handle LOOKUP gives for the path's names from the root (MNT of "/"). */
async function handleOf(c: RpcClient, names: string[]): Promise<Buffer> {
  const mnt = await c.call(MOUNT_PROGRAM, 3, 1, (w) => w.string('/'))
  expect(mnt.uint32()).toBe(0)
  let fh = Buffer.from(mnt.opaque(64))
  for (const name of names) {
    const r = await c.call(NFS_PROGRAM, 3, 3, (w) => w.opaque(fh).string(name))
    expect(r.uint32()).toBe(0)
    fh = Buffer.from(r.opaque(64))
  }
  return fh
}

/** WRITE UNSTABLE of `data` at `offset`; the verifier the server answers with. */
async function writeUnstable(c: RpcClient, fh: Buffer, offset: number, data: Buffer): Promise<string> {
  const r = await c.call(NFS_PROGRAM, 3, 7, (w) => w.opaque(fh).uint64(offset).uint32(data.length).uint32(0).opaque(data))
  expect(r.uint32()).toBe(0)
  if (r.bool()) r.fixed(8 + 8 + 8) // wcc before: size, mtime, ctime
  if (r.bool()) r.fixed(84)
  expect(r.uint32()).toBe(data.length)
  expect(r.uint32()).toBe(0) // UNSTABLE: the client keeps the bytes until COMMIT
  return r.fixed(8).toString('hex')
}

async function commitFile(c: RpcClient, fh: Buffer): Promise<string> {
  const r = await c.call(NFS_PROGRAM, 3, 21, (w) => w.opaque(fh).uint64(0).uint32(0))
  expect(r.uint32()).toBe(0)
  if (r.bool()) r.fixed(24)
  if (r.bool()) r.fixed(84)
  return r.fixed(8).toString('hex')
}

describe('writing through NFS', () => {
  it('nfs-cp into outbox/ sends the file once, with its md5', async () => {
    const data = bytes(2_500_000, 7)
    const src = path.join(account.home, 'footage.bin')
    await writeFile(src, data)
    const cp = await run('nfs-cp', [src, nfsUrl(server.port, '/outbox/footage.bin')], { timeoutMs: 60_000 })
    expect(cp.code, cp.stderr).toBe(0)
    const sends = await sendsOf('footage.bin')
    expect(sends).toHaveLength(1)
    expect((await transferFiles(client, (sends[0] as { transferid: string }).transferid)).get('footage.bin')).toBe(md5(data))
    // The outbox is empty again, and nothing more is sent.
    expect(await waitFor(async () => listedNames((await libnfs('nfs-ls', nfsUrl(server.port, '/outbox'))).stdout).length === 0, 20_000, 300)).toBe(true)
    expect(await sendsOf('footage.bin', 2, 3000)).toHaveLength(1)
  })

  it('writes not committed when the server stops are sent only after the client sends them again and commits, once', async () => {
    // Two WRITEs of at most wtmax (1 MiB) each.
    const data = bytes(2_000_000, 11)
    const half = 1_000_000
    let c = await RpcClient.connect(server.port)
    const outbox = await handleOf(c, ['outbox'])
    const created = await c.call(NFS_PROGRAM, 3, 8, (w) => w.opaque(outbox).string('resent.bin').uint32(1) // GUARDED
      .bool(true).uint32(0o644).bool(false).bool(false).bool(false).uint32(0).uint32(0))
    expect(created.uint32()).toBe(0)
    expect(created.bool()).toBe(true)
    const fh = Buffer.from(created.opaque(64))
    const before = await writeUnstable(c, fh, 0, data.subarray(0, half))
    c.close()

    const port = server.port
    expect(await server.stop()).toBe(0)
    server = await serveNfs([path.join(account.home, 'mnt'), '--port', String(port)])
    // Past the settle time: the half-written file is held, not sent.
    await new Promise((r) => setTimeout(r, 2000))
    expect(await sendsOf('resent.bin', 1, 1000)).toHaveLength(0)

    c = await RpcClient.connect(server.port)
    // The verifier changed: the client knows its UNSTABLE writes may be lost, and sends them again.
    expect(await commitFile(c, fh)).not.toBe(before)
    const now = await writeUnstable(c, fh, 0, data.subarray(0, half))
    expect(await writeUnstable(c, fh, half, data.subarray(half))).toBe(now)
    expect(await commitFile(c, fh)).toBe(now)
    c.close()
    const sends = await sendsOf('resent.bin')
    expect(sends).toHaveLength(1)
    expect((await transferFiles(client, (sends[0] as { transferid: string }).transferid)).get('resent.bin')).toBe(md5(data))
    expect(await sendsOf('resent.bin', 2, 3000)).toHaveLength(1)
  })
})

/** The status word of a call's results, the rest left unread. */
async function statusOf(c: RpcClient, proc: number, args: (w: XdrWriter) => void): Promise<number> {
  return (await c.call(NFS_PROGRAM, 3, proc, args)).uint32()
}

/** CREATE `name` in `dir`: mode 1 (GUARDED) or 0 (UNCHECKED) with a mode of 0644, or 2 (EXCLUSIVE) with `verifier`. */
async function createIn(c: RpcClient, dir: Buffer, name: string, how: number, verifier = Buffer.alloc(8)): Promise<{ status: number; fh: Buffer | null }> {
  const r = await c.call(NFS_PROGRAM, 3, 8, (w) => {
    w.opaque(dir).string(name).uint32(how)
    if (how === 2) w.fixed(verifier)
    else w.bool(true).uint32(0o644).bool(false).bool(false).bool(false).uint32(0).uint32(0)
  })
  const status = r.uint32()
  return { status, fh: status === 0 && r.bool() ? Buffer.from(r.opaque(64)) : null }
}

/** SETATTR of a mode and an mtime given by the client, as Finder sets them after an EXCLUSIVE create. */
const setModeAndTime = (fh: Buffer, mode: number, mtimeS: number) => (w: XdrWriter) =>
  w.opaque(fh).bool(true).uint32(mode).bool(false).bool(false).bool(false).uint32(1).uint32(2).uint32(mtimeS).uint32(0).bool(false)

describe('a Mac-like client (the calls Finder makes to copy a file into a folder)', () => {
  it('sends the file once, with its md5, and never its ._ AppleDouble file or .DS_Store', async () => {
    const c = await RpcClient.connect(server.port)
    const outbox = await handleOf(c, ['outbox'])
    // Finder looks for the AppleDouble file and the folder's .DS_Store, checks access, lists.
    expect(await statusOf(c, 3, (w) => w.opaque(outbox).string('._movie.mov'))).toBe(2)
    expect(await statusOf(c, 3, (w) => w.opaque(outbox).string('.DS_Store'))).toBe(2)
    const access = await c.call(NFS_PROGRAM, 3, 4, (w) => w.opaque(outbox).uint32(0x3f))
    expect(access.uint32()).toBe(0)
    if (access.bool()) access.fixed(84)
    expect(access.uint32() & 0x0c).toBe(0x0c) // MODIFY and EXTEND
    expect(await statusOf(c, 17, (w) => w.opaque(outbox).uint64(0).fixed(Buffer.alloc(8)).uint32(8192).uint32(32768))).toBe(0)

    const data = bytes(1_500_000, 23)
    const movie = await createIn(c, outbox, 'movie.mov', 1)
    expect(movie.status).toBe(0)
    const verifier = Buffer.from('finder01')
    const appleDouble = await createIn(c, outbox, '._movie.mov', 2, verifier)
    expect(appleDouble.status).toBe(0)
    // A retransmitted EXCLUSIVE create finds its own file; another client's finds it taken.
    expect((await createIn(c, outbox, '._movie.mov', 2, verifier)).fh?.equals(appleDouble.fh as Buffer)).toBe(true)
    expect((await createIn(c, outbox, '._movie.mov', 2, Buffer.from('someone2'))).status).toBe(17)
    expect(await statusOf(c, 2, setModeAndTime(appleDouble.fh as Buffer, 0o644, 1_700_000_000))).toBe(0)
    await writeUnstable(c, appleDouble.fh as Buffer, 0, bytes(4096, 5))
    await commitFile(c, appleDouble.fh as Buffer)
    await writeUnstable(c, movie.fh as Buffer, 0, data.subarray(0, 1_000_000))
    await writeUnstable(c, movie.fh as Buffer, 1_000_000, data.subarray(1_000_000))
    expect(await statusOf(c, 2, setModeAndTime(movie.fh as Buffer, 0o644, 1_700_000_000))).toBe(0)
    await commitFile(c, movie.fh as Buffer)
    const store = await createIn(c, outbox, '.DS_Store', 0)
    expect(store.status).toBe(0)
    await writeUnstable(c, store.fh as Buffer, 0, bytes(6148, 9))
    await commitFile(c, store.fh as Buffer)
    c.close()

    const sends = await sendsOf('movie.mov')
    expect(sends).toHaveLength(1)
    expect((await transferFiles(client, (sends[0] as { transferid: string }).transferid)).get('movie.mov')).toBe(md5(data))
    expect(await sendsOf('movie.mov', 2, 3000)).toHaveLength(1)
    expect(await sendsOf('._movie.mov', 1, 1000)).toHaveLength(0)
    expect(await sendsOf('.DS_Store', 1, 1000)).toHaveLength(0)
  })
})

describe('who gets in', () => {
  it('refuses every call of a connection from an unprivileged source port (AUTH_TOOWEAK)', async () => {
    const c = await RpcClient.connect(server.port, { unprivileged: true })
    c.send(c.callRecord(NFS_PROGRAM, 3, 0))
    const r = await c.reply()
    expect([r.uint32(), r.uint32(), r.uint32(), r.uint32(), r.uint32()].slice(1)).toEqual([1, 1, 1, 5]) // REPLY, MSG_DENIED, AUTH_ERROR, AUTH_TOOWEAK
    c.close()
  })

  it('answers NFS3ERR_ACCES to an AUTH_UNIX uid other than the owner\'s, and libnfs with another uid mounts nothing', async () => {
    const c = await RpcClient.connect(server.port)
    const root = await handleOf(c, [])
    c.uid = 4321
    const r = await c.call(NFS_PROGRAM, 3, 1, (w) => w.opaque(root))
    expect(r.uint32()).toBe(13)
    const mnt = await c.call(MOUNT_PROGRAM, 3, 1, (w) => w.string('/'))
    expect(mnt.uint32()).toBe(13)
    c.close()
    const ls = await libnfs('nfs-ls', `${nfsUrl(server.port, '/inbox')}&uid=4321&gid=4321`)
    expect(ls.code).not.toBe(0)
    expect(listedNames(ls.stdout)).toEqual([])
  })

  it('listens on 127.0.0.1 alone', async () => {
    const ss = await run('ss', ['-ltnH', `sport = :${server.port}`])
    const local = ss.stdout.split('\n').filter(Boolean).map((l) => l.trim().split(/\s+/)[3])
    expect(local).toEqual([`127.0.0.1:${server.port}`])
  })
})
