// The FUSE adapter on a real mount of an in-memory core (served by a mount daemon of its
// own, test/support/core-host.ts), driven by real tools in child processes.
import { createHash, randomBytes } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { mountCore, python, run, tempDir, useMounts } from '../support/mount.js'
import { memory, type MemorySpec } from './fixtures/cores.js'
import type { MemoryCore } from './fixtures/memory-core.js'

useMounts()

type UtimensCall = MemoryCore['utimensCalls'][number]

const big = randomBytes(3 * 1024 * 1024 + 17)

/** The sample files, with more files and faults. */
function sample(more: MemorySpec = {}): MemorySpec {
  return {
    ...more,
    dirs: ['/docs'],
    files: [
      ['/hello.txt', 'hello world\n', { 'user.md5': 'abc123', 'user.mime_type': 'text/plain' }],
      ['/big.bin', big],
      ['/docs/a.txt', 'A'],
      ...(more.files ?? []),
    ],
  }
}

describe('reading through the adapter', () => {
  it('serves cat, ls -l and md5sum', async () => {
    const m = await mountCore(memory(sample()))
    const cat = await run('cat', [path.join(m.dir, 'hello.txt')])
    expect(cat).toMatchObject({ code: 0, stdout: 'hello world\n' })

    const ls = await run('ls', ['-l', m.dir])
    expect(ls.code).toBe(0)
    expect(ls.stdout).toMatch(/-rw-r--r-- +1 +root +root +12 .* hello\.txt/)
    expect(ls.stdout).toMatch(new RegExp(`${big.length} .* big\\.bin`))
    expect(ls.stdout).toMatch(/^d.* docs$/m)

    const md5 = await run('md5sum', [path.join(m.dir, 'big.bin')])
    expect(md5.stdout.split(' ')[0]).toBe(createHash('md5').update(big).digest('hex'))

    const nested = await run('cat', [path.join(m.dir, 'docs/a.txt')])
    expect(nested.stdout).toBe('A')
    const df = await run('df', ['-B1', m.dir])
    expect(df.stdout).toMatch(/transferfs +4096000 +2048000 +2048000/)
  })
})

describe('reads answered at once', () => {
  it('bytes the core has at hand (no promise) are served, and every lent buffer comes back', async () => {
    const m = await mountCore(memory(sample({ atOnce: true })))
    const md5 = await run('md5sum', [path.join(m.dir, 'big.bin')])
    expect(md5.stdout.split(' ')[0]).toBe(createHash('md5').update(big).digest('hex'))
    expect((await run('cat', [path.join(m.dir, 'hello.txt')])).stdout).toBe('hello world\n')
    const readsAtOnce = await m.inspect<number>('core.readsAtOnce')
    expect(readsAtOnce).toBeGreaterThan(0)
    expect(await m.inspect('core.givenBack')).toBe(readsAtOnce)
  })
})

describe('errors become errno', () => {
  it('shows FsError codes and a 401 to cat and ls', async () => {
    const spec = sample({
      files: [['/gone.txt', 'x'], ['/secret.txt', 'x'], ['/login.txt', 'x'], ['/offline.txt', 'x']],
      faults: [
        ['/gone.txt', 'open', { kind: 'throw', error: { fs: 'ENOENT' } }],
        ['/secret.txt', 'open', { kind: 'throw', error: { fs: 'EACCES' } }],
        ['/login.txt', 'read', { kind: 'throw', error: { service: { message: 'unauthorized', status: 401, code: 'InvalidOrExpiredLoginToken' } } }],
        ['/offline.txt', 'read', { kind: 'throw', error: { other: 'something unexpected' } }],
        ['/locked', 'readdir', { kind: 'throw', error: { fs: 'EACCES' } }],
      ],
    })
    const m = await mountCore(memory({ ...spec, dirs: [...spec.dirs!, '/locked'] }))

    const gone = await run('cat', [path.join(m.dir, 'gone.txt')])
    expect(gone.code).not.toBe(0)
    expect(gone.stderr).toContain('No such file or directory')

    const secret = await run('cat', [path.join(m.dir, 'secret.txt')])
    expect(secret.stderr).toContain('Permission denied')

    const login = await run('cat', [path.join(m.dir, 'login.txt')])
    expect(login.code).not.toBe(0)
    expect(login.stderr).toContain('Permission denied')

    const unknown = await run('cat', [path.join(m.dir, 'offline.txt')])
    expect(unknown.stderr).toContain('Input/output error')

    const locked = await run('ls', [path.join(m.dir, 'locked')])
    expect(locked.code).not.toBe(0)
    expect(locked.stderr).toContain('Permission denied')

    const missing = await run('ls', [path.join(m.dir, 'nothing-here')])
    expect(missing.stderr).toContain('No such file or directory')
  })

  it('answers a read that never resolves within its deadline', async () => {
    const m = await mountCore(memory(sample({ files: [['/stuck.bin', 'never served']], faults: [['/stuck.bin', 'read', { kind: 'hang' }]] })), { settings: { readTimeoutMs: 1000 } })
    // If the adapter did not answer, fuse-native's timer would (ETIMEDOUT, "Connection timed out").
    const cat = await run('cat', [path.join(m.dir, 'stuck.bin')], { timeoutMs: 20_000 })
    expect(cat.code).toBe(1)
    expect(cat.stderr).toContain('Input/output error')
    // The mount still serves other files afterwards.
    expect((await run('cat', [path.join(m.dir, 'hello.txt')])).stdout).toBe('hello world\n')
  })

  it('answers when the core throws synchronously', async () => {
    const m = await mountCore(memory(sample({
      files: [['/sync.txt', 'x']],
      faults: [
        ['/sync.txt', 'read', { kind: 'throw-sync', error: { fs: 'EACCES' } }],
        ['/sync-stat.txt', 'getattr', { kind: 'throw-sync', error: { other: 'bug', type: 'TypeError' } }],
      ],
    })))
    const read = await run('cat', [path.join(m.dir, 'sync.txt')], { timeoutMs: 20_000 })
    expect(read.stderr).toContain('Permission denied')
    const stat = await run('stat', [path.join(m.dir, 'sync-stat.txt')], { timeoutMs: 20_000 })
    expect(stat.stderr).toContain('Input/output error')
  })
})

describe('extended attributes', () => {
  it('reads user.* names, answers ENODATA for absent ones and refuses system.*', async () => {
    const m = await mountCore(memory(sample()))
    const file = path.join(m.dir, 'hello.txt')
    const py = `
import os, sys, errno
p = sys.argv[1]
print(os.getxattr(p, 'user.md5').decode())
print(','.join(sorted(os.listxattr(p))))
try:
    os.getxattr(p, 'user.absent'); print('absent: found')
except OSError as e: print('absent:', e.errno == errno.ENODATA)
try:
    os.setxattr(p, 'system.posix_acl_access', b'\\x02\\x00\\x00\\x00'); print('acl: stored')
except OSError as e: print('acl:', e.errno == errno.EOPNOTSUPP)
os.setxattr(p, 'user.note', b'kept')
print(os.getxattr(p, 'user.note').decode())
`
    const r = await python(py, file)
    expect(r.stderr).toBe('')
    expect(r.stdout.split('\n')).toEqual(['abc123', 'user.md5,user.mime_type', 'absent: True', 'acl: True', 'kept', ''])
  })

  it('names outside user.* are "not supported" (so ls -l stops asking security.selinux of every entry), answered without reaching the core', async () => {
    const m = await mountCore(memory(sample()))
    const py = `
import os, sys, errno
for name in ['security.selinux', 'trusted.x', 'system.nfs4_acl']:
    try:
        os.getxattr(sys.argv[1], name); print(name, 'found')
    except OSError as e: print(name, 'EOPNOTSUPP' if e.errno == errno.EOPNOTSUPP else errno.errorcode[e.errno])
`
    const r = await python(py, path.join(m.dir, 'hello.txt'))
    expect(r.stdout.split('\n')).toEqual(['security.selinux EOPNOTSUPP', 'trusted.x EOPNOTSUPP', 'system.nfs4_acl EOPNOTSUPP', ''])
    expect(await m.inspect('core.xattrAsked')).toEqual([])
    await run('ls', ['-l', m.dir])
    expect(await m.inspect('core.xattrAsked')).toEqual([])
  })
})

describe('writing through the adapter', () => {
  it('cp into the mount keeps the bytes, and utimens gets the real mtime', async () => {
    const m = await mountCore(memory(sample()))
    const src = path.join(await tempDir(), 'src.bin')
    const data = randomBytes(1024 * 1024 + 5)
    await writeFile(src, data)
    expect((await run('cp', [src, path.join(m.dir, 'docs/copy.bin')])).code).toBe(0)
    expect(Buffer.from(await m.inspect<Uint8Array>('core.contents', '/docs/copy.bin')).equals(data)).toBe(true)
    const md5 = await run('md5sum', [path.join(m.dir, 'docs/copy.bin')])
    expect(md5.stdout.split(' ')[0]).toBe(createHash('md5').update(data).digest('hex'))

    // Distinct atime and mtime: the unpatched addon passes atime twice.
    const r = await python('import os, sys; os.utime(sys.argv[1], (1000000000, 1577934245))', path.join(m.dir, 'docs/copy.bin'))
    expect(r.code).toBe(0)
    const call = (await m.inspect<UtimensCall[]>('core.utimensCalls')).at(-1)
    expect(call?.atime?.getTime()).toBe(1000000000_000)
    expect(call?.mtime?.getTime()).toBe(1577934245_000)
    const stat = await run('stat', ['-c', '%Y', path.join(m.dir, 'docs/copy.bin')])
    expect(stat.stdout.trim()).toBe('1577934245')
  })

  it('each time on its own: touch -m and touch -a leave the other time alone (UTIME_OMIT), touch sets both to now', async () => {
    const m = await mountCore(memory(sample()))
    const lastUtimens = async () => (await m.inspect<UtimensCall[]>('core.utimensCalls')).at(-1)
    const file = path.join(m.dir, 'docs/times.txt')
    expect((await run('sh', ['-c', `printf x > '${file}' && touch -d @1000000000 '${file}'`])).code).toBe(0)
    expect((await run('touch', ['-m', '-d', '@1577934245', file])).code).toBe(0)
    expect(await lastUtimens()).toMatchObject({ atime: null, mtime: new Date(1577934245_000) })
    expect((await run('touch', ['-a', '-d', '@1500000000', file])).code).toBe(0)
    expect(await lastUtimens()).toMatchObject({ atime: new Date(1500000000_000), mtime: null })
    expect((await run('stat', ['-c', '%X %Y', file])).stdout.trim()).toBe('1500000000 1577934245')
    const before = Date.now()
    expect((await run('touch', [file])).code).toBe(0)
    const now = (await lastUtimens())!
    expect(now.atime!.getTime()).toBeGreaterThanOrEqual(before - 1000)
    expect(now.mtime!.getTime()).toBeGreaterThanOrEqual(before - 1000)
  })

  it('rsync -a twice: the second run sends nothing (times and modes were kept)', async () => {
    const m = await mountCore(memory(sample()))
    const src = path.join(await tempDir(), 'tree')
    await run('mkdir', ['-p', path.join(src, 'sub')])
    await writeFile(path.join(src, 'one.txt'), 'one')
    await writeFile(path.join(src, 'sub/two.bin'), randomBytes(200_000))
    await run('ln', ['-s', 'one.txt', path.join(src, 'link')])
    await run('touch', ['-d', '2020-01-02 03:04:05', path.join(src, 'one.txt')])
    const first = await run('rsync', ['-a', '--itemize-changes', src + '/', path.join(m.dir, 'docs/tree')])
    expect(first.code).toBe(0)
    expect(first.stdout).toContain('one.txt')
    const second = await run('rsync', ['-a', '--itemize-changes', src + '/', path.join(m.dir, 'docs/tree')])
    expect(second).toMatchObject({ code: 0, stdout: '' })
    const ls = await run('ls', ['-l', '--time-style=+%F_%T', path.join(m.dir, 'docs/tree')])
    expect(ls.stdout).toMatch(/2020-01-02_03:04:05 one\.txt/)
    expect(ls.stdout).toMatch(/link -> one\.txt/)
  })
})
