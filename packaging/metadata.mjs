// What the .deb says about itself: its control file, its changelog, and the libraries its
// binaries need, as dpkg-shlibdeps works them out from the binaries themselves.
import { execFileSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'

export const PACKAGE = 'transferfs'
/** Where the runtime, the code and its dependencies live; /usr/bin/transferfs starts them. */
export const LIB_DIR = 'usr/lib/transferfs'
export const DOC_DIR = `usr/share/doc/${PACKAGE}`
/** Who answers for the package: DEBFULLNAME and DEBEMAIL, as Debian's tools take them, else the project (no mailbox). */
export const MAINTAINER = process.env.DEBEMAIL ? `${process.env.DEBFULLNAME ?? 'transferfs developers'} <${process.env.DEBEMAIL}>` : 'transferfs developers <dev@transferfs.invalid>'

/** The file managers' Python bindings, and what the send dialog runs on (docs/desktop.md). */
export const DESKTOP_SUGGESTS = ['python3-nautilus', 'nemo-python', 'python3-caja', 'python3-gi', 'gir1.2-gtk-4.0']

const DESCRIPTION = `mount a Transfer Service account as a folder
 transferfs is a FUSE file system that shows a Transfer Service account as a
 folder: the inbox and each transfer become folders, files are read on demand
 in verified chunks with a memory and disk cache, and files copied into
 outbox/ are sent as transfers.
 .
 The package carries its own Node.js runtime and the FUSE addons for libfuse 3
 (libfuse3.so.3 and libfuse3.so.4) and libfuse 2, so it needs no compiler and
 no Node.js from the distribution. It ships a systemd user unit template to
 mount at login (transferfs@.service) and mount.transferfs for /etc/fstab.
 .
 For the desktop: extensions for Nautilus, Nemo and Caja (state emblems, a
 Transfer column, Keep / Free up space / Copy link menu entries), service menus
 for Dolphin, and a dialog to send files (transferfs-send-dialog).`

/**
 * The control file. No maintainer scripts go with it: the package changes nothing outside
 * its own files, so removing or purging it leaves every user's config, cache and data
 * folders (and an unsent outbox in them) as they were.
 */
export function control({ version, arch, depends, installedKiB }) {
  return [
    `Package: ${PACKAGE}`,
    `Version: ${version}`,
    `Architecture: ${arch}`,
    `Maintainer: ${MAINTAINER}`,
    `Installed-Size: ${installedKiB}`,
    `Depends: ${depends}`,
    'Recommends: libnotify-bin',
    // The libfuse 2 addon serves `fuseLibrary: libfuse2`; libfuse 3 is what Depends brings.
    // The file managers' extensions load through their Python bindings, and the send dialog
    // needs GTK 4 for Python: each only for those who use that file manager or the dialog
    // (a server needs none of them), so suggested, never pulled in.
    `Suggests: ${['libfuse2 | libfuse2t64', ...DESKTOP_SUGGESTS].join(', ')}`,
    'Section: utils',
    'Priority: optional',
    `Description: ${DESCRIPTION}`,
    '',
  ].join('\n')
}

/** A native package's changelog (Debian's format), dated by the source, not the build. */
export function changelog(version, epoch) {
  return `${PACKAGE} (${version}) unstable; urgency=medium

  * transferfs ${version}, packaged with its own Node.js runtime.

 -- ${MAINTAINER}  ${rfc2822(Number(epoch))}
`
}

function rfc2822(seconds) {
  const d = new Date(seconds * 1000)
  const day = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'][d.getUTCDay()]
  const month = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'][d.getUTCMonth()]
  const two = (n) => String(n).padStart(2, '0')
  return `${day}, ${two(d.getUTCDate())} ${month} ${d.getUTCFullYear()} ${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} +0000`
}

/**
 * Depends: the mount helper (fuse3: never `fuse`, which would remove fuse3 and the desktop
 * built on it) and what dpkg-shlibdeps finds the runtime and the libfuse3.so.3 addon need.
 * Either libfuse 3 serves: the libfuse3.so.4 addon is for the systems that have libfuse3-4
 * (Debian 13 and later), which this build system's package database does not know, so the
 * alternative is added by name. The libfuse 2 addon stays out of Depends: it is a choice.
 * For another architecture (arch, from scripts/architectures.mjs) dpkg-shlibdeps reads the
 * libraries that architecture's packages installed through multiarch (libc6:arm64,
 * libstdc++6:arm64, libfuse3-3:arm64), as Debian's own cross builds do.
 */
export function runtimeDependencies(stage, binaries, arch) {
  const src = path.join(stage, 'shlibdeps')
  mkdirSync(path.join(src, 'debian'), { recursive: true })
  writeFileSync(path.join(src, 'debian', 'control'), `Source: ${PACKAGE}\n\nPackage: ${PACKAGE}\nArchitecture: ${arch.debian}\n`)
  const out = execFileSync('dpkg-shlibdeps', ['-O', ...binaries.map((b) => `-e${b}`)], { cwd: src, encoding: 'utf8', env: { ...process.env, DEB_HOST_ARCH: arch.debian } })
  const found = /^shlibs:Depends=(.*)$/m.exec(out)?.[1]
  if (!found) throw new Error(`dpkg-shlibdeps said nothing of use: ${out}`)
  const parts = found.split(', ').map((d) => (d.startsWith('libfuse3-3') ? `${d} | libfuse3-4` : d))
  if (!parts.some((d) => d.startsWith('libfuse3-3'))) throw new Error(`the libfuse 3 addon needs no libfuse3-3? ${found}`)
  return ['fuse3', ...parts].join(', ')
}
