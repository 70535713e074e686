// What the .deb installs for the desktop's file managers (docs/desktop.md): each Python
// extension where its file manager looks, the logic they share once, the send dialog and its
// manual, Dolphin's service menus and the helper their actions run.
import { cpSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import path from 'node:path'

/** Where the extensions find transferfs_fm once installed (their loader looks there last). */
export const FM_LIBRARY_DIR = 'usr/share/transferfs/file-managers'
/** The helper Dolphin's service menus run (their Exec lines name it). */
export const ACTION_HELPER = 'usr/lib/transferfs/transferfs-action'
export const SEND_DIALOG = 'usr/bin/transferfs-send-dialog'
/** Each file manager's folder under desktop/file-managers/ and where it loads Python extensions from. */
const EXTENSION_DIRS = {
  nautilus: 'usr/share/nautilus-python/extensions',
  nemo: 'usr/share/nemo-python/extensions',
  caja: 'usr/share/caja-python/extensions',
}
const SERVICE_MENUS = 'usr/share/kio/servicemenus'

/**
 * Copies them from the source tree `root` into the package's `tree`; returns the programs
 * among them (installed 0755). A file manager without its Python binding never reads its
 * folder, so it starts as without them.
 */
export function installDesktopFiles(root, tree) {
  const desktop = path.join(root, 'desktop')
  const fm = path.join(desktop, 'file-managers')
  const py = (name) => name.endsWith('.py')
  copyFiles(path.join(fm, 'transferfs_fm'), path.join(tree, FM_LIBRARY_DIR, 'transferfs_fm'), py)
  for (const [manager, dir] of Object.entries(EXTENSION_DIRS)) {
    const from = path.join(fm, manager)
    if (existsSync(from)) copyFiles(from, path.join(tree, dir), py)
  }
  copyFiles(path.join(desktop, 'dolphin'), path.join(tree, SERVICE_MENUS), (name) => name.endsWith('.desktop'))
  const programs = [
    [path.join(desktop, 'send-dialog', 'transferfs-send-dialog'), path.join(tree, SEND_DIALOG)],
    [path.join(desktop, 'dolphin', 'transferfs-action'), path.join(tree, ACTION_HELPER)],
  ]
  for (const [from, to] of programs) {
    mkdirSync(path.dirname(to), { recursive: true })
    cpSync(from, to)
  }
  const manual = path.join(tree, 'usr', 'share', 'man', 'man1', 'transferfs-send-dialog.1.gz')
  mkdirSync(path.dirname(manual), { recursive: true })
  writeFileSync(manual, execFileSync('gzip', ['-9n', '-c', path.join(desktop, 'send-dialog', 'transferfs-send-dialog.1')]))
  return programs.map(([, to]) => to)
}

/** The files of `from` (not its subfolders: no tests or caches) that `keep` names, into `to`. */
function copyFiles(from, to, keep) {
  mkdirSync(to, { recursive: true })
  for (const e of readdirSync(from, { withFileTypes: true })) {
    if (e.isFile() && keep(e.name)) cpSync(path.join(from, e.name), path.join(to, e.name))
  }
}
