// The demo inbox through a real mount, used with real tools: cp -r, rsync -a, md5sum,
// tar, unzip, sqlite3; safe names; a password-protected transfer. One service and one
// mount daemon (the real `transferfs mount -f`) for the whole file.
import { mkdir, readdir, stat } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { DEMO_LARGE_FILE_SIZE, DEMO_PASSWORD } from '../../src/emulator/demo-content.js'
import { run, tempDir } from '../support/mount.js'
import { contentOf, filesBelow, md5OfFile, transferFolder, useDemoMount } from './harness.js'

const world = useDemoMount({ password: DEMO_PASSWORD })

describe('the demo inbox through the mount', () => {
  it('cp -r and rsync -a copy every transfer byte for byte (MD5 as the service gives it)', async () => {
    const big = world.bySubject('Disk image')
    const locked = world.bySubject('Contracts')
    const copied = world.transfers.filter((t) => t !== big && t !== locked)
    expect(copied.length).toBeGreaterThanOrEqual(6)
    const out = await tempDir('transferfs-copy-')
    for (const tool of ['cp', 'rsync'] as const) {
      const dest = path.join(out, tool)
      await mkdir(dest)
      for (const t of copied) {
        const src = await transferFolder(world.account.mountDir, t.id)
        const r = tool === 'cp' ? await run('cp', ['-r', src, dest], { timeoutMs: 60_000 }) : await run('rsync', ['-a', src, dest + '/'], { timeoutMs: 60_000 })
        expect(r, `${tool} ${src}: ${r.stderr}`).toMatchObject({ code: 0 })
        const files = await filesBelow(path.join(dest, path.basename(src)))
        const got = await Promise.all(files.map(async (f) => ({ md5: await md5OfFile(f.abs), size: (await stat(f.abs)).size })))
        expect(contentOf(got), `${tool}: ${t.subject}`).toEqual(contentOf(t.files.map((f) => ({ md5: f.md5, size: f.filesize }))))
      }
    }
  })

  it('the 1 GiB file streams through md5sum with the service\'s MD5', async () => {
    const big = world.bySubject('Disk image')
    const file = path.join(await transferFolder(world.account.mountDir, big.id), big.files[0]!.filename!)
    expect((await stat(file)).size).toBe(DEMO_LARGE_FILE_SIZE)
    const r = await run('md5sum', [file], { timeoutMs: 110_000 })
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout.split(' ')[0]).toBe(big.files[0]!.md5)
  }, 120_000)

  it('tar, unzip -t and sqlite3 work in place', async () => {
    const report = await transferFolder(world.account.mountDir, world.bySubject('Quarterly report').id)
    const tarball = path.join(await tempDir('transferfs-tar-'), 'report.tar')
    const tar = await run('tar', ['-cf', tarball, '-C', path.dirname(report), path.basename(report)])
    expect(tar.code, tar.stderr).toBe(0)
    const listed = await run('tar', ['-tf', tarball])
    expect(listed.stdout).toContain('data/raw.csv')
    expect(listed.stdout).toContain('charts/revenue.png')

    const db = await transferFolder(world.account.mountDir, world.bySubject('Database export').id)
    const unzip = await run('unzip', ['-t', path.join(db, 'project-files.zip')])
    expect(unzip.code, unzip.stdout + unzip.stderr).toBe(0)
    expect(unzip.stdout).toContain('No errors detected')

    const sqlite = await run('sqlite3', ['-readonly', `file:${path.join(db, 'inventory.sqlite')}?immutable=1`, "SELECT count(*) FROM sqlite_master WHERE type = 'table'"])
    expect(sqlite.code, sqlite.stderr).toBe(0)
    expect(Number(sqlite.stdout.trim())).toBeGreaterThan(0)
  })

  it('every transfer and file is reachable under a safe, unique name', async () => {
    const inbox = await readdir(path.join(world.account.mountDir, 'inbox'))
    expect(inbox.length).toBe(world.transfers.length)
    const check = (names: string[], where: string) => {
      expect(new Set(names).size, `duplicate names in ${where}`).toBe(names.length)
      for (const n of names) {
        expect(n === '.' || n === '..' || n === '', `${where}: "${n}"`).toBe(false)
        expect(/[/\u0000-\u001f]/.test(n), `${where}: "${n}"`).toBe(false)
        expect(Buffer.byteLength(n), `${where}: "${n}"`).toBeLessThanOrEqual(255)
      }
    }
    check(inbox, 'inbox')
    const walk = async (dir: string): Promise<void> => {
      const names = await readdir(dir)
      check(names, dir)
      for (const e of await readdir(dir, { withFileTypes: true })) if (e.isDirectory()) await walk(path.join(dir, e.name))
    }
    for (const t of world.transfers) {
      if (t.passwordprotected) continue
      const folder = await transferFolder(world.account.mountDir, t.id)
      await walk(folder)
      const files = await filesBelow(folder)
      const sizes = await Promise.all(files.map(async (f) => (await stat(f.abs)).size))
      expect(sizes.sort(), t.subject).toEqual(t.files.map((f) => f.filesize).sort())
    }
  })

  it('a password-protected transfer opens with the right password only', async () => {
    const t = world.bySubject('Contracts')
    const folder = await transferFolder(world.account.mountDir, t.id)
    expect((await readdir(folder)).sort()).toEqual(['.password', '.transfer.json'])
    const wrong = await run('bash', ['-c', 'echo wrong-password > "$1"', 'bash', path.join(folder, '.password')])
    expect(wrong.code).not.toBe(0)
    expect(wrong.stderr).toMatch(/permission denied/i)
    expect((await readdir(folder)).sort()).toEqual(['.password', '.transfer.json'])

    const right = await run('bash', ['-c', `echo ${DEMO_PASSWORD} > "$1"`, 'bash', path.join(folder, '.password')])
    expect(right.code, right.stderr).toBe(0)
    const files = await filesBelow(folder)
    const got = await Promise.all(files.map(async (f) => ({ md5: await md5OfFile(f.abs), size: (await stat(f.abs)).size })))
    expect(contentOf(got)).toEqual(contentOf(t.files.map((f) => ({ md5: f.md5, size: f.filesize }))))
  })
})
