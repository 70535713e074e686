// The .deb's desktop files (packaging/desktop-files.mjs): each file manager's extension where it
// looks, the shared logic, the send dialog with its manual, Dolphin's service menus and their
// helper, the bindings suggested. Then, in a clean Debian 12 root with nautilus and
// python3-nautilus, the package installed with apt: Nautilus loads the extension from where the
// package put it (its modules imported, no Python traceback); with python3-nautilus removed, it
// starts as without transferfs.
//
// Cheap enough for every run: the .deb is the one `npm run package` makes of the run's clean
// build, built once and shared with test/package/deb.test.ts (which runs lintian on the release
// build of the same files); the root's tarball holds Nautilus, its binding, what runs it
// headless and the package's dependencies, made once per machine, so a run unpacks it and apt
// installs the .deb without fetching anything; Nautilus runs until its window is open and the
// extension has been asked about the folder's files, then is stopped.
import { access, copyFile, mkdir, readFile, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanBuildDeb } from '../support/clean-build.js'
import { REPO } from '../support/mount.js'
import { debianTarball, DebianRoot, missingHostTools, type RootRunResult } from './debian-root.js'
import { explain, host, type HostRun } from './apt-repository.js'

function skipReason(): string | null {
  if (process.platform !== 'linux') return `runs on Linux only (this is ${process.platform})`
  if (process.getuid?.() !== 0) return `needs root to unpack a Debian root and chroot into it (running as uid ${process.getuid?.()})`
  const missing = missingHostTools()
  if (missing.length > 0) return `needs ${missing.join(', ')} on this machine`
  return null
}
const SKIP = skipReason()
if (SKIP) console.warn(`test/package/file-managers: skipped: ${SKIP}`)

/**
 * The root's packages on top of minbase (no recommends): Nautilus and its Python binding; Xvfb,
 * xauth (xvfb-run) and dbus (dbus-run-session) to run it headless; gdbus to see its window; the
 * package's Depends, so that apt installs the .deb from the tarball's package lists alone.
 */
const INCLUDE = ['nautilus', 'python3-nautilus', 'xvfb', 'xauth', 'dbus', 'libglib2.0-bin', 'fuse3', 'libfuse3-3']
const DEBS = '/tmp/debs'
const SESSION = '/tmp/nautilus-session.sh'
/** nautilus-python's loader, which python3-nautilus installs: gone, Nautilus runs no Python at all. */
const PYTHON_LOADER = '/usr/lib/x86_64-linux-gnu/nautilus/extensions-4/libnautilus-python.so'

// Run inside the session (xvfb-run and dbus-run-session): Nautilus with its output in $1, until
// its window is open (the application's name is owned on the session bus and its first window's
// actions are exported: asked before the name is owned, D-Bus would start a second Nautilus) and,
// when $2 is given, that text (or a Python traceback, for the test to read) is in its output;
// half a second more for whatever it prints next, and it must still be running: then it is
// stopped. stdbuf: nautilus-python's debug lines (stdout) come as they are written.
const SESSION_SCRIPT = `log=$1
wait_for=$2
stdbuf -oL -eL nautilus --new-window /tmp >"$log" 2>&1 &
n=$!
started=$(date +%s%N)
ms() { echo $(( ($(date +%s%N) - started) / 1000000 )); }
alive() { kill -0 $n 2>/dev/null || { wait $n; echo "nautilus ended (exit $?) after $(ms) ms"; exit 1; }; }
window() {
  gdbus call --session --dest org.freedesktop.DBus --object-path /org/freedesktop/DBus --method org.freedesktop.DBus.NameHasOwner org.gnome.Nautilus 2>/dev/null | grep -q true &&
    gdbus introspect --session --dest org.gnome.Nautilus --object-path /org/gnome/Nautilus/window/1 2>/dev/null | grep -q org.gtk.Actions
}
until window; do
  alive
  [ "$(ms)" -lt 60000 ] || { echo "no window within 60 s"; kill $n; exit 1; }
  sleep 0.1
done
echo "window open after $(ms) ms"
if [ -n "$wait_for" ]; then
  shown=$(ms)
  until grep -qF -- "$wait_for" "$log" || grep -q '^Traceback' "$log"; do
    alive
    [ "$(ms)" -lt $((shown + 20000)) ] || { echo "no '$wait_for' within 20 s of the window"; kill $n; exit 1; }
    sleep 0.1
  done
  echo "'$wait_for' or a traceback after $(ms) ms"
fi
sleep 0.5
alive
kill $n
wait $n
echo "stopped after $(ms) ms"
`

/** What in Nautilus's output says Python failed: a traceback, an exception's last line, or the extension's own complaint. */
const failures = (log: string): string[] =>
  log.split('\n').filter((l) => /^Traceback \(most recent call last\)|^\s+File ".*", line \d+|^[\w.]*(Error|Exception): |^transferfs: /.test(l))

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`

describe.skipIf(SKIP !== null)(`the .deb's file-manager extensions${SKIP ? ` (skipped: ${SKIP})` : ''}`, () => {
  let deb = ''
  /** `dpkg-deb --contents` of it: read beside the root's unpacking (it decompresses the whole package). */
  let contents: HostRun
  let root: DebianRoot | undefined
  const timings: string[] = []

  /** Nautilus in a session of its own in the root, until its window is open (and waitFor is in its output); its output. */
  const nautilus = async (name: string, waitFor = ''): Promise<{ run: RootRunResult; log: string }> => {
    const log = `/tmp/nautilus-${name}.log`
    const started = Date.now()
    const run = await root!.run(['xvfb-run', '-a', 'dbus-run-session', '--', 'sh', SESSION, log, waitFor], {
      timeoutMs: 120_000,
      env: {
        NAUTILUS_PYTHON_DEBUG: 'misc',
        // Python names each module it imports, with the file it came from.
        PYTHONVERBOSE: '1',
        // The installation stays as dpkg made it: no __pycache__ written into it.
        PYTHONDONTWRITEBYTECODE: '1',
        // No GL under Xvfb, no accessibility bus.
        GSK_RENDERER: 'cairo',
        GTK_A11Y: 'none',
      },
    })
    timings.push(`Nautilus ${name} ${seconds(Date.now() - started)}`)
    return { run, log: await readFile(root!.host(log), 'utf8').catch(() => '') }
  }
  const explainSession = (what: string, s: { run: RootRunResult; log: string }): string => `${explain(what, s.run)}\nNautilus's output:\n${s.log.slice(-6000)}`

  beforeAll(async () => {
    // The package (shared, perhaps being built by deb.test.ts) and the root side by side; both
    // are waited for even when one fails, so afterAll finds the root to take down.
    const started = Date.now()
    const [built, made] = await Promise.allSettled([
      cleanBuildDeb().then(async (b) => {
        timings.push(`.deb ${b.buildMs > 0 ? `built in ${seconds(b.buildMs)}` : 'built already'}, ready after ${seconds(Date.now() - started)}`)
        contents = await host('dpkg-deb', ['--contents', b.file])
        return b
      }),
      debianTarball('bookworm', INCLUDE).then(async (tarball) => {
        const unpacked = await DebianRoot.unpack(tarball)
        timings.push(`root ready after ${seconds(Date.now() - started)}`)
        return unpacked
      }),
    ])
    if (made.status === 'fulfilled') root = made.value
    if (built.status === 'rejected') throw built.reason
    if (made.status === 'rejected') throw made.reason
    deb = built.value.file
  }, 1_800_000)

  afterAll(async () => {
    const closing = Date.now()
    await root?.close()
    timings.push(`root closed in ${seconds(Date.now() - closing)}`)
    console.log(`file managers: ${timings.join('; ')}`)
  }, 120_000)

  it('installs each extension where its file manager looks, the dialog and Dolphin\'s menus; suggests the bindings', async () => {
    expect(contents.code, explain('dpkg-deb --contents', contents)).toBe(0)
    const modes = new Map(contents.stdout.split('\n').filter(Boolean).map((l) => [l.replace(/^.* \.\//, '/').replace(/ -> .*$/, ''), l.slice(0, 10)]))
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
  })

  it('in a clean Debian 12 with nautilus and python3-nautilus, apt installs it and Nautilus loads the extension from where the package put it', async () => {
    expect(await readFile(root!.host('/etc/debian_version'), 'utf8')).toMatch(/^12\./)
    await mkdir(root!.host(DEBS), { recursive: true, mode: 0o755 })
    await copyFile(deb, root!.host(`${DEBS}/${path.basename(deb)}`))
    await writeFile(root!.host(SESSION), SESSION_SCRIPT)
    const started = Date.now()
    // force-unsafe-io: dpkg syncs no file it writes (as mmdebstrap has it), less waiting on a
    // busy disk; what is installed is the same.
    const install = (): Promise<RootRunResult> => root!.run(['apt-get', 'install', '-y', '--no-install-recommends', '-o', 'Dpkg::Options::=--force-unsafe-io', `./${path.basename(deb)}`], { cwd: DEBS, timeoutMs: 300_000 })
    let installed = await install()
    if (installed.code !== 0) {
      // The package wants something the root's tarball lacks (INCLUDE is behind its Depends) and
      // its package lists are too old to fetch it: refreshed, and tried again.
      console.warn(`file managers: ${explain('apt-get install ./transferfs.deb from the tarball\'s package lists', installed)}`)
      const update = await root!.run(['apt-get', 'update'], { timeoutMs: 300_000 })
      expect(update.code, explain('apt-get update', update)).toBe(0)
      installed = await install()
    }
    expect(installed.code, explain('apt-get install ./transferfs.deb', installed)).toBe(0)
    timings.push(`apt install ${seconds(Date.now() - started)} (${/^Need to get (.*) of archives\.$/m.exec(installed.stdout)?.[1] ?? 'nothing'} fetched)`)
    await access(root!.host(PYTHON_LOADER))
    // Dolphin's menus name the helper where the package put it.
    expect(await readFile(root!.host('/usr/share/kio/servicemenus/transferfs.desktop'), 'utf8')).toContain('Exec=/usr/lib/transferfs/transferfs-action keep %F\n')
    expect((await stat(root!.host('/usr/lib/transferfs/transferfs-action'))).mode & 0o777).toBe(0o755)

    const loaded = await nautilus('with-binding', 'nautilus_python_object_update_file_info: entered')
    expect(loaded.run.code, explainSession('Nautilus with python3-nautilus', loaded)).toBe(0)
    // nautilus-python found the package's file in its folder, imported it, and it defined the
    // extension's class, which Nautilus made and asked about the folder's files.
    expect(loaded.log).toContain('nautilus_python_load_dir: entered dirname=/usr/share/nautilus-python/extensions\n')
    expect(loaded.log).toContain('nautilus_python_load_file: entered filename=transferfs_nautilus\n')
    expect(loaded.log).toContain('nautilus_python_object_get_type: entered type=TransferfsExtension\n')
    expect(loaded.log).toContain('nautilus_python_object_instance_init: entered\n')
    // The shared logic came from the package's folder for it.
    expect(loaded.log).toMatch(/\/usr\/share\/transferfs\/file-managers\/transferfs_fm\/adapter\.py/)
    expect(failures(loaded.log)).toEqual([])
    // What Nautilus loaded is the source's entry file, byte for byte.
    expect(await readFile(root!.host('/usr/share/nautilus-python/extensions/transferfs_nautilus.py'), 'utf8'))
      .toBe(await readFile(path.join(REPO, 'desktop', 'file-managers', 'nautilus', 'transferfs_nautilus.py'), 'utf8'))
  }, 600_000)

  it('with python3-nautilus removed, Nautilus starts as without transferfs', async () => {
    expect((await root!.run(['dpkg-query', '-W', '-f=${Status}', 'transferfs'])).stdout, 'not installed (the test before failed)').toBe('install ok installed')
    const removed = await root!.run(['dpkg', '--remove', 'python3-nautilus'])
    expect(removed.code, explain('dpkg --remove python3-nautilus', removed)).toBe(0)
    expect(await access(root!.host(PYTHON_LOADER)).then(() => 'there', () => 'gone')).toBe('gone')

    const without = await nautilus('without-binding')
    expect(without.run.code, explainSession('Nautilus without python3-nautilus', without)).toBe(0)
    expect(without.log.split('\n').filter((l) => /nautilus.python|transferfs/i.test(l))).toEqual([])
    expect(failures(without.log)).toEqual([])
  }, 120_000)
})
