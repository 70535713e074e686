// The mount's core with sending, driven op by op as the FUSE adapter would (no kernel),
// against the real local service: outbox routing, files added to a sent transfer,
// `.forward`, `.status` telling what is sent, and refusals that show their reason.
import { constants as C, promises as fsp } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TransferClient } from '../../src/api/client.js'
import { ReadPath } from '../../src/read/content.js'
import { ServiceRangeSource } from '../../src/read/service-source.js'
import { FileSentLog } from '../../src/send/sent-log.js'
import { openSending, type MountSending } from '../../src/send/mount-sending.js'
import { TransferFileSystem } from '../../src/vfs/filesystem.js'
import { parseAddresses } from '../../src/vfs/areas/additions.js'
import { ServiceCatalog } from '../../src/vfs/service-catalog.js'
import { startTestService, type TestService } from '../support/service.js'
import { toBuffer } from '../../src/read/bytes.js'

let service: TestService
let client: TransferClient
let dataDir: string
let sending: MountSending
let fs: TransferFileSystem

const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex')

async function writeFile(p: string, data: Buffer): Promise<void> {
  const fh = await fs.create(p, 0o644)
  await fs.write(p, fh, data, 0)
  await fs.flush(p, fh)
  await fs.release(p, fh)
}

async function until<T>(what: string, f: () => Promise<T | undefined | null | false>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const v = await f().catch(() => undefined)
    if (v) return v
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

async function sentFolderOf(id: string): Promise<string> {
  return until(`sent folder of ${id}`, async () => (await fs.readdir('/sent')).find((n) => n.endsWith(`(${id})`)))
}

beforeAll(async () => {
  service = await startTestService()
  // An account that may send to 2 recipients at most: a third is refused.
  await service.controls.createUser({ email: 'limited@example.com', password: 'pw-limited-123456', maxrecipients: 2 })
  client = new TransferClient({ apiUrl: service.baseUrl, apiKey: service.apiKey, ca: service.caPem })
  await client.auth.login('limited@example.com', 'pw-limited-123456')
  dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'vfs-sending-'))
  const sentFile = path.join(dataDir, 'sent.jsonl')
  const catalog = new ServiceCatalog(client, { list: () => new FileSentLog(sentFile).list() })
  const content = await ReadPath.create(new ServiceRangeSource(client), { diskCacheDir: path.join(dataDir, 'cache') })
  fs = new TransferFileSystem({ catalog, content })
  const tree = fs
  sending = await openSending({
    client, dataDir, options: { settleMs: 300, retryBaseDelayMs: 200 }, statusIntervalMs: 100,
    onSentChanged: (id) => tree.store.refreshSent(id),
  })
  fs.attachSending(sending)
})

afterAll(async () => {
  await fs?.shutdown()
  await client?.close()
  await service?.close()
  if (dataDir) await fsp.rm(dataDir, { recursive: true, force: true })
})

describe('sending through the mount core', () => {
  it('puts outbox/ at the root, between sent/ and by-id/, a folder the user may write', async () => {
    expect(await fs.readdir('/')).toEqual(['inbox', 'sent', 'outbox', 'by-id', 'search', '.status'])
    expect((await fs.getattr('/outbox')).mode).toBe(C.S_IFDIR | 0o755)
  })

  it('a file written to outbox/ becomes one transfer, listed under sent/ with its bytes', async () => {
    const data = Buffer.alloc(300_000, 7)
    await writeFile('/outbox/report.bin', data)
    expect(await fs.readdir('/outbox')).toEqual(['report.bin'])
    expect((await fs.getattr('/outbox/report.bin')).size).toBe(data.length)
    await until('outbox empty', async () => (await fs.readdir('/outbox')).length === 0)
    const [rec] = await sending.sentLog.list()
    expect(rec?.subject).toBe('report.bin')
    const t = await client.transfers.details(rec!.transferid, { filesLimit: -1 })
    expect(t.status).toBe('STATUS_COMPLETE')
    expect(t.files?.map((f) => [f.filename, f.md5])).toEqual([['report.bin', md5(data)]])
    const folder = await sentFolderOf(rec!.transferid)
    expect(await fs.readdir(`/sent/${folder}`)).toEqual(expect.arrayContaining(['report.bin', '.forward', '.transfer.json']))
  })

  it('a file copied into a sent folder is added to that transfer (no second transfer)', async () => {
    const [rec] = await sending.sentLog.list()
    const folder = await sentFolderOf(rec!.transferid)
    const extra = Buffer.from('added later\n')
    await fs.mkdir(`/sent/${folder}/more`, 0o755)
    await writeFile(`/sent/${folder}/more/extra.txt`, extra)
    // Visible at once, from the staging, before it is uploaded.
    expect(await fs.readdir(`/sent/${folder}/more`)).toEqual(['extra.txt'])
    await until('added', async () => {
      const t = await client.transfers.details(rec!.transferid, { filesLimit: -1 })
      return t.files?.some((f) => f.filename === 'more/extra.txt' && f.md5 === md5(extra))
    })
    expect((await sending.sentLog.list()).length).toBe(1)
    const fh = await fs.open(`/sent/${folder}/more/extra.txt`, C.O_RDONLY)
    expect((toBuffer(await fs.read(`/sent/${folder}/more/extra.txt`, fh, 0, 100))).toString()).toBe('added later\n')
    await fs.release(`/sent/${folder}/more/extra.txt`, fh)
  })

  it('writing addresses to .forward forwards the transfer; a refusal fails the write', async () => {
    const [rec] = await sending.sentLog.list()
    const folder = await sentFolderOf(rec!.transferid)
    const p = `/sent/${folder}/.forward`
    await expect(fs.open(p, C.O_RDONLY)).rejects.toMatchObject({ code: 'EACCES' })
    const fh = await fs.open(p, C.O_WRONLY | C.O_TRUNC)
    await fs.truncate(p, 0)
    await fs.write(p, fh, Buffer.from('carol@example.com\ndave@example.com\n'), 0)
    await fs.flush(p, fh)
    await fs.release(p, fh)
    const mail = await service.controls.mail()
    const to = mail.filter((m) => m.kind === 'forward' && m.transferid === rec!.transferid).map((m) => m.to).sort()
    expect(to).toEqual(['carol@example.com', 'dave@example.com'])
    expect(await fs.readdir(`/sent/${folder}`)).toContain('.forward')
    // A refusal fails the write of the line (shells report a failed write, not a failed close).
    const bad = await fs.open(p, C.O_WRONLY)
    await expect(fs.write(p, bad, Buffer.from('not an address\n'), 0)).rejects.toMatchObject({ responsestatus: 'InvalidEmail' })
    await fs.release(p, bad)
    // A last line without a newline goes on flush (here: a third recipient, over this account's limit).
    const last = await fs.open(p, C.O_WRONLY)
    expect(await fs.write(p, last, Buffer.from('erin@example.com'), 0)).toBe(16)
    await expect(fs.flush(p, last)).rejects.toMatchObject({ responsestatus: 'TooManyRecipients' })
    await fs.release(p, last)
  })

  it('a refused send shows its reason in .status and goes once the folder is renamed', async () => {
    const three = 'bob@example.com,x@example.com,y@example.com'
    await fs.mkdir(`/outbox/${three}`, 0o755)
    await writeFile(`/outbox/${three}/a.txt`, Buffer.from('a'))
    // The owner's alone (it names private sends). A live file: size 0 as in /proc, each open a fresh text, and its handle tells the adapter so (direct_io).
    const attr = await fs.getattr('/.status')
    expect([attr.mode & C.S_IFMT, attr.mode & 0o777, attr.size]).toEqual([C.S_IFREG, 0o400, 0])
    const statusText = async (): Promise<string> => {
      const fh = await fs.open('/.status', C.O_RDONLY)
      expect(fs.isLive(fh)).toBe(true)
      const text = toBuffer(await fs.read('/.status', fh, 0, 1 << 20)).toString('utf8')
      await fs.release('/.status', fh)
      return text
    }
    await until('refusal in .status', async () => /failed\s+bob@example.com,x@example.com,y@example.com\/a.txt[\s\S]*error: TooManyRecipients/.test(await statusText()))
    await fs.rename(`/outbox/${three}`, '/outbox/bob@example.com')
    await until('sent after the rename', async () => (await fs.readdir('/outbox/bob@example.com')).length === 0, 30_000)
    const mail = await service.controls.mail()
    expect(mail.some((m) => m.kind === 'recipient' && m.to === 'bob@example.com' && m.subject.includes('a.txt'))).toBe(true)
  })

  it('moves between the outbox and a sent folder are copies (EXDEV); remote files are read-only', async () => {
    const [rec] = await sending.sentLog.list()
    const folder = await sentFolderOf(rec!.transferid)
    await writeFile('/outbox/.hidden', Buffer.from('x'))
    await expect(fs.rename('/outbox/.hidden', `/sent/${folder}/hidden`)).rejects.toMatchObject({ code: 'EXDEV' })
    await expect(fs.unlink(`/sent/${folder}/report.bin`)).rejects.toMatchObject({ code: 'EROFS' })
    // A name at the top that is no folder of the mount is no place to move to either.
    await expect(fs.rename('/outbox/.hidden', '/elsewhere')).rejects.toMatchObject({ code: 'EXDEV' })
    await fs.unlink('/outbox/.hidden')
  })

  it("the mount's own files of a sent transfer are not staged as additions when opened for writing", async () => {
    const [rec] = await sending.sentLog.list()
    const folder = await sentFolderOf(rec!.transferid)
    const json = `/sent/${folder}/.transfer.json`
    await expect(fs.open(json, C.O_WRONLY)).rejects.toMatchObject({ code: 'EROFS' })
    await expect(fs.open(json, C.O_WRONLY | C.O_TRUNC)).rejects.toMatchObject({ code: 'EROFS' })
    // Still the transfer's details, not a staged file.
    expect((await fs.getattr(json)).mode & 0o777).toBe(0o444)
    expect(await fs.readdir(`/sent/${folder}`)).not.toContain('.transfer.json~')
    expect(await fs.listxattr(json)).toEqual([])
    await expect(fs.readlink(`/.status/x`)).rejects.toMatchObject({ code: 'EINVAL' })
  })
})

describe('parseAddresses', () => {
  it('takes one address per line, and commas or blanks too', () => {
    expect(parseAddresses('a@b.c\r\n d@e.f, g@h.i\n\n')).toEqual(['a@b.c', 'd@e.f', 'g@h.i'])
  })
})
