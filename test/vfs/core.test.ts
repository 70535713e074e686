import { describe, expect, it } from 'vitest'
import { NetworkError } from '../../src/api/errors.js'
import { FsError } from '../../src/vfs/core.js'
import { TransferFileSystem } from '../../src/vfs/filesystem.js'
import { FakeCatalog, FakeClock, FakeContent, makeFile, makeTransfer, readAll } from './fakes.js'
import { toBuffer } from '../../src/read/bytes.js'

const S_IFDIR = 0o040000
const S_IFREG = 0o100000
const O_WRONLY = 1
const O_RDWR = 2
const O_TRUNC = 0o1000
const TTL = 30_000

function setup() {
  const catalog = new FakeCatalog()
  const content = new FakeContent()
  const clock = new FakeClock()
  const fs = new TransferFileSystem({ catalog, content, clock, settings: { uid: 1234, gid: 5678 } })
  return { catalog, content, clock, fs }
}

async function writePassword(fs: TransferFileSystem, path: string, text: string): Promise<void> {
  const fh = await fs.open(path, O_WRONLY | O_TRUNC)
  try {
    await fs.truncate(path, 0)
    expect(await fs.write(path, fh, Buffer.from(text), 0)).toBe(Buffer.byteLength(text))
    await fs.flush(path, fh)
  } finally {
    await fs.release(path, fh)
  }
}

function withFiles(id: string, fields: Parameters<typeof makeTransfer>[0] | object = {}) {
  const t = makeTransfer({ id, subject: `Subject ${id}`, ...fields })
  t.files = [makeFile(id, 'photo.JPG', Buffer.from('jpeg bytes')), makeFile(id, 'notes')]
  return t
}

describe('attributes', () => {
  it('files 0444, folders 0555, sent transfer folders 0755, owner = mounting user, mtime = sentdate', async () => {
    const { catalog, fs, clock } = setup()
    const sentdate = Date.UTC(2026, 10, 20, 9, 30)
    catalog.add(withFiles('in1', { sentdate }))
    catalog.add(withFiles('out1', { sentdate }), 'sent')
    const [inbox] = await fs.readdir('/inbox')
    const [sent] = await fs.readdir('/sent')

    const root = await fs.getattr('/')
    expect(root.mode).toBe(S_IFDIR | 0o555)
    expect(root.mtime.getTime()).toBe(clock.now())
    expect((await fs.getattr('/inbox')).mode).toBe(S_IFDIR | 0o555)
    expect((await fs.getattr('/sent')).mode).toBe(S_IFDIR | 0o555)

    const folder = await fs.getattr(`/inbox/${inbox}`)
    expect(folder.mode).toBe(S_IFDIR | 0o555)
    expect(folder.mtime.getTime()).toBe(sentdate)
    expect((await fs.getattr(`/sent/${sent}`)).mode).toBe(S_IFDIR | 0o755)

    const file = await fs.getattr(`/inbox/${inbox}/photo.JPG`)
    expect(file).toMatchObject({ mode: S_IFREG | 0o444, size: 10, uid: 1234, gid: 5678, nlink: 1 })
    expect(file.mtime.getTime()).toBe(sentdate)
  })

  it('.transfer.json: pretty details, never the key, size = its byte length; owner view under sent/', async () => {
    const { catalog, fs } = setup()
    const received = withFiles('in1', { subject: 'Grüße' })
    const sent = withFiles('out1', { recipients: [{ email: 'bob@example.com', downloadlink: 'https://x/d', delivered: true, deliveryerror: null }] })
    catalog.add(received)
    catalog.add(sent, 'sent')
    for (const dir of ['/inbox', '/sent']) {
      const [name] = await fs.readdir(dir)
      const path = `${dir}/${name}/.transfer.json`
      const bytes = await readAll(fs, path)
      expect((await fs.getattr(path)).size).toBe(bytes.length)
      const text = bytes.toString('utf8')
      expect(text).toContain('\n  "id"')
      expect(text).not.toContain('secret-key')
      expect(JSON.parse(text)).not.toHaveProperty('key')
    }
    const [sentName] = await fs.readdir('/sent')
    const owner = JSON.parse((await readAll(fs, `/sent/${sentName}/.transfer.json`)).toString())
    expect(owner.recipients[0].email).toBe('bob@example.com')
    expect(JSON.parse((await readAll(fs, '/by-id/in1/.transfer.json')).toString()).subject).toBe('Grüße')
  })

  it('xattrs: user.md5, user.xdg.origin.url, user.mime_type; absent → ENODATA; other namespaces → EOPNOTSUPP', async () => {
    const { catalog, fs } = setup()
    const t = catalog.add(withFiles('x1'))
    t.files[1]!.md5 = null
    const photo = '/by-id/x1/photo.JPG'
    expect(await fs.listxattr(photo)).toEqual(['user.md5', 'user.xdg.origin.url', 'user.mime_type'])
    expect((await fs.getxattr(photo, 'user.md5')).toString()).toBe(t.files[0]!.md5)
    expect((await fs.getxattr(photo, 'user.xdg.origin.url')).toString()).toBe('https://transfer.test/d/x1')
    expect((await fs.getxattr(photo, 'user.mime_type')).toString()).toBe('image/jpeg')
    expect((await fs.getxattr('/by-id/x1/notes', 'user.mime_type')).toString()).toBe('application/octet-stream')
    await expect(fs.getxattr('/by-id/x1/notes', 'user.md5')).rejects.toMatchObject({ code: 'ENODATA' })
    await expect(fs.getxattr(photo, 'user.other')).rejects.toMatchObject({ code: 'ENODATA' })
    await expect(fs.getxattr(photo, 'system.posix_acl_access')).rejects.toMatchObject({ code: 'EOPNOTSUPP' })
    await expect(fs.getxattr(photo, 'security.selinux')).rejects.toMatchObject({ code: 'EOPNOTSUPP' })
    // The transfer's folder: its page, from the listing (the folders below it: nothing).
    expect(await fs.listxattr('/by-id/x1')).toEqual(['user.xdg.origin.url'])
    expect((await fs.getxattr('/by-id/x1', 'user.xdg.origin.url')).toString()).toBe('https://transfer.test/d/x1')
  })

  it('user.transferfs.shown: the state, then `pin` and `page`, in one short read; empty where none applies; not listed', async () => {
    const { catalog, fs } = setup()
    catalog.add(withFiles('x1'))
    const shown = async (p: string) => (await fs.getxattr(p, 'user.transferfs.shown')).toString()
    // No pinner here: no state, no pin; the files and the transfer's folder carry its page.
    expect(await shown('/by-id/x1/photo.JPG')).toBe('\npage')
    expect(await shown('/by-id/x1')).toBe('\npage')
    expect(await shown('/')).toBe('')
    expect(await shown('/by-id/x1/.transfer.json')).toBe('')
    await expect(fs.getxattr('/by-id/x1/nothing', 'user.transferfs.shown')).rejects.toMatchObject({ code: 'ENOENT' })
    await expect(fs.getxattr('/nowhere', 'user.transferfs.shown')).rejects.toMatchObject({ code: 'ENOENT' })
    expect(await fs.listxattr('/by-id/x1/photo.JPG')).not.toContain('user.transferfs.shown')
  })

  it('statfs shows the account storage use and limit', async () => {
    const { catalog, fs } = setup()
    catalog.accountInfo = { storageinuse: 3 * 4096 + 1, storagelimit: 100 * 4096 }
    const st = await fs.statfs('/')
    expect(st).toMatchObject({ bsize: 4096, frsize: 4096, blocks: 100, namemax: 255 })
    expect(st.bfree).toBe(96)
    expect(st.bavail).toBe(96)
    catalog.accountInfo = { storageinuse: 5 * 4096, storagelimit: 0 }
    fs.refresh()
    await fs.statfs('/')
    await fs.whenIdle()
    const unlimited = await fs.statfs('/')
    expect(unlimited.blocks - unlimited.bfree).toBe(5)
    expect(unlimited.bfree).toBeGreaterThan(2 ** 30)
  })

  it('after an inbox listing, statfs makes no call: the pages describe the account', async () => {
    const { catalog, fs } = setup()
    catalog.accountInfo = { storageinuse: 7 * 4096, storagelimit: 50 * 4096 }
    await fs.readdir('/inbox')
    const st = await fs.statfs('/')
    expect(st.blocks - st.bfree).toBe(7)
    expect(catalog.calls).toMatchObject({ inbox: 1, account: 0 })
  })
})

describe('reading', () => {
  it('reads remote files through one FileContent handle per open, closed on release; EBADF for unknown handles', async () => {
    const { catalog, content, fs } = setup()
    const t = catalog.add(withFiles('r1'))
    content.put(t.files[0]!, Buffer.from('jpeg bytes'))
    const path = '/by-id/r1/photo.JPG'
    const a = await fs.open(path, 0)
    const b = await fs.open(path, 0)
    expect(a).not.toBe(b)
    expect(content.opened).toBe(2)
    expect((toBuffer(await fs.read(path, a, 5, 4))).toString()).toBe('byte')
    expect((toBuffer(await fs.read(path, b, 0, 100))).toString()).toBe('jpeg bytes')
    expect((toBuffer(await fs.read(path, a, 10, 10))).length).toBe(0)
    await fs.release(path, a)
    expect(content.closed).toBe(1)
    await expect(fs.read(path, a, 0, 1)).rejects.toMatchObject({ code: 'EBADF' })
    await expect(fs.release(path, a)).rejects.toMatchObject({ code: 'EBADF' })
    const c = await fs.open(path, 0)
    expect(c).not.toBe(b)
    await fs.release(path, b)
    await fs.release(path, c)
    expect(fs.openHandles).toBe(0)
  })

  it('a listing readies the read of its first file: the inbox its newest transfer\'s, a transfer folder its own', async () => {
    const { catalog, content, fs } = setup()
    const older = catalog.add(withFiles('p1', { sentdate: '2024-01-01T00:00:00Z' }))
    const newer = catalog.add(withFiles('p2', { sentdate: '2024-02-01T00:00:00Z' }))
    const names = await fs.readdir('/inbox')
    // The inbox pages carry each transfer's files: the newest transfer's first file is ready.
    expect(content.prepared).toEqual([newer.files[0]!.downloadurl])
    const olderFolder = names.find((n) => n.includes('p1'))!
    await fs.readdir(`/inbox/${olderFolder}`)
    expect(content.prepared.at(-1)).toBe(older.files[0]!.downloadurl)
    await fs.readdir('/sent')
    expect(content.prepared).toHaveLength(2)
  })

  it('refuses every write outside .password with EROFS', async () => {
    const { catalog, fs } = setup()
    catalog.add(withFiles('w1'))
    const file = '/by-id/w1/notes'
    await expect(fs.open(file, O_WRONLY)).rejects.toMatchObject({ code: 'EROFS' })
    await expect(fs.open(file, O_RDWR)).rejects.toMatchObject({ code: 'EROFS' })
    await expect(fs.open(file, O_TRUNC)).rejects.toMatchObject({ code: 'EROFS' })
    await expect(fs.open('/.status', O_WRONLY)).rejects.toMatchObject({ code: 'EROFS' })
    await expect(fs.create('/by-id/w1/new', 0o644)).rejects.toMatchObject({ code: 'EROFS' })
    await expect(fs.create('/outbox/new', 0o644)).rejects.toMatchObject({ code: 'EROFS' })
    await expect(fs.truncate(file, 0)).rejects.toMatchObject({ code: 'EROFS' })
    await expect(fs.unlink(file)).rejects.toMatchObject({ code: 'EROFS' })
    await expect(fs.rename(file, '/by-id/w1/x')).rejects.toMatchObject({ code: 'EROFS' })
    await expect(fs.mkdir('/inbox/x', 0o755)).rejects.toMatchObject({ code: 'EROFS' })
    await expect(fs.rmdir('/by-id/w1')).rejects.toMatchObject({ code: 'EROFS' })
    await expect(fs.chmod(file, 0o600)).rejects.toMatchObject({ code: 'EROFS' })
    await expect(fs.utimens(file, new Date(), new Date())).rejects.toMatchObject({ code: 'EROFS' })
    await expect(fs.setxattr(file, 'user.x', Buffer.from('1'))).rejects.toMatchObject({ code: 'EROFS' })
    const fh = await fs.open(file, 0)
    await expect(fs.write(file, fh, Buffer.from('x'), 0)).rejects.toMatchObject({ code: 'EBADF' })
    await expect(fs.ftruncate(file, fh, 0)).rejects.toMatchObject({ code: 'EROFS' })
    await fs.release(file, fh)
    await expect(fs.open('/by-id/w1', 0)).rejects.toMatchObject({ code: 'EISDIR' })
  })
})

describe('password-protected transfers', () => {
  function protectedSetup() {
    const s = setup()
    const t = withFiles('p1', { subject: 'Locked', passwordprotected: true, trackid: 'trk-p1' })
    s.catalog.add(t, 'inbox', 'open sesame')
    return { ...s, t }
  }

  it('show only .transfer.json and a write-only .password until the right password is written', async () => {
    const { catalog, fs } = protectedSetup()
    const [name] = await fs.readdir('/inbox')
    const dir = `/inbox/${name}`
    expect(await fs.readdir(dir)).toEqual(['.transfer.json', '.password'])
    expect(catalog.calls.details).toBe(0)
    expect((await fs.getattr(`${dir}/.password`)).mode).toBe(S_IFREG | 0o200)
    await expect(fs.open(`${dir}/.password`, 0)).rejects.toMatchObject({ code: 'EACCES' })
    expect(JSON.parse((await readAll(fs, `${dir}/.transfer.json`)).toString())).toMatchObject({ id: 'p1', passwordprotected: true })
    await expect(fs.getattr(`${dir}/photo.JPG`)).rejects.toMatchObject({ code: 'ENOENT' })

    await expect(writePassword(fs, `${dir}/.password`, 'wrong\n')).rejects.toMatchObject({ code: 'EACCES' })
    expect(await fs.readdir(dir)).toEqual(['.transfer.json', '.password'])

    await writePassword(fs, `${dir}/.password`, 'open sesame\n')
    expect(catalog.passwordsTried).toEqual(['wrong', 'open sesame'])
    expect(await fs.readdir(dir)).toEqual(['.transfer.json', 'photo.JPG', 'notes'])
    expect((await readAll(fs, `${dir}/photo.JPG`)).length).toBe(10)
    expect((await readAll(fs, `${dir}/.transfer.json`)).toString()).not.toContain('secret-key')
    // Unlocked for the life of the mount: by-id sees it open too, and refreshes send the password.
    expect(await fs.readdir('/by-id/p1')).toEqual(['.transfer.json', 'photo.JPG', 'notes'])
    fs.refresh()
    await fs.readdir(dir)
    await fs.whenIdle()
    expect(catalog.passwordsTried.at(-1)).toBe('open sesame')
    expect(fs.openHandles).toBe(0)
  })

  it('unlock through by-id, by trackid, for a transfer known to no listing', async () => {
    const { catalog, fs } = setup()
    catalog.add(withFiles('p2', { passwordprotected: true, trackid: 'trk-p2' }), 'nowhere', 'pw2')
    expect(await fs.readdir('/by-id/trk-p2')).toEqual(['.transfer.json', '.password'])
    expect(JSON.parse((await readAll(fs, '/by-id/trk-p2/.transfer.json')).toString())).toEqual({ trackid: 'trk-p2', passwordprotected: true })
    await expect(writePassword(fs, '/by-id/trk-p2/.password', 'nope')).rejects.toMatchObject({ code: 'EACCES' })
    await writePassword(fs, '/by-id/trk-p2/.password', 'pw2')
    expect(await fs.readdir('/by-id/trk-p2')).toEqual(['.transfer.json', 'photo.JPG', 'notes'])
    // The same password now opens it by its id as well.
    expect(await fs.readdir('/by-id/p2')).toEqual(['.transfer.json', 'photo.JPG', 'notes'])
  })

  it('a network failure while unlocking is the network error, not EACCES, and unlocks nothing', async () => {
    const { catalog, fs } = protectedSetup()
    const [name] = await fs.readdir('/inbox')
    catalog.offline = true
    await expect(writePassword(fs, `/inbox/${name}/.password`, 'open sesame')).rejects.toBeInstanceOf(NetworkError)
    expect(await fs.readdir(`/inbox/${name}`)).toEqual(['.transfer.json', '.password'])
  })
})

describe('by-id', () => {
  it('resolves ids and trackids by details, lists nothing, ENOENT for unknown ones (cached for the TTL)', async () => {
    const { catalog, fs } = setup()
    catalog.add(withFiles('hidden1', { trackid: 'trk-1' }), 'nowhere')
    expect(await fs.readdir('/by-id/hidden1')).toEqual(['.transfer.json', 'photo.JPG', 'notes'])
    expect(await fs.readdir('/by-id/trk-1')).toEqual(['.transfer.json', 'photo.JPG', 'notes'])
    expect(await fs.readdir('/by-id')).toEqual([])
    await expect(fs.getattr('/by-id/nothing')).rejects.toMatchObject({ code: 'ENOENT' })
    const calls = catalog.totalCalls()
    await expect(fs.getattr('/by-id/nothing')).rejects.toMatchObject({ code: 'ENOENT' })
    expect(catalog.totalCalls()).toBe(calls)
  })

  it('uses the inbox listing for transfers it already knows, without a call', async () => {
    const { catalog, fs } = setup()
    catalog.add(withFiles('k1', { trackid: 'trk-k1' }))
    await fs.readdir('/inbox')
    const calls = catalog.totalCalls()
    await fs.getattr('/by-id/k1')
    await fs.getattr('/by-id/trk-k1')
    expect(catalog.totalCalls()).toBe(calls)
  })

  it('expired, cancelled and deleted transfers: hidden from the inbox, by-id shows only .transfer.json', async () => {
    const { catalog, fs } = setup()
    catalog.add(withFiles('live'))
    catalog.add(withFiles('expired', { isexpired: true }))
    catalog.add(withFiles('cancelled', { status: 'STATUS_CANCELLED' }))
    catalog.add(withFiles('started', { status: 'STATUS_STARTED' }))
    expect(await fs.readdir('/inbox')).toEqual(['2026-11-20 Subject live (live)'])
    expect(await fs.readdir('/by-id/expired')).toEqual(['.transfer.json'])
    expect(JSON.parse((await readAll(fs, '/by-id/expired/.transfer.json')).toString()).isexpired).toBe(true)
    expect(await fs.readdir('/by-id/cancelled')).toEqual(['.transfer.json'])
    await expect(fs.getattr('/by-id/expired/photo.JPG')).rejects.toMatchObject({ code: 'ENOENT' })
  })
})

describe('listings: cache, refresh, offline', () => {
  it('answers getattr, lookup and readdir from memory within the TTL', async () => {
    const { catalog, fs } = setup()
    catalog.add(withFiles('c1'))
    const [name] = await fs.readdir('/inbox')
    await fs.readdir(`/inbox/${name}`)
    const calls = catalog.totalCalls()
    for (let i = 0; i < 50; i++) {
      await fs.getattr(`/inbox/${name}`)
      await fs.getattr(`/inbox/${name}/photo.JPG`)
      await fs.readdir(`/inbox/${name}`)
    }
    expect(catalog.totalCalls()).toBe(calls)
  })

  it('after the TTL serves the cached listing at once and refreshes it in the background, one call for many readers', async () => {
    const { catalog, clock, fs } = setup()
    catalog.add(withFiles('a1', { sentdate: Date.UTC(2026, 10, 1) }))
    expect(await fs.readdir('/inbox')).toHaveLength(1)
    catalog.add(withFiles('b2', { sentdate: Date.UTC(2026, 10, 2) }))
    clock.advance(TTL - 1)
    expect(await fs.readdir('/inbox')).toHaveLength(1)
    expect(catalog.calls.inbox).toBe(1)
    clock.advance(1)
    const release = catalog.hold()
    // The service is slow now: readers still get the cached listing at once.
    const stale = await Promise.all([fs.readdir('/inbox'), fs.readdir('/inbox'), fs.getattr('/inbox/2026-11-01 Subject a1 (a1)')])
    expect(stale[0]).toHaveLength(1)
    expect(stale[1]).toHaveLength(1)
    release()
    await fs.whenIdle()
    expect(catalog.calls.inbox).toBe(2)
    expect(await fs.readdir('/inbox')).toEqual(['2026-11-02 Subject b2 (b2)', '2026-11-01 Subject a1 (a1)'])
  })

  it('refreshes a transfer\'s files from its details with the same TTL', async () => {
    const { catalog, clock, fs } = setup()
    const t = catalog.add(withFiles('d1'))
    expect(await fs.readdir('/by-id/d1')).toHaveLength(3)
    t.files.push(makeFile('d1', 'added.txt'))
    clock.advance(TTL)
    const release = catalog.hold()
    expect(await fs.readdir('/by-id/d1')).toHaveLength(3)
    release()
    await fs.whenIdle()
    expect(catalog.calls.details).toBe(2)
    expect(await fs.readdir('/by-id/d1')).toContain('added.txt')
  })

  it('keeps the last known listing when the service is unreachable; only uncached content fails', async () => {
    const { catalog, clock, fs } = setup()
    catalog.add(withFiles('o1'))
    catalog.add(withFiles('o2'))
    const names = await fs.readdir('/inbox')
    await fs.readdir(`/inbox/${names[0]}`)
    catalog.offline = true
    clock.advance(TTL * 3)
    expect(await fs.readdir('/inbox')).toEqual(names)
    expect(await fs.readdir(`/inbox/${names[0]}`)).toHaveLength(3)
    await fs.whenIdle()
    expect(await fs.readdir('/inbox')).toEqual(names)
    // Every inbox folder's files came with the listing: readable offline too, without a call.
    expect(await fs.readdir(`/inbox/${names[1]}`)).toHaveLength(3)
    // A transfer the listings never showed needs the service.
    await expect(fs.readdir('/by-id/unknown1')).rejects.toBeInstanceOf(NetworkError)
    // A stat storm on uncached content while offline costs one call, not one per stat.
    const calls = catalog.calls.details
    for (let i = 0; i < 10; i++) await expect(fs.getattr('/by-id/unknown1/notes')).rejects.toBeInstanceOf(NetworkError)
    expect(catalog.calls.details).toBe(calls)
  })

  it('an inbox folder listed right after the inbox makes no call: its files came with the page', async () => {
    const { catalog, fs } = setup()
    for (let i = 0; i < 5; i++) catalog.add(withFiles(`p${i}`))
    const names = await fs.readdir('/inbox')
    const before = { ...catalog.calls }
    for (const name of names) expect(await fs.readdir(`/inbox/${name}`)).toHaveLength(3)
    expect(catalog.calls).toEqual(before)
  })

  it('first listing while offline fails with the network error, then works once back', async () => {
    const { catalog, clock, fs } = setup()
    catalog.add(withFiles('f1'))
    catalog.offline = true
    await expect(fs.readdir('/inbox')).rejects.toBeInstanceOf(NetworkError)
    catalog.offline = false
    clock.advance(10_000)
    expect(await fs.readdir('/inbox')).toHaveLength(1)
  })

  it('lists sent transfers from the sent ids, by their details (owner view)', async () => {
    const { catalog, fs } = setup()
    catalog.add(withFiles('s1', { subject: 'holiday.jpg', sentdate: Date.UTC(2026, 10, 22) }), 'sent')
    catalog.add(withFiles('s2', { passwordprotected: true }), 'sent', 'pw')
    catalog.add(withFiles('s3', { passwordprotected: true, subject: 'With pw' }), 'sent', 'pw3')
    catalog.sent.find((ref) => ref.id === 's3')!.password = 'pw3'
    const names = await fs.readdir('/sent')
    expect(names).toContain('2026-11-22 holiday.jpg (s1)')
    expect(names).toContain('undated (password protected) (s2)')
    expect(names).toContain('2026-11-20 With pw (s3)')
    expect(await fs.readdir('/sent/undated (password protected) (s2)')).toEqual(['.transfer.json', '.password'])
    expect(await fs.readdir('/sent/2026-11-20 With pw (s3)')).toEqual(['.transfer.json', 'link.url', 'photo.JPG', 'notes'])
  })

  it('a sent folder has its link as an Internet shortcut; an inbox folder has none', async () => {
    const { catalog, fs } = setup()
    catalog.add(withFiles('s1', { subject: 'plans', sentdate: Date.UTC(2026, 10, 22) }), 'sent')
    catalog.add(withFiles('i1', { subject: 'in', sentdate: Date.UTC(2026, 10, 22) }))
    const link = '/sent/2026-11-22 plans (s1)/link.url'
    expect((await readAll(fs, link)).toString()).toBe('[InternetShortcut]\nURL=https://transfer.test/d/s1\n')
    const attr = await fs.getattr(link)
    expect(attr.size).toBe('[InternetShortcut]\nURL=https://transfer.test/d/s1\n'.length)
    expect(attr.mode).toBe(S_IFREG | 0o444)
    const [inbox] = await fs.readdir('/inbox')
    expect(await fs.readdir(`/inbox/${inbox}`)).not.toContain('link.url')
    await expect(fs.getattr(`/inbox/${inbox}/link.url`)).rejects.toMatchObject({ code: 'ENOENT' })
  })
})

describe('probe names', () => {
  it('answer ENOENT at once, without any call to the service', async () => {
    const { catalog, fs } = setup()
    catalog.add(withFiles('pr1'))
    const probes = ['.DS_Store', '._photo.JPG', 'desktop.ini', 'Desktop.ini', '.hidden', '.Trash-1000', '.Trash', 'autorun.inf', '.directory', 'Thumbs.db', '.git']
    // Nothing loaded yet.
    for (const probe of probes) {
      for (const path of [`/${probe}`, `/inbox/${probe}`, `/sent/${probe}`, `/by-id/${probe}`, `/inbox/${probe}/x`, `/outbox/${probe}`]) {
        await expect(fs.getattr(path), path).rejects.toMatchObject({ code: 'ENOENT' })
      }
    }
    expect(catalog.totalCalls()).toBe(0)
    // The inbox is listed, the transfer's files are not loaded yet.
    const [name] = await fs.readdir('/inbox')
    const calls = catalog.totalCalls()
    for (const probe of probes) {
      for (const path of [`/inbox/${name}/${probe}`, `/by-id/pr1/${probe}`, `/inbox/${name}/${probe}/x`]) {
        await expect(fs.getattr(path), path).rejects.toMatchObject({ code: 'ENOENT' })
      }
    }
    expect(catalog.totalCalls()).toBe(calls)
  })

  it('do not hide a real file of that name once its folder is listed', async () => {
    const { catalog, fs } = setup()
    const t = catalog.add(withFiles('pr2'))
    t.files.push(makeFile('pr2', 'desktop.ini'))
    const [name] = await fs.readdir('/inbox')
    // The listing carried the folder's files: the real desktop.ini is there at once.
    expect(await fs.readdir(`/inbox/${name}`)).toContain('desktop.ini')
    expect((await fs.getattr(`/inbox/${name}/desktop.ini`)).mode).toBe(S_IFREG | 0o444)
  })
})

describe('FsError', () => {
  it('is made without a stack (an answer, not a fault) and leaves the stack limit of other errors as it was', () => {
    const limit = Error.stackTraceLimit
    const e = new FsError('ENOENT')
    expect(e).toMatchObject({ code: 'ENOENT', message: 'ENOENT', name: 'FsError' })
    expect(e.stack?.split('\n')).toHaveLength(1)
    expect(Error.stackTraceLimit).toBe(limit)
    expect(new Error('x').stack?.split('\n').length).toBeGreaterThan(1)
  })
})
