// The .deb's desktop files (packaging/desktop-files.mjs): each file manager's extension where it
// looks, the shared logic, the send dialog with its manual, Dolphin's service menus and their
// helper, the bindings suggested, lintian clean. Then, in a clean Debian 12 root with nautilus:
// installed without python3-nautilus, Nautilus starts as without transferfs; with it, Nautilus
// loads the extension (its modules imported, no Python traceback).
import { mkdir, mkdtemp, readFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { withCleanBuild } from '../support/clean-build.js'
import { REPO } from '../support/mount.js'
import { removeTree } from '../support/fuse-cleanup.js'
import { lastCommitEpoch } from '../support/clean-copy.js'
import { debianTarball, DebianRoot, type RootRunResult } from './debian-root.js'
import { explain, host, type HostRun } from './apt-repository.js'

// 13 minutes on the 2-core machine from nothing, 6 with the clean build and the root cached (a
// second .deb build and lintian, a root of 720 MB made with Nautilus): past what CI's 20 minutes can spare, so it runs only when asked
// (TRANSFERFS_TEST_FM_PACKAGE=1); lintian on the same .deb runs in test/package/deb.test.ts.
const SKIP = process.platform !== 'linux' || process.getuid?.() !== 0 || process.env.TRANSFERFS_TEST_FM_PACKAGE !== '1'
/** The root's extra packages: Nautilus and what runs it headless. python3-nautilus comes later, by apt. */
const INCLUDE = ['nautilus', 'xvfb', 'xauth', 'dbus']
const DEBS = '/tmp/debs'

describe.skipIf(SKIP)('the .deb\'s file-manager extensions', () => {
  let work = ''
  let deb = ''
  let lintian: HostRun
  let root: DebianRoot | undefined

  beforeAll(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), 'transferfs-fm-deb-'))
    const out = path.join(work, 'out')
    await withCleanBuild(async (clone) => {
      const r = await host(process.execPath, ['packaging/build-deb.mjs', '--out', out], { cwd: clone, env: { SOURCE_DATE_EPOCH: await lastCommitEpoch() }, timeoutMs: 600_000 })
      if (r.code !== 0) throw new Error(explain('build-deb.mjs', r))
      deb = r.stdout.trim().split('\n').pop()!
    })
    const lintianTmp = path.join(work, 'lintian-tmp')
    await mkdir(lintianTmp)
    lintian = await host('lintian', [deb], { timeoutMs: 300_000, env: { TMPDIR: lintianTmp } })
  }, 1_200_000)

  afterAll(async () => {
    await root?.close()
    if (work) await removeTree(work)
  }, 120_000)

  it('installs each extension where its file manager looks, the dialog and Dolphin\'s menus; suggests the bindings; lintian is clean', async () => {
    console.log(`file managers: lintian ${path.basename(deb)} (exit ${lintian.code}):\n${(lintian.stdout + lintian.stderr).trim() || '(no output)'}`)
    expect(lintian.stdout.split('\n').filter((l) => /^[EW]: /.test(l))).toEqual([])
    const listing = await host('dpkg-deb', ['--contents', deb])
    const modes = new Map(listing.stdout.split('\n').filter(Boolean).map((l) => [l.replace(/^.* \.\//, '/').replace(/ -> .*$/, ''), l.slice(0, 10)]))
    for (const [file, mode] of [
      ['/usr/share/nautilus-python/extensions/transferfs_nautilus.py', '-rw-r--r--'],
      ['/usr/share/nemo-python/extensions/transferfs_nemo.py', '-rw-r--r--'],
      ['/usr/share/caja-python/extensions/transferfs_caja.py', '-rw-r--r--'],
      ['/usr/share/transferfs/file-managers/transferfs_fm/core.py', '-rw-r--r--'],
      ['/usr/share/transferfs/file-managers/transferfs_fm/send_dialog.py', '-rw-r--r--'],
      ['/usr/share/kio/servicemenus/transferfs.desktop', '-rw-r--r--'],
      ['/usr/share/kio/servicemenus/transferfs-one.desktop', '-rw-r--r--'],
      ['/usr/lib/transferfs/transferfs-action', '-rwxr-xr-x'],
      ['/usr/bin/transferfs-send-dialog', '-rwxr-xr-x'],
      ['/usr/share/man/man1/transferfs-send-dialog.1.gz', '-rw-r--r--'],
    ]) expect([file, modes.get(file!)]).toEqual([file, mode])
    // Nothing of the tests or of Python's caches.
    expect([...modes.keys()].filter((f) => f.includes('__pycache__') || /test_\w+\.py$/.test(f))).toEqual([])
    const suggests = (await host('dpkg-deb', ['--field', deb, 'Suggests'])).stdout.trim().split(', ')
    expect(suggests).toEqual(expect.arrayContaining(['python3-nautilus', 'nemo-python', 'python3-caja', 'python3-gi', 'gir1.2-gtk-4.0']))
    // The file managers' Exec lines name the helper where the package puts it.
    const menu = await host('sh', ['-c', 'dpkg-deb --fsys-tarfile "$1" | tar -xO ./usr/share/kio/servicemenus/transferfs.desktop', 'sh', deb])
    expect(menu.stdout).toContain('Exec=/usr/lib/transferfs/transferfs-action keep %F\n')
  })

  it('in a clean Debian 12 with nautilus: starts as before without python3-nautilus, and loads the extension with it', async () => {
    root = await DebianRoot.unpack(await debianTarball('bookworm', INCLUDE))
    const asRoot = (command: string[], timeoutMs = 600_000): Promise<RootRunResult> => root!.run(command, { timeoutMs })
    expect((await asRoot(['apt-get', 'update'])).code).toBe(0)
    await mkdir(root.host(DEBS), { recursive: true })
    await host('cp', [deb, root.host(DEBS)])
    const installed = await root.run(['apt-get', 'install', '-y', '--no-install-recommends', `./${path.basename(deb)}`], { cwd: DEBS, timeoutMs: 600_000 })
    expect(installed.code, explain('apt-get install ./transferfs.deb', installed)).toBe(0)

    // Nautilus for a few seconds on a display of its own; PYTHONVERBOSE makes an embedded
    // Python say each module it imports, so the extension's loading shows on stderr.
    const nautilus = (): Promise<RootRunResult> => asRoot(['sh', '-c',
      'HOME=/root PYTHONVERBOSE=1 timeout 20 xvfb-run -a dbus-run-session -- nautilus --new-window /tmp; echo "exit $?"'], 120_000)
    const without = await nautilus()
    // Still running when timeout ended it (124): it started and did not fall over.
    // (What Nautilus's helpers print as the session ends may follow the line.)
    const ended = (r: RootRunResult): string | undefined => /^exit \d+$/m.exec(r.stdout)?.[0]
    expect(ended(without), explain('nautilus without its binding', without)).toBe('exit 124')
    expect(without.stderr).not.toMatch(/transferfs|Traceback/)

    const binding = await asRoot(['apt-get', 'install', '-y', '--no-install-recommends', 'python3-nautilus'])
    expect(binding.code, explain('apt-get install python3-nautilus', binding)).toBe(0)
    const loaded = await nautilus()
    expect(ended(loaded), explain('nautilus with python3-nautilus', loaded)).toBe('exit 124')
    expect(loaded.stderr).toMatch(/\/usr\/share\/transferfs\/file-managers\/transferfs_fm\/adapter\.py/)
    expect(loaded.stderr).not.toMatch(/Traceback|transferfs: /)
    // What Nautilus loaded is the source's entry file, byte for byte.
    expect(await readFile(root.host('/usr/share/nautilus-python/extensions/transferfs_nautilus.py'), 'utf8'))
      .toBe(await readFile(path.join(REPO, 'desktop', 'file-managers', 'nautilus', 'transferfs_nautilus.py'), 'utf8'))
  }, 1_500_000)
})
