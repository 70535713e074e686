// What other local users may reach on a mount with allowOther is what the modes shown let the
// kernel give them (default_permissions): these are the modes the core shows, and the
// addresses it writes, for what is private to the owner.
import { describe, expect, it } from 'vitest'
import { TransferFileSystem } from '../../src/vfs/filesystem.js'
import { FakeCatalog, FakeClock, FakeContent, makeFile, makeTransfer, readAll } from './fakes.js'

const O_WRONLY = 1
const O_TRUNC = 0o1000

function setup() {
  const catalog = new FakeCatalog()
  const fs = new TransferFileSystem({ catalog, content: new FakeContent(), clock: new FakeClock(), settings: { uid: 1234, gid: 5678 } })
  return { catalog, fs }
}

const perm = async (fs: TransferFileSystem, path: string): Promise<number> => (await fs.getattr(path)).mode & 0o7777

/** A transfer whose addresses carry a recipient's trackid and an unlock token, as the service gives them once a password opened it. */
function withTokens(id: string, fields: object = {}) {
  const t = makeTransfer({ id, subject: `Subject ${id}`, url: `https://files.test/d/${id}?trackid=trk-${id}&token=tok-${id}`, ...fields })
  t.files = [makeFile(id, 'photo.JPG', Buffer.from('jpeg bytes')), makeFile(id, 'notes')]
  for (const f of t.files) f.downloadurl = `${f.downloadurl}?trackid=trk-${id}&token=tok-${id}`
  return t
}

describe('a password-protected transfer', () => {
  it('is the owner\'s alone, locked and unlocked; its details and attributes carry no token or trackid', async () => {
    const { catalog, fs } = setup()
    catalog.add(withTokens('p1', { passwordprotected: true }), 'inbox', 'open sesame')
    const [name] = await fs.readdir('/inbox')
    const dir = `/inbox/${name}`
    expect(await perm(fs, dir)).toBe(0o500)
    const fh = await fs.open(`${dir}/.password`, O_WRONLY | O_TRUNC)
    await fs.write(`${dir}/.password`, fh, Buffer.from('open sesame\n'), 0)
    await fs.flush(`${dir}/.password`, fh)
    await fs.release(`${dir}/.password`, fh)
    expect(await fs.readdir(dir)).toEqual(['.transfer.json', 'photo.JPG', 'notes'])
    expect(await perm(fs, dir)).toBe(0o500)
    expect(await perm(fs, `${dir}/photo.JPG`)).toBe(0o400)
    expect(await perm(fs, `${dir}/.transfer.json`)).toBe(0o400)
    expect(await perm(fs, '/by-id/p1/notes')).toBe(0o400)
    const json = (await readAll(fs, `${dir}/.transfer.json`)).toString()
    expect(json).not.toMatch(/tok-p1|trackid=/)
    expect(JSON.parse(json).files[0].downloadurl).toMatch(/^https:\/\/files\.test\/p1\/\d+$/)
    expect((await fs.getxattr(`${dir}/photo.JPG`, 'user.xdg.origin.url')).toString()).toBe('https://files.test/d/p1')
  })

  it('is the owner\'s alone when known only as locked (sent from elsewhere, its password not given)', async () => {
    const { catalog, fs } = setup()
    catalog.add(withTokens('p3', { passwordprotected: true }), 'sent', 'pw3')
    const [name] = await fs.readdir('/sent')
    expect(await fs.readdir(`/sent/${name}`)).toEqual(['.transfer.json', '.password'])
    expect([await perm(fs, `/sent/${name}`), await perm(fs, `/sent/${name}/.transfer.json`)]).toEqual([0o700, 0o400])
  })

  it('while one without a password is everyone\'s to read, as before', async () => {
    const { catalog, fs } = setup()
    catalog.add(withTokens('o1'))
    const [name] = await fs.readdir('/inbox')
    expect([await perm(fs, `/inbox/${name}`), await perm(fs, `/inbox/${name}/notes`), await perm(fs, `/inbox/${name}/.transfer.json`)]).toEqual([0o555, 0o444, 0o444])
    expect((await readAll(fs, `/inbox/${name}/.transfer.json`)).toString()).not.toContain('trk-o1')
  })
})

describe('a transfer sent from this machine', () => {
  it('shows each file as readable by others as it was in the outbox, and its folder open to whoever reads any of it', async () => {
    const { catalog, fs } = setup()
    catalog.add(withTokens('s1', { subject: 'Mixed' }), 'sent')
    catalog.add(withTokens('s2', { subject: 'Private' }), 'sent')
    catalog.add(withTokens('s3', { subject: 'Old record' }), 'sent')
    catalog.sent = [
      { id: 's1', readers: { 'photo.JPG': 0, notes: 0o044 } },
      { id: 's2', readers: { 'photo.JPG': 0, notes: 0 } },
      { id: 's3' },
    ]
    const names = await fs.readdir('/sent')
    const folder = (subject: string): string => `/sent/${names.find((n) => n.includes(subject))!}`
    expect([await perm(fs, folder('Mixed')), await perm(fs, `${folder('Mixed')}/photo.JPG`), await perm(fs, `${folder('Mixed')}/notes`)]).toEqual([0o755, 0o400, 0o444])
    expect([await perm(fs, folder('Private')), await perm(fs, `${folder('Private')}/notes`), await perm(fs, `${folder('Private')}/.transfer.json`)]).toEqual([0o700, 0o400, 0o400])
    // A record from before readers were kept shows as sent transfers always did.
    expect([await perm(fs, folder('Old record')), await perm(fs, `${folder('Old record')}/notes`)]).toEqual([0o755, 0o444])
  })
})

describe('search/ and by-id/', () => {
  it('let other users list them, but look up nothing in them (r without x for group and other)', async () => {
    const { fs } = setup()
    expect([await perm(fs, '/search'), await perm(fs, '/by-id')]).toEqual([0o544, 0o544])
  })
})
