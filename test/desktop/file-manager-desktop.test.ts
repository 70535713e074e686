// The file managers themselves with the transferfs extension, on a real mount of the local
// service holding the demo's transfers (what `npm start` shows), each on a display of its own with a
// session bus (test/support/desktop-session.ts), accessibility on, started once for the file:
// - Nautilus 43 (nautilus-python 4): the extension loads with no Python traceback; the inbox in
//   list view shows the "Transfer" column with each transfer's state in words and an emblem by
//   its name, read through AT-SPI (the screen is also kept as a PNG); through AT-SPI (dogtail), a
//   right-click on a transfer and "Keep on this computer" pins it (`user.transferfs.state`
//   `pinned`), "Stop keeping" lets it go (`cached`) and "Free up space" returns it to `online`.
// - Caja (python3-caja, GTK 3): the extension loads with no traceback, its list view shows the
//   column and the states, read through AT-SPI, and a screenshot is kept.
// Skipped, naming the packages, where a file manager, its binding or the desktop tools are missing.
import { existsSync } from 'node:fs'
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { REPO, run, tempDir, TS_REGISTER, waitFor } from '../support/mount.js'
import { runWith, startDesktopSession, type DesktopSession } from '../support/desktop-session.js'
import { CLI, useDemoMount } from '../mount/harness.js'
import { state } from '../mount/pinning.js'

const DRIVER = path.join(REPO, 'test/desktop/file-managers/atspi_driver.py')
/** The system's Python: the one python3-dogtail and python3-pyatspi are installed for. */
const PYTHON = '/usr/bin/python3'
/** Screenshots go here when set (to look at them, or for docs/images/), else to a temporary folder. */
const SHOTS = process.env.TRANSFERFS_TEST_SCREENSHOTS

interface Manager {
  flavor: 'nautilus' | 'caja'
  /** The program, its accessible name, and how it opens a folder in a window of its own. */
  command: string
  app: string
  open: (folder: string) => string[]
  /** Its binding's extensions folder (there when the binding is installed) and the packages that bring what it needs. */
  bindingDir: string
  packages: string
  /** gsettings: the list view, with the "Transfer" column, in a window that shows every row. */
  settings: string[][]
}

const NAUTILUS: Manager = {
  flavor: 'nautilus',
  command: 'nautilus',
  app: 'org.gnome.Nautilus',
  open: (folder) => ['nautilus', '--new-window', folder],
  bindingDir: '/usr/share/nautilus-python/extensions',
  packages: 'nautilus python3-nautilus',
  settings: [
    ['org.gnome.nautilus.preferences', 'default-folder-viewer', 'list-view'],
    ['org.gnome.nautilus.list-view', 'default-visible-columns', "['name', 'size', 'Transferfs::state']"],
    ['org.gnome.nautilus.window-state', 'initial-size', '(1260, 780)'],
  ],
}

const CAJA: Manager = {
  flavor: 'caja',
  command: 'caja',
  app: 'caja',
  // --no-desktop: no desktop window of its own over the screen.
  open: (folder) => ['caja', '--no-desktop', '--browser', folder],
  bindingDir: '/usr/share/caja-python/extensions',
  packages: 'caja python3-caja',
  settings: [
    ['org.mate.caja.preferences', 'default-folder-viewer', 'list-view'],
    ['org.mate.caja.list-view', 'default-visible-columns', "['name', 'size', 'Transferfs::state']"],
    ['org.mate.caja.window-state', 'geometry', '1260x780+0+0'],
  ],
}

const onPath = async (command: string): Promise<boolean> => (await run('sh', ['-c', `command -v ${command}`])).code === 0
/** What is missing for the desktop session and AT-SPI, as package names. */
async function missingTools(m: Manager): Promise<string[]> {
  const missing: string[] = []
  if (!(await onPath(m.command)) || !existsSync(m.bindingDir)) missing.push(m.packages)
  for (const [command, pkg] of [['Xvfb', 'xvfb'], ['import', 'imagemagick'], ['gdbus', 'libglib2.0-bin'], ['dbus-run-session', 'dbus']]) {
    if (!(await onPath(command!))) missing.push(pkg!)
  }
  if ((await run(PYTHON, ['-c', 'import dogtail, pyatspi'])).code !== 0) missing.push('python3-dogtail python3-pyatspi')
  return missing
}
const missing = { nautilus: await missingTools(NAUTILUS), caja: await missingTools(CAJA) }

const world = useDemoMount()
let shots: string

beforeAll(async () => {
  shots = SHOTS ?? (await tempDir('transferfs-test-shots-'))
  await fsp.mkdir(shots, { recursive: true })
  if (missing.nautilus.length > 0 && missing.caja.length > 0) return
  // States to show besides "only on the service": one transfer kept, one file read in part.
  const photos = await inboxFolder('Photos from the harbour walk')
  expect((await run('setfattr', ['-n', 'user.transferfs.pin', '-v', '1', photos])).code).toBe(0)
  expect(await waitFor(async () => (await state(photos)) === 'pinned', 60_000, 250)).toBe(true)
  const database = await inboxFolder('Database export and project files')
  expect((await run('head', ['-c', '70000', path.join(database, 'inventory.sqlite')])).code).toBe(0)
}, 120_000)

async function inboxFolder(subject: string): Promise<string> {
  const name = (await fsp.readdir(path.join(world.account.mountDir, 'inbox'))).find((n) => n.includes(` ${subject} (`))
  if (!name) throw new Error(`no inbox folder for "${subject}"`)
  return path.join(world.account.mountDir, 'inbox', name)
}

/**
 * A home of its own for the file manager (settings in a key file, the extension linked into
 * its folder under XDG_DATA_HOME), then the session running it on the inbox.
 */
async function startManager(m: Manager): Promise<DesktopSession> {
  const home = await tempDir(`transferfs-test-${m.flavor}-home-`)
  const extensions = path.join(home, 'data', `${m.flavor}-python`, 'extensions')
  await fsp.mkdir(extensions, { recursive: true })
  await fsp.mkdir(path.join(home, 'run'), { mode: 0o700 })
  const entry = `transferfs_${m.flavor}.py`
  await fsp.symlink(path.join(REPO, 'desktop/file-managers', m.flavor, entry), path.join(extensions, entry))
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    XDG_DATA_HOME: path.join(home, 'data'),
    XDG_CONFIG_HOME: path.join(home, 'config'),
    XDG_RUNTIME_DIR: path.join(home, 'run'),
    // Settings from a key file in XDG_CONFIG_HOME: set here, read by the file manager, no dconf.
    GSETTINGS_BACKEND: 'keyfile',
    NAUTILUS_PYTHON_DEBUG: 'misc',
    // No GL under Xvfb: GTK 4 draws with cairo; GTK 3's AT-SPI bridge stays on.
    GSK_RENDERER: 'cairo',
    GDK_BACKEND: 'x11',
    GTK_A11Y: 'atspi',
    NO_AT_BRIDGE: '0',
    PYTHONDONTWRITEBYTECODE: '1',
    // The menu's commands: this checkout's transferfs, on the test's account.
    TRANSFERFS_COMMAND: `'${process.execPath}' --import '${TS_REGISTER}' '${CLI}'`,
  }
  const settings = [
    ...m.settings,
    // dogtail asks for it before it drives anything.
    ['org.gnome.desktop.interface', 'toolkit-accessibility', 'true'],
    // Tracker (which Nautilus starts) indexes nothing: it would read files of the home.
    ['org.freedesktop.Tracker3.Miner.Files', 'index-recursive-directories', '[]'],
    ['org.freedesktop.Tracker3.Miner.Files', 'index-single-directories', '[]'],
  ]
  for (const [schema, key, value] of settings) {
    const r = await runWith(env, 'gsettings', ['set', schema!, key!, value!])
    if (r.code !== 0 && !r.stderr.includes('No such schema')) throw new Error(`gsettings set ${schema} ${key}: ${r.stderr}`)
  }
  // stdbuf: the bindings' debug lines (NAUTILUS_PYTHON_DEBUG) are written as they come.
  return startDesktopSession(['stdbuf', '-oL', '-eL', ...m.open(path.join(world.account.mountDir, 'inbox'))], { env, width: 1280, height: 800, lifeMs: 300_000 })
}

interface Row { name: string; cells: string[]; images: string[] }
interface View { titles: string[]; rows: Row[]; waited?: boolean }

async function drive<T>(session: DesktopSession, args: string[], timeoutMs = 60_000): Promise<T> {
  const r = await session.run(PYTHON, [DRIVER, ...args], timeoutMs)
  if (r.code !== 0) throw new Error(`atspi_driver.py ${args.join(' ')}: ${r.stderr}${r.stdout}`)
  return JSON.parse(r.stdout) as T
}

/** What in the session's output says Python failed: a traceback, an exception's last line, or the extension's own complaint. */
const tracebacks = (log: string): string[] =>
  log.split('\n').filter((l) => /^Traceback \(most recent call last\)|^\s+File ".*", line \d+|^[\w.]*(Error|Exception): |\w+Warning: |^transferfs: /.test(l))

describe.skipIf(missing.nautilus.length > 0)(`Nautilus with the extension${missing.nautilus.length ? ` (skipped: install ${missing.nautilus.join(' ')})` : ''}`, () => {
  let session: DesktopSession
  let quarterly: string
  beforeAll(async () => {
    quarterly = await inboxFolder('Quarterly report')
    session = await startManager(NAUTILUS)
  }, 60_000)
  afterAll(async () => {
    await session?.stop()
  })

  it('loads the extension with no traceback and shows the Transfer column and emblems in list view', async () => {
    const row = path.basename(quarterly)
    const view = await drive<View>(session, ['wait', NAUTILUS.app, row, 'Only on the service', '60'], 90_000)
    await session.screenshot(path.join(shots, 'nautilus-list-view.png'))
    expect(view.waited, JSON.stringify(view)).toBe(true)
    expect(view.titles).toEqual(['Name', 'Size', 'Transfer'])
    const transfer = (subject: string): Row | undefined => view.rows.find((r) => r.name.includes(` ${subject} (`))
    expect(transfer('Quarterly report')?.cells.at(-1)).toBe('Only on the service')
    expect(transfer('Photos from the harbour walk')?.cells.at(-1)).toBe('Kept on this computer')
    expect(transfer('Database export and project files')?.cells.at(-1)).toMatch(/^Partly here \(\d+%\)$/)
    // By each name: its icon (GtkPicture), then the emblem (a GtkImage in the emblems' box).
    for (const r of view.rows) expect(r.images, r.name).toEqual(['GtkPicture', 'GtkImage'])
    const log = await session.log()
    expect(log).toContain('nautilus-python:Loaded python modules')
    expect(tracebacks(log)).toEqual([])
  }, 120_000)

  it('keeps a transfer, stops keeping it and frees its space through the right-click menu', async () => {
    const row = path.basename(quarterly)
    interface Chosen extends View { entries: string[] }
    // Right-click, the entry, and the column read until it says `words`: the extension reads the
    // entry again once the command is done, so by then the attribute has changed too.
    const step = async (entry: string, after: string, words: string): Promise<string[]> => {
      const chosen = await drive<Chosen>(session, ['menu', NAUTILUS.app, row, entry, words, '60'], 90_000)
      expect(chosen.waited, `${entry}: ${JSON.stringify(chosen.rows.find((r) => r.name === row))}`).toBe(true)
      expect(await state(quarterly), entry).toBe(after)
      return chosen.entries
    }
    expect(await state(quarterly)).toBe('online')
    // The first menu is photographed before it is chosen from.
    const first = await drive<{ entries: string[] }>(session, ['open-menu', NAUTILUS.app, row])
    await session.screenshot(path.join(shots, 'nautilus-menu.png'))
    expect(first.entries).toEqual(expect.arrayContaining(['Keep on this computer', 'Show details']))
    expect(first.entries).not.toContain('Free up space')
    const kept = await drive<View>(session, ['choose', NAUTILUS.app, 'Keep on this computer', row, 'Kept on this computer', '60'], 90_000)
    expect(kept.waited, JSON.stringify(kept.rows.find((r) => r.name === row))).toBe(true)
    expect(await state(quarterly)).toBe('pinned')
    expect(await step('Stop keeping', 'cached', 'On this computer')).not.toContain('Keep on this computer')
    await session.screenshot(path.join(shots, 'nautilus-kept-and-let-go.png'))
    expect(await step('Free up space', 'online', 'Only on the service')).not.toContain('Stop keeping')
    expect(tracebacks(await session.log())).toEqual([])
  }, 240_000)
})

describe.skipIf(missing.caja.length > 0)(`Caja with the extension${missing.caja.length ? ` (skipped: install ${missing.caja.join(' ')})` : ''}`, () => {
  let session: DesktopSession
  beforeAll(async () => {
    session = await startManager(CAJA)
  }, 60_000)
  afterAll(async () => {
    await session?.stop()
  })

  it('loads the extension with no traceback and shows the Transfer column in list view', async () => {
    const quarterly = path.basename(await inboxFolder('Quarterly report'))
    const view = await drive<View>(session, ['wait', CAJA.app, quarterly, 'Only on the service', '60'], 90_000)
    await session.screenshot(path.join(shots, 'caja-list-view.png'))
    expect(view.waited, JSON.stringify(view)).toBe(true)
    expect(view.titles).toEqual(expect.arrayContaining(['Name', 'Size', 'Transfer']))
    expect(view.rows.find((r) => r.name.includes(' Photos from the harbour walk ('))?.cells.at(-1)).toBe('Kept on this computer')
    expect(tracebacks(await session.log())).toEqual([])
  }, 120_000)
})
