// Why a mount failed, told from facts about the machine: each cause with made-up facts,
// the facts read from a made-up file tree, and the mount helper found in made-up bin
// folders (with and without the setuid bit).
import { chmod, chown, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { explainMountFailure, gatherFacts, type FailureContext, type MachineFacts } from '../../src/fuse/mount-failure.js'
import { findMountHelpers, mountHelperCommand, type MountHelper } from '../../src/fuse/mount-helper.js'

const HELPER: MountHelper = { name: 'fusermount3', path: '/usr/bin/fusermount3', file: '/usr/bin/fusermount3', setuidRoot: true }
const FINE: MachineFacts = { helpers: [HELPER], devFuse: { state: 'ok' }, userAllowOther: false, apparmorFusermount: false }
const USER: FailureContext = { dir: '/home/ann/Transfers', allowOther: false, root: false, error: new Error('fuse failed') }

const explain = (ctx: Partial<FailureContext>, facts: Partial<MachineFacts>): string => explainMountFailure({ ...USER, ...ctx }, { ...FINE, ...facts })
const GENERIC = /^fuse failed \(no known cause found on this machine; the FUSE library's own messages .*mount\.log.*--log-level debug/

describe('explainMountFailure', () => {
  it('nothing wrong: the library\'s words, with where the helper\'s own reason is', () => {
    const s = explain({}, {})
    expect(s).toMatch(GENERIC)
    expect(s).toContain('transferfs mount /home/ann/Transfers --foreground --log-level debug')
  })

  it('the mount point\'s own reason (checkMountPoint\'s words) comes first', () => {
    const notEmpty = 'the folder is not empty (1 entry), and a mount would hide what is in it; mount on an empty folder'
    expect(explain({ mountPoint: notEmpty }, { helpers: [] })).toBe(notEmpty)
  })

  it('a file-system error (making the folder) is not blamed on the machine', () => {
    const err = Object.assign(new Error("EACCES: permission denied, mkdir '/srv/x'"), { code: 'EACCES', syscall: 'mkdir' })
    expect(explain({ error: err }, { helpers: [] })).toMatch(/^EACCES: permission denied, mkdir '\/srv\/x' \(no known cause/)
  })

  it('no helper at all: install fuse3, never the fuse package', () => {
    const s = explain({ root: true }, { helpers: [] })
    expect(s).toContain('no FUSE mount helper (fusermount3 or fusermount) is installed')
    expect(s).toContain('`sudo apt install fuse3`')
    expect(s).toContain('not the `fuse` package, which replaces fuse3 and removes the desktop packages')
  })

  it('a helper of another name than the library runs: the package, or the other library', () => {
    const only3 = explain({ root: true, backend: 'libfuse2' }, { helpers: [HELPER] })
    expect(only3).toMatch(/^libfuse 2, which this mount runs on, needs the mount helper fusermount, and only fusermount3 is installed \(\/usr\/bin\/fusermount3\): mount with --fuse-library libfuse3/)
    expect(only3).toContain('`sudo dnf install fuse`')
    const only2 = explain({ backend: 'libfuse3' }, { helpers: [{ name: 'fusermount', path: '/bin/fusermount', file: '/bin/fusermount', setuidRoot: true }] })
    expect(only2).toMatch(/^libfuse 3, which this mount runs on, needs the mount helper fusermount3, and only fusermount is installed \(\/bin\/fusermount\): .*`sudo apt install fuse3`/)
    expect(explain({ backend: 'libfuse3' }, {})).toMatch(GENERIC)
    // Both names there: the one the library runs must be setuid.
    const both = [HELPER, { name: 'fusermount', path: '/usr/local/bin/fusermount', file: '/usr/local/bin/fusermount', setuidRoot: false } as const]
    expect(explain({ backend: 'libfuse2' }, { helpers: both })).toContain('`sudo chmod u+s /usr/local/bin/fusermount`')
    expect(explain({ backend: 'libfuse3' }, { helpers: both })).toMatch(GENERIC)
  })

  it('/dev/fuse missing: modprobe, or the container\'s device', () => {
    expect(explain({}, { devFuse: { state: 'missing', kernelHasFuse: false } })).toMatch(/^there is no \/dev\/fuse: .*`sudo modprobe fuse`/)
    const container = explain({}, { devFuse: { state: 'missing', kernelHasFuse: true } })
    expect(container).toContain('although the kernel has FUSE')
    expect(container).toContain('--device /dev/fuse')
  })

  it('/dev/fuse not permitted: the mode and the fix, for root and for a user alike', () => {
    const denied = { state: 'denied', code: 'EPERM', mode: 0o20600, uid: 0, gid: 0 } as const
    const s = explain({ root: true }, { devFuse: denied })
    expect(s).toMatch(/^this process may not open \/dev\/fuse \(EPERM; mode 0600, owner 0:0\)/)
    expect(s).toContain('`sudo chmod 0666 /dev/fuse`')
    // The setuid helper opens /dev/fuse with the user's rights: a device closed to the user stops the mount.
    expect(explain({ root: false }, { devFuse: denied })).toMatch(/^this user may not open \/dev\/fuse \(EPERM; mode 0600, owner 0:0\)/)
  })

  it('a helper that is not setuid root stops a user, not root', () => {
    const plain = [{ ...HELPER, setuidRoot: false }, { name: 'fusermount', path: '/usr/local/bin/fusermount', file: '/usr/local/bin/fusermount', setuidRoot: false } as const]
    const s = explain({}, { helpers: plain })
    expect(s).toContain('is not setuid root')
    expect(s).toContain('`sudo chmod u+s /usr/bin/fusermount3 /usr/local/bin/fusermount`')
    expect(s).toContain('reinstall fuse3')
    expect(explain({ root: true }, { helpers: plain })).toMatch(GENERIC)
    // One usable helper is enough.
    expect(explain({}, { helpers: [plain[1]!, HELPER] })).toMatch(GENERIC)
  })

  it('allowOther without user_allow_other, for a user', () => {
    const s = explain({ allowOther: true }, { userAllowOther: false })
    expect(s).toContain('`user_allow_other`')
    expect(s).toContain('/etc/fuse.conf')
    expect(s).toContain('mount without --allow-other (allowOther off)')
    expect(explain({ allowOther: true }, { userAllowOther: true })).toMatch(GENERIC)
    expect(explain({ allowOther: true, root: true }, {})).toMatch(GENERIC)
  })

  it('AppArmor\'s fusermount3 profile refuses folders outside home, /mnt, /media, /tmp', () => {
    for (const dir of ['/srv/transfers', '/data/x', '/mntx/y', '/home']) {
      expect(explain({ dir }, { apparmorFusermount: true })).toMatch(/^AppArmor lets fusermount3 mount only under .* mount under your home folder \(e\.g\. `transferfs mount ~\/Transfers`\), \/mnt or \/tmp/)
    }
    for (const dir of ['/home/ann/Transfers', '/home/ann', '/root/t', '/mnt', '/mnt/t', '/media/ann/t', '/tmp/t', '/run/user/1000/t']) {
      expect(explain({ dir }, { apparmorFusermount: true })).toMatch(GENERIC)
    }
    expect(explain({ dir: '/srv/transfers' }, { apparmorFusermount: false })).toMatch(GENERIC)
  })

  it('the first cause found wins: a missing helper before user_allow_other', () => {
    expect(explain({ allowOther: true }, { helpers: [] })).toMatch(/^no FUSE mount helper/)
  })
})

const temps: string[] = []
afterEach(async () => {
  for (const d of temps.splice(0)) await rm(d, { recursive: true, force: true })
})
async function tree(files: Record<string, string | { mode: number; content?: string; uid?: number } | 'dir'>): Promise<string> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'transferfs-facts-'))
  temps.push(root)
  for (const [rel, spec] of Object.entries(files)) {
    const file = path.join(root, rel)
    await mkdir(path.dirname(file), { recursive: true })
    if (spec === 'dir') await mkdir(file)
    else if (typeof spec === 'string') await writeFile(file, spec)
    else {
      await writeFile(file, spec.content ?? '#!/bin/sh\n')
      if (spec.uid !== undefined) await chown(file, spec.uid, spec.uid)
      await chmod(file, spec.mode)
    }
  }
  return root
}

const isRoot = process.getuid?.() === 0

describe('findMountHelpers', () => {
  it('finds both names in PATH and the bin folders, each file once per name, fusermount3 first, with its setuid bit', async () => {
    const root = await tree({
      'a/fusermount': { mode: 0o755 },
      'b/fusermount3': { mode: 0o4755 },
      'c/fusermount': { mode: 0o644 }, // not executable: not a helper
      'd/fusermount3': 'dir',
    })
    await symlink(path.join(root, 'b/fusermount3'), path.join(root, 'a/fusermount3'))
    // Debian's layout: fusermount is a link to fusermount3, and counts as fusermount.
    await symlink('fusermount3', path.join(root, 'b/fusermount'))
    const found = findMountHelpers({ pathEnv: `${root}/c:relative/bin:${root}/a:${root}/d`, dirs: [`${root}/b`, `${root}/missing`] })
    expect(found).toEqual([
      { name: 'fusermount3', path: `${root}/a/fusermount3`, file: `${root}/b/fusermount3`, setuidRoot: isRoot },
      { name: 'fusermount', path: `${root}/a/fusermount`, file: `${root}/a/fusermount`, setuidRoot: false },
      { name: 'fusermount', path: `${root}/b/fusermount`, file: `${root}/b/fusermount3`, setuidRoot: isRoot },
    ])
  })

  it.skipIf(!isRoot)('a setuid file not owned by root, or a root file without the bit, is not setuid root', async () => {
    const root = await tree({ 'a/fusermount3': { mode: 0o4755, uid: 65534 }, 'b/fusermount': { mode: 0o755 } })
    const found = findMountHelpers({ pathEnv: '', dirs: [`${root}/a`, `${root}/b`] })
    expect(found.map((h) => [h.name, h.setuidRoot])).toEqual([['fusermount3', false], ['fusermount', false]])
  })

  it('runs a setuid one first, then fusermount3, and by name when there is none', () => {
    const plain3 = { ...HELPER, path: '/x/fusermount3', file: '/x/fusermount3', setuidRoot: false }
    const suid2 = { name: 'fusermount', path: '/y/fusermount', file: '/y/fusermount', setuidRoot: true } as const
    expect(mountHelperCommand([plain3, suid2])).toBe('/y/fusermount')
    expect(mountHelperCommand([plain3, { ...suid2, setuidRoot: false }])).toBe('/x/fusermount3')
    expect(mountHelperCommand([])).toBe('fusermount3')
  })

  it('finds this machine\'s helpers, under each name there is', () => {
    const found = findMountHelpers()
    for (const h of found) expect(existsSync(h.path)).toBe(true)
    if (existsSync('/usr/bin/fusermount3')) expect(found.map((h) => h.file)).toContain('/usr/bin/fusermount3')
    for (const name of ['fusermount3', 'fusermount'] as const) {
      if (existsSync(`/usr/bin/${name}`)) expect(found.map((h) => h.name)).toContain(name)
    }
  })
})

describe('gatherFacts', () => {
  const noHelpers = { pathEnv: '', dirs: [] }

  it('reads user_allow_other only from a line of its own, not commented out', async () => {
    const conf = async (text: string) => (await gatherFacts({ prefix: await tree({ 'etc/fuse.conf': text }), helpers: noHelpers })).userAllowOther
    expect(await conf('# comment\n#user_allow_other\n')).toBe(false)
    expect(await conf('# user_allow_other\nmount_max = 10\n')).toBe(false)
    expect(await conf('user_allow_others\n')).toBe(false)
    expect(await conf('# comment\n  user_allow_other  \n')).toBe(true)
    expect(await conf('user_allow_other')).toBe(true)
    expect((await gatherFacts({ prefix: await tree({}), helpers: noHelpers })).userAllowOther).toBe(false)
  })

  it('sees AppArmor enforcing a fusermount3 profile, from the loaded list or else the installed file', async () => {
    const aa = async (files: Record<string, string>) => (await gatherFacts({ prefix: await tree(files), helpers: noHelpers })).apparmorFusermount
    const on = { 'sys/module/apparmor/parameters/enabled': 'Y\n' }
    expect(await aa({ ...on, 'sys/kernel/security/apparmor/profiles': 'snap.x (enforce)\nfusermount3 (enforce)\n' })).toBe(true)
    expect(await aa({ ...on, 'sys/kernel/security/apparmor/profiles': 'fusermount3 (complain)\n' })).toBe(false)
    expect(await aa({ ...on, 'sys/kernel/security/apparmor/profiles': 'snap.x (enforce)\n', 'etc/apparmor.d/fusermount3': '' })).toBe(false)
    expect(await aa({ ...on, 'etc/apparmor.d/fusermount3': 'profile fusermount3 /usr/bin/fusermount3 {}\n' })).toBe(true)
    expect(await aa({ ...on })).toBe(false)
    expect(await aa({ 'sys/module/apparmor/parameters/enabled': 'N\n', 'etc/apparmor.d/fusermount3': '' })).toBe(false)
    expect(await aa({ 'etc/apparmor.d/fusermount3': '' })).toBe(false)
  })

  it('tells /dev/fuse there, missing (and whether the kernel has FUSE), or not openable', async () => {
    const dev = async (files: Record<string, string | 'dir'>) => (await gatherFacts({ prefix: await tree(files), helpers: noHelpers })).devFuse
    expect(await dev({ 'dev/fuse': '' })).toEqual({ state: 'ok' })
    expect(await dev({ 'proc/filesystems': 'nodev\tsysfs\n\tfuseblk\nnodev\tfusectl\n' })).toEqual({ state: 'missing', kernelHasFuse: false })
    expect(await dev({ 'proc/filesystems': 'nodev\tsysfs\nnodev\tfuse\n\tfuseblk\n' })).toEqual({ state: 'missing', kernelHasFuse: true })
    // A folder cannot be opened for writing: stands for a device this process may not open.
    expect(await dev({ 'dev/fuse': 'dir' })).toMatchObject({ state: 'denied', code: 'EISDIR', uid: process.getuid?.() })
  })

  it('on this machine: the helper found, and /dev/fuse opens for root', async () => {
    const facts = await gatherFacts()
    expect(facts.helpers).toEqual(findMountHelpers())
    if (isRoot && existsSync('/dev/fuse')) expect(facts.devFuse).toEqual({ state: 'ok' })
  })
})
