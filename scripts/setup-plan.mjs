// Decides what the bootstrap installs, from facts about the machine (gathered by
// bootstrap.mjs, made up in tests); nothing here looks at the machine itself.
// Debian's `fuse` and `fuse3` conflict: asking apt for `fuse` on a desktop with fuse3
// removes fuse3 and everything built on it (gvfs, flatpak, sshfs, the desktop). So a FUSE
// library counts as present when the loader finds it, whatever package brought it; any
// setuid fusermount3 or fusermount serves as the mount helper; `fuse` is never asked for,
// and apt runs with --no-remove so that no plan of apt's can remove anything either.

/** @typedef {import('./setup-plan.d.mts').Facts} Facts */
/** @typedef {import('./setup-plan.d.mts').Need} Need */
/** @typedef {import('./setup-plan.d.mts').Plan} Plan */

/** The sonames the loader is asked about. */
export const SONAMES = ['libfuse.so.2', 'libfuse3.so.3', 'libfuse3.so.4']
/** The mount helpers, by name. */
export const HELPERS = ['fusermount3', 'fusermount']
export const FUSE3_HEADER = '/usr/include/fuse3/fuse.h'

// apt names, most recent release's first: libfuse2 became libfuse2t64 (Ubuntu 24.04,
// Debian 13) and libfuse3-3 libfuse3-4 (Debian 13). The last one is used when apt's lists
// offer none of them (not fetched yet).
const LIBFUSE2 = { apt: ['libfuse2t64', 'libfuse2'], dnf: 'fuse-libs', why: 'the libfuse2 library' }
const LIBFUSE3 = { apt: ['libfuse3-4', 'libfuse3-3'], dnf: 'fuse3-libs', why: 'the libfuse3 library' }
const LIBFUSE3_DEV = { apt: ['libfuse3-dev'], dnf: 'fuse3-devel', why: 'the libfuse3 headers, to build the addon' }
const HELPER = { apt: ['fuse3'], dnf: 'fuse3', why: 'the setuid mount helper fusermount3' }
/** The addon build finds the libfuse3 headers through it: without it, it builds for libfuse2 only. @type {Need} */
export const PKG_CONFIG = { command: 'pkg-config', apt: ['pkg-config'], dnf: 'pkgconf-pkg-config', why: 'to find the libfuse3 headers' }

/**
 * The arm64 package, which the package test cross-builds and runs in a Debian arm64 root under
 * emulation: Debian's cross compiler; the arm64 libraries its addons link and dpkg-shlibdeps
 * reads, through multiarch (for which apt must know the architecture: the plan adds it); qemu,
 * registered with the kernel by binfmt-support, to run arm64 programs. @type {Need[]}
 */
export const ARM64_TOOLS = [
  { command: 'aarch64-linux-gnu-gcc', apt: ['crossbuild-essential-arm64'], dnf: 'gcc-c++-aarch64-linux-gnu', why: 'the arm64 package\'s FUSE addons are cross-built with it' },
  { path: '/usr/lib/aarch64-linux-gnu/pkgconfig/fuse3.pc', apt: ['libfuse3-dev:arm64'], dnf: 'fuse3-devel.aarch64', why: 'the arm64 libfuse3.so.3 addon is built against it' },
  { path: '/usr/lib/aarch64-linux-gnu/libfuse.so.2', apt: ['libfuse2t64:arm64', 'libfuse2:arm64'], dnf: 'fuse-libs.aarch64', why: 'the arm64 libfuse.so.2 addon links it' },
  { path: '/usr/lib/aarch64-linux-gnu/libstdc++.so.6', apt: ['libstdc++6:arm64'], dnf: 'libstdc++.aarch64', why: 'dpkg-shlibdeps reads the arm64 Node runtime\'s dependencies off it' },
  { command: 'qemu-aarch64-static', apt: ['qemu-user-static'], dnf: 'qemu-user-static-aarch64', why: 'the arm64 package test runs a Debian arm64 root under emulation' },
  { command: 'update-binfmts', apt: ['binfmt-support'], dnf: 'qemu-user-binfmt', why: 'it registers qemu for arm64 programs with the kernel' },
  { command: 'arch-test', apt: ['arch-test'], dnf: 'arch-test', why: 'mmdebstrap checks with it that arm64 programs run here' },
]
/** Multiarch: the architecture a package name's ":arch" names. */
const FOREIGN = /:([a-z0-9]+)$/

/** The package names whose apt candidates decide between the names above. */
export const APT_NAMES = [...LIBFUSE2.apt, ...LIBFUSE3.apt, ...ARM64_TOOLS.flatMap((n) => (n.apt.length > 1 ? n.apt : []))]

/** node-gyp builds the addon from source with these. @type {Need[]} */
export const BUILD_TOOLS = [
  { command: 'make', apt: ['make'], dnf: 'make', why: 'to build the addon' },
  { command: 'g++', apt: ['g++'], dnf: 'gcc-c++', why: 'to build the addon' },
  { command: 'python3', apt: ['python3'], dnf: 'python3', why: 'node-gyp runs on it' },
]

/** What the test suite drives besides the mount. @type {Need[]} */
export const TEST_TOOLS = [
  ...['rsync', 'sqlite3', 'unzip', 'zip'].map((command) =>
    ({ command, apt: [command], dnf: command === 'sqlite3' ? 'sqlite' : command, why: 'the tests run it on the mount' })),
  { command: 'zsh', apt: ['zsh'], dnf: 'zsh', why: 'its completion script is tested' },
  { command: 'pgrep', apt: ['procps'], dnf: 'procps-ng', why: 'the tests find mount helpers and daemons with it' },
  { command: 'fio', apt: ['fio'], dnf: 'fio', why: '`npm run bench` drives it' },
  { command: 'fincore', apt: ['util-linux-extra'], dnf: 'util-linux', why: 'a disk-cache test asks it what the page cache holds' },
  // The notification test: a session bus, notify-send, and a stand-in notification server
  // that runs on the system's Python.
  { command: 'notify-send', apt: ['libnotify-bin'], dnf: 'libnotify', why: 'the notification test' },
  { command: 'dbus-daemon', apt: ['dbus'], dnf: 'dbus-daemon', why: 'the notification test' },
  { module: 'dbus', apt: ['python3-dbus'], dnf: 'python3-dbus', why: 'the notification test' },
  { module: 'gi', apt: ['python3-gi'], dnf: 'python3-gobject', why: 'the notification test' },
  // The mount tests run once more on libfuse 3.17 (soname libfuse3.so.4), which
  // scripts/build-libfuse3.sh builds from Debian's source package with these.
  { command: 'dpkg-source', apt: ['dpkg-dev'], dnf: 'dpkg-dev', why: 'to unpack the libfuse 3.17 source the tests build' },
  { command: 'meson', apt: ['meson'], dnf: 'meson', why: 'to build libfuse 3.17 for the tests' },
  { command: 'ninja', apt: ['ninja-build'], dnf: 'ninja-build', why: 'to build libfuse 3.17 for the tests' },
  // The package test builds the .deb, checks it with lintian, and installs it into a clean
  // Debian root made with mmdebstrap.
  { command: 'lintian', apt: ['lintian'], dnf: 'lintian', why: 'the package test checks the .deb with it' },
  { command: 'mmdebstrap', apt: ['mmdebstrap'], dnf: 'mmdebstrap', why: 'the package tests install the .deb into clean Debian roots it makes (one with Nautilus)' },
  // It also releases the package into a signed apt repository (packaging/release.mjs).
  { command: 'apt-ftparchive', apt: ['apt-utils'], dnf: 'apt-utils', why: 'the package test makes an apt repository with it' },
  { command: 'gpg', apt: ['gnupg'], dnf: 'gnupg2', why: 'the package test signs its apt repository with a key it makes' },
  { command: 'systemd-escape', apt: ['systemd'], dnf: 'systemd', why: 'the unit template test escapes folders with it' },
  // The proxy tests start a proxy of their own: Debian's tinyproxy-bin is the program
  // without the system service (the tinyproxy package would start one on port 8888).
  { command: 'tinyproxy', apt: ['tinyproxy-bin'], dnf: 'tinyproxy', why: 'the proxy tests start one of their own' },
  { command: 'ss', apt: ['iproute2'], dnf: 'iproute', why: 'the proxy mount test sees which process holds each connection' },
  { command: 'openssl', apt: ['openssl'], dnf: 'openssl', why: 'the trust test names certificates by their hash with it' },
  { command: 'setfattr', apt: ['attr'], dnf: 'attr', why: 'the pin tests pin with extended attributes on the mount' },
  // The NFS server is tested with clients we did not write: libnfs's tools, and the kernel's
  // own client where the kernel has one (mount.nfs).
  { command: 'nfs-ls', apt: ['libnfs-utils'], dnf: 'libnfs-utils', why: 'the NFS tests list and read through libnfs\'s nfs-ls and nfs-cat' },
  { command: 'mount.nfs', apt: ['nfs-common'], dnf: 'nfs-utils', why: 'the NFS tests mount with the kernel\'s NFS client where it has one' },
  { command: 'tshark', apt: ['tshark'], dnf: 'wireshark-cli', why: 'an NFS test has Wireshark\'s dissector read a captured session' },
  { path: '/usr/include/nfsc/libnfs.h', apt: ['libnfs-dev'], dnf: 'libnfs-devel', why: 'an NFS test builds a program on libnfs\'s C API' },
  // The file-manager extensions: loaded under each binding (its extensions folder says it is
  // installed), and Nautilus and Caja themselves run under Xvfb with a session bus, driven
  // through AT-SPI (dogtail) and photographed with ImageMagick's `import`.
  { path: '/usr/share/nautilus-python/extensions', apt: ['python3-nautilus'], dnf: 'nautilus-python', why: 'the file-manager tests load the extension under Nautilus\'s binding' },
  { path: '/usr/share/nemo-python/extensions', apt: ['nemo-python'], dnf: 'nemo-python', why: 'the file-manager tests load the extension under Nemo\'s binding' },
  { path: '/usr/share/caja-python/extensions', apt: ['python3-caja'], dnf: 'caja-python', why: 'the file-manager tests load the extension under Caja\'s binding' },
  { command: 'nautilus', apt: ['nautilus'], dnf: 'nautilus', why: 'the file-manager test runs Nautilus with the extension' },
  { command: 'caja', apt: ['caja'], dnf: 'caja', why: 'the file-manager test runs Caja with the extension' },
  { command: 'Xvfb', apt: ['xvfb'], dnf: 'xorg-x11-server-Xvfb', why: 'the desktop tests run the file managers and the send dialog on a virtual screen' },
  { command: 'gdbus', apt: ['libglib2.0-bin'], dnf: 'glib2', why: 'the file-manager test turns accessibility on over the session bus' },
  { command: 'import', apt: ['imagemagick'], dnf: 'ImageMagick', why: 'the file-manager test takes screenshots' },
  { module: 'dogtail', apt: ['python3-dogtail'], dnf: 'python3-dogtail', why: 'the file-manager test drives the file managers through AT-SPI' },
  { module: 'pyatspi', apt: ['python3-pyatspi'], dnf: 'python3-pyatspi', why: 'the file-manager and send dialog tests read them through AT-SPI' },
  // The send dialog (GTK 4 through PyGObject) is run and driven under Xvfb; Dolphin's service
  // menus are validated, and the link their Copy link puts on the clipboard is read back.
  { typelib: 'Gtk-4.0', apt: ['gir1.2-gtk-4.0'], dnf: 'gtk4', why: 'the send dialog test runs the dialog' },
  { command: 'xclip', apt: ['xclip'], dnf: 'xclip', why: 'the Dolphin test reads the link Copy link put on the clipboard' },
  { command: 'desktop-file-validate', apt: ['desktop-file-utils'], dnf: 'desktop-file-utils', why: 'the Dolphin test validates the service menus' },
]

/**
 * What to install for `mode`, and what to tell the user.
 * `start` (the demo) needs one FUSE library, libfuse3 preferred; `test` needs both, since
 * the suite mounts on both backends, plus the libfuse3 headers and the test tools.
 * The libfuse2 headers come with an npm package: no libfuse-dev.
 * @param {Facts} facts
 * @returns {Plan}
 */
export function planSetup(facts) {
  const has = (/** @type {string[]} */ sonames) => sonames.some((s) => facts.libraries.includes(s))
  const fuse2 = has(['libfuse.so.2'])
  const fuse3 = has(['libfuse3.so.3', 'libfuse3.so.4'])
  /** @type {Need[]} */
  const needs = []
  if (facts.mode === 'test' && !fuse2) needs.push(LIBFUSE2)
  if (!fuse3 && (facts.mode === 'test' || !fuse2)) needs.push(LIBFUSE3)
  // The libfuse3 addon is built wherever libfuse3 is used: always in tests, and for the demo
  // unless libfuse2 is its only library.
  const buildsFuse3 = facts.mode === 'test' || fuse3 || !fuse2
  if (buildsFuse3 && !facts.fuse3Headers) needs.push(LIBFUSE3_DEV)
  if (buildsFuse3 && !present(facts, PKG_CONFIG)) needs.push(PKG_CONFIG)

  /** @type {string[]} */
  const messages = []
  let exitCode = 0
  if (facts.helpers.length === 0) needs.push(HELPER)
  else if (!facts.helpers.some((h) => h.setuid)) {
    // Installed but broken: installing would change nothing (and `fuse` would remove fuse3).
    const paths = facts.helpers.map((h) => h.path)
    messages.push(`bootstrap: ${paths.join(' and ')} ${paths.length > 1 ? 'are' : 'is'} not setuid root, so only root can mount: ` +
      `run \`${asRoot(facts, `chmod u+s ${paths[0]}`)}\` (or reinstall fuse3)`)
    if (!facts.root) exitCode = 1
  }

  needs.push(...BUILD_TOOLS.filter((n) => !present(facts, n)))
  if (facts.mode === 'test') needs.push(...TEST_TOOLS.filter((n) => !present(facts, n)), ...ARM64_TOOLS.filter((n) => !present(facts, n)))

  const install = needs.map((n) => ({ name: facts.apt ? aptName(facts, n.apt) : n.dnf, why: n.why }))
  if (install.some((p) => p.name === 'fuse')) throw new Error('bootstrap: the plan names `fuse`, which would remove fuse3')
  if (install.length === 0 || exitCode !== 0) return { install, messages, addArchitectures: null, update: null, command: null, exitCode }

  const names = install.map((p) => p.name)
  // The architectures apt must know before its lists can offer a package of them.
  const newArchitectures = [...new Set(names.flatMap((n) => FOREIGN.exec(n)?.[1] ?? []))].filter((a) => !facts.foreignArchitectures.includes(a))
  const what = install.map((p) => `${p.name} (${p.why})`).join(', ')
  if (!facts.apt) {
    messages.push(`bootstrap: npm ${facts.mode} needs ${what}; there is no apt here: install them, ` +
      `e.g. \`${asRoot(facts, `dnf install ${names.join(' ')}`)}\`, then run this again`)
    return { install, messages, addArchitectures: null, update: null, command: null, exitCode: 1 }
  }
  const command = ['apt-get', 'install', '-y', '--no-remove', ...names]
  const addArchitectures = newArchitectures.map((a) => ['dpkg', '--add-architecture', a])
  if (!facts.root && !facts.sudo) {
    const all = [...addArchitectures, ['apt-get', 'update'], command].map((c) => c.join(' '))
    messages.push(`bootstrap: npm ${facts.mode} needs ${what}; installing needs root: ` +
      `run \`${asRoot(facts, addArchitectures.length > 0 ? all.join(' && ') : command.join(' '))}\`, then run this again`)
    return { install, messages, addArchitectures: null, update: null, command: null, exitCode: 1 }
  }
  messages.push(`bootstrap: installing for npm ${facts.mode}: ${what}`)
  const sudo = facts.root ? [] : ['sudo']
  return {
    install, messages,
    addArchitectures: addArchitectures.length > 0 ? addArchitectures.map((c) => [...sudo, ...c]) : null,
    update: [...sudo, 'apt-get', 'update', '-qq'], command: [...sudo, ...command], exitCode: 0,
  }
}

/** Those of SONAMES in `ldconfig -p`'s output: the libraries the loader finds. @param {string} text */
export function librariesIn(text) {
  const found = new Set(text.split('\n').map((line) => line.trim().split(' ')[0]))
  return SONAMES.filter((s) => found.has(s))
}

/**
 * The packages `apt-cache policy NAME...` offers: each is "NAME:" then "  Candidate: VERSION",
 * "(none)" when only a Provides names it (libfuse2 on t64 releases); unknown names print nothing.
 * @param {string} text
 */
export function candidatesIn(text) {
  /** @type {string[]} */
  const offered = []
  let name = ''
  for (const line of text.split('\n')) {
    if (/^\S+:$/.test(line)) name = line.slice(0, -1)
    else if (/^\s+Candidate: /.test(line) && !line.includes('(none)')) offered.push(name)
  }
  return offered
}

/** @param {Facts} facts @param {Need} need */
function present(facts, need) {
  if (need.command) return facts.commands.includes(need.command)
  if (need.path) return facts.paths.includes(need.path)
  if (need.typelib) return facts.typelibs.includes(need.typelib)
  return facts.pythonModules.includes(need.module ?? '')
}

/** The first name apt offers, else the last (the classic name). @param {Facts} facts @param {string[]} names */
function aptName(facts, names) {
  return names.find((n) => facts.candidates.includes(n)) ?? /** @type {string} */ (names.at(-1))
}

/** `command` as the user runs it as root. @param {Facts} facts @param {string} command */
function asRoot(facts, command) {
  if (facts.root) return command
  return facts.sudo ? `sudo ${command}` : `su -c '${command}'`
}
