// The bootstrap's decisions, against the machines it meets: it installs only what the loader
// and the mount lack, never Debian's `fuse` (which removes fuse3 and the desktop with it),
// and apt always runs with --no-remove. Then the real bootstrap, dry, on this machine.
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  APT_NAMES, ARM64_TOOLS, BUILD_TOOLS, HELPERS, PKG_CONFIG, SONAMES, TEST_TOOLS, candidatesIn, librariesIn, planSetup, type Facts, type Plan,
} from '../../scripts/setup-plan.mjs'

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '../..')
const TOOLS = [...BUILD_TOOLS, PKG_CONFIG, ...TEST_TOOLS, ...ARM64_TOOLS]
const SETUID_FUSERMOUNT3 = { path: '/usr/bin/fusermount3', setuid: true }

/** A Debian 12 desktop with everything: both libraries, fuse3's helper, headers, tools; root. */
function machine(changes: Partial<Facts> = {}): Facts {
  return {
    mode: 'test',
    libraries: ['libfuse.so.2', 'libfuse3.so.3'],
    helpers: [SETUID_FUSERMOUNT3],
    fuse3Headers: true,
    commands: TOOLS.flatMap((t) => (t.command ? [t.command] : [])),
    pythonModules: TOOLS.flatMap((t) => (t.module ? [t.module] : [])),
    paths: TOOLS.flatMap((t) => (t.path ? [t.path] : [])),
    typelibs: TOOLS.flatMap((t) => (t.typelib ? [t.typelib] : [])),
    foreignArchitectures: ['arm64'],
    candidates: ['libfuse2', 'libfuse3-3'],
    apt: true,
    root: true,
    sudo: false,
    ...changes,
  }
}

const names = (plan: Plan) => plan.install.map((p) => p.name)

/** What every plan keeps to: no `fuse`, and apt only ever installs, refusing removals. */
function expectSafe(plan: Plan) {
  expect(names(plan)).not.toContain('fuse')
  if (plan.command) {
    const apt = plan.command.indexOf('apt-get')
    expect(plan.command.slice(apt, apt + 4)).toEqual(['apt-get', 'install', '-y', '--no-remove'])
    expect(plan.command.slice(apt + 4)).toEqual(names(plan))
    expect(plan.update?.slice(-3)).toEqual(['apt-get', 'update', '-qq'])
  }
  // A package of another architecture only with that architecture added first; nothing else is.
  for (const command of plan.addArchitectures ?? []) expect(command.slice(-3, -1)).toEqual(['dpkg', '--add-architecture'])
  if (!plan.command) expect(plan.addArchitectures).toBeNull()
}

describe('the FUSE libraries and the mount helper', () => {
  it('libfuse2 only (Debian\'s fuse): the demo has its library; the tests add libfuse3 and headers, not fuse3', () => {
    const facts = machine({ libraries: ['libfuse.so.2'], helpers: [{ path: '/usr/bin/fusermount', setuid: true }], fuse3Headers: false })
    const start = planSetup({ ...facts, mode: 'start' })
    expect(start.install).toEqual([])
    expect(start.command).toBeNull()
    const test = planSetup(facts)
    expect(names(test)).toEqual(['libfuse3-3', 'libfuse3-dev'])
    expectSafe(test)
  })

  it('fuse3 only: its fusermount3 serves; the demo adds the headers, the tests libfuse2 too, never fuse', () => {
    const facts = machine({ libraries: ['libfuse3.so.3'], fuse3Headers: false })
    const start = planSetup({ ...facts, mode: 'start' })
    expect(names(start)).toEqual(['libfuse3-dev'])
    expectSafe(start)
    const test = planSetup(facts)
    expect(names(test)).toEqual(['libfuse2', 'libfuse3-dev'])
    expect(test.messages).toEqual([expect.stringContaining('installing for npm test: libfuse2 (the libfuse2 library)')])
    expectSafe(test)
  })

  it('both libraries, the headers and a helper: nothing to install, nothing to say', () => {
    for (const mode of ['start', 'test'] as const) {
      expect(planSetup(machine({ mode }))).toEqual({ install: [], messages: [], addArchitectures: null, update: null, command: null, exitCode: 0 })
    }
  })

  it('neither (a fresh Debian 12, as in CI): fuse3 brings the helper; the tests get both libraries side by side', () => {
    const facts = machine({ libraries: [], helpers: [], fuse3Headers: false, commands: [], pythonModules: [], paths: [], typelibs: [], foreignArchitectures: [] })
    const start = planSetup({ ...facts, mode: 'start' })
    expect(names(start)).toEqual(['libfuse3-3', 'libfuse3-dev', 'pkg-config', 'fuse3', 'make', 'g++', 'python3'])
    expectSafe(start)
    const test = planSetup(facts)
    expect(names(test)).toEqual(['libfuse2', 'libfuse3-3', 'libfuse3-dev', 'pkg-config', 'fuse3', 'make', 'g++', 'python3',
      'rsync', 'sqlite3', 'unzip', 'zip', 'zsh', 'procps', 'fio', 'util-linux-extra', 'libnotify-bin', 'dbus', 'python3-dbus', 'python3-gi',
      'dpkg-dev', 'meson', 'ninja-build', 'lintian', 'mmdebstrap', 'apt-utils', 'gnupg', 'systemd', 'tinyproxy-bin', 'iproute2', 'openssl', 'attr', 'libnfs-utils', 'nfs-common', 'tshark', 'libnfs-dev',
      'python3-nautilus', 'nemo-python', 'python3-caja', 'nautilus', 'caja', 'xvfb', 'libglib2.0-bin', 'imagemagick', 'python3-dogtail', 'python3-pyatspi',
      'gir1.2-gtk-4.0', 'xclip', 'desktop-file-utils',
      'crossbuild-essential-arm64', 'libfuse3-dev:arm64', 'libfuse2:arm64', 'libstdc++6:arm64', 'qemu-user-static', 'binfmt-support', 'arch-test'])
    // The start needs nothing of another architecture; the tests' arm64 packages need arm64 added before apt's lists are fetched.
    expect(start.addArchitectures).toBeNull()
    expect(test.addArchitectures).toEqual([['dpkg', '--add-architecture', 'arm64']])
    expect(test.update).toEqual(['apt-get', 'update', '-qq'])
    expect(test.command?.slice(0, 4)).toEqual(['apt-get', 'install', '-y', '--no-remove'])
    expect(test.exitCode).toBe(0)
    expectSafe(test)
  })

  it('takes the names apt offers: libfuse2t64 and libfuse3-4 (Debian 13), libfuse2t64 and libfuse3-3 (Ubuntu 24.04)', () => {
    const bare = { libraries: [], helpers: [], fuse3Headers: false }
    expect(names(planSetup(machine({ ...bare, candidates: ['libfuse2t64', 'libfuse3-4'] }))).slice(0, 4))
      .toEqual(['libfuse2t64', 'libfuse3-4', 'libfuse3-dev', 'fuse3'])
    expect(names(planSetup(machine({ ...bare, candidates: ['libfuse2t64', 'libfuse3-3'] }))).slice(0, 2))
      .toEqual(['libfuse2t64', 'libfuse3-3'])
    // Lists not fetched yet: the classic names (the plan is made again after apt-get update).
    expect(names(planSetup(machine({ ...bare, candidates: [] }))).slice(0, 2)).toEqual(['libfuse2', 'libfuse3-3'])
  })

  it('pkg-config, which the build finds the libfuse3 headers with, wherever libfuse3 is built', () => {
    const commands = ['make', 'g++', 'python3']
    expect(names(planSetup(machine({ commands, mode: 'start' })))).toEqual(['pkg-config'])
    expect(planSetup(machine({ commands, mode: 'start', libraries: ['libfuse.so.2'], fuse3Headers: false })).install).toEqual([])
  })

  it('libfuse3.so.4 counts as libfuse3', () => {
    expect(planSetup(machine({ libraries: ['libfuse.so.2', 'libfuse3.so.4'] })).install).toEqual([])
  })

  it('a helper that is not setuid: the fix is told, nothing is installed for it', () => {
    const broken = [{ path: '/usr/bin/fusermount3', setuid: false }]
    const user = planSetup(machine({ helpers: broken, root: false, sudo: true }))
    expect(user.exitCode).toBe(1)
    expect(user.command).toBeNull()
    expect(user.messages).toEqual([expect.stringContaining('`sudo chmod u+s /usr/bin/fusermount3`')])
    expect(names(user)).not.toContain('fuse3')
    // Root mounts without it: said, and the rest goes on.
    const root = planSetup(machine({ helpers: broken, libraries: ['libfuse3.so.3'] }))
    expect(root.exitCode).toBe(0)
    expect(root.messages[0]).toContain('`chmod u+s /usr/bin/fusermount3`')
    expect(names(root)).toEqual(['libfuse2'])
    // Any setuid helper serves, whichever it is.
    expect(planSetup(machine({ helpers: [...broken, { path: '/usr/bin/fusermount', setuid: true }] })).messages).toEqual([])
  })
})

describe('the arm64 package\'s tools', () => {
  it('arm64 libraries are asked for as name:arm64, after `dpkg --add-architecture arm64` where dpkg does not know it yet', () => {
    // The other tools' paths present: only the arm64 ones vary here.
    const others = TEST_TOOLS.flatMap((t) => (t.path ? [t.path] : []))
    const files = ARM64_TOOLS.flatMap((t) => (t.path ? [t.path] : []))
    const unknown = planSetup(machine({ paths: [...others, ...files.slice(1)], foreignArchitectures: [] }))
    expect(names(unknown)).toEqual(['libfuse3-dev:arm64'])
    expect(unknown.addArchitectures).toEqual([['dpkg', '--add-architecture', 'arm64']])
    expectSafe(unknown)
    // Known already: nothing to add. The name apt offers is taken (libfuse2t64 on Debian 13).
    const known = planSetup(machine({ paths: [...others, ...files.filter((f) => !f.endsWith('libfuse.so.2'))], candidates: ['libfuse2t64:arm64'] }))
    expect(names(known)).toEqual(['libfuse2t64:arm64'])
    expect(known.addArchitectures).toBeNull()
    // Not root, no sudo: one command line for all of it.
    const told = planSetup(machine({ paths: [...others, ...files.slice(1)], foreignArchitectures: [], root: false, sudo: false }))
    expect(told.messages).toEqual([expect.stringContaining("`su -c 'dpkg --add-architecture arm64 && apt-get update && apt-get install -y --no-remove libfuse3-dev:arm64'`")])
    // The demo needs none of it.
    expect(planSetup(machine({ mode: 'start', paths: [], foreignArchitectures: [], commands: [] })).install.map((p) => p.name).filter((n) => n.includes(':'))).toEqual([])
  })
})

describe('who installs', () => {
  const missing = { libraries: ['libfuse3.so.3'], fuse3Headers: false }

  it('no apt (Fedora): dnf\'s names are told, and the bootstrap stops', () => {
    const plan = planSetup(machine({ ...missing, apt: false, helpers: [], root: false, sudo: true }))
    expect(plan.exitCode).toBe(1)
    expect(plan.command).toBeNull()
    expect(plan.messages).toEqual([expect.stringContaining('`sudo dnf install fuse-libs fuse3-devel fuse3`')])
    // Nothing missing: no apt needed.
    expect(planSetup(machine({ apt: false })).exitCode).toBe(0)
  })

  it('not root, no sudo: the command to run as root is told, and the bootstrap stops', () => {
    const plan = planSetup(machine({ ...missing, root: false, sudo: false }))
    expect(plan.exitCode).toBe(1)
    expect(plan.command).toBeNull()
    expect(plan.messages).toEqual([expect.stringContaining("`su -c 'apt-get install -y --no-remove libfuse2 libfuse3-dev'`")])
  })

  it('not root, with sudo: apt runs through sudo', () => {
    const plan = planSetup(machine({ ...missing, root: false, sudo: true }))
    expect(plan.exitCode).toBe(0)
    expect(plan.update).toEqual(['sudo', 'apt-get', 'update', '-qq'])
    expect(plan.command).toEqual(['sudo', 'apt-get', 'install', '-y', '--no-remove', 'libfuse2', 'libfuse3-dev'])
    expectSafe(plan)
  })

  it('start leaves the test tools alone; test installs the missing ones', () => {
    const facts = machine({ commands: ['make', 'g++', 'python3', 'pkg-config', 'sqlite3', 'unzip', 'zip', 'dbus-daemon'] })
    expect(planSetup({ ...facts, mode: 'start' }).install).toEqual([])
    expect(names(planSetup(facts))).toEqual(['rsync', 'zsh', 'procps', 'fio', 'util-linux-extra', 'libnotify-bin', 'dpkg-dev', 'meson', 'ninja-build', 'lintian', 'mmdebstrap', 'apt-utils', 'gnupg', 'systemd', 'tinyproxy-bin', 'iproute2', 'openssl', 'attr', 'libnfs-utils', 'nfs-common', 'tshark',
      'nautilus', 'caja', 'xvfb', 'libglib2.0-bin', 'imagemagick', 'xclip', 'desktop-file-utils',
      'crossbuild-essential-arm64', 'qemu-user-static', 'binfmt-support', 'arch-test'])
  })
})

describe('reading the machine', () => {
  it('the libraries: by soname in `ldconfig -p`, not by their links or dev names', () => {
    const ldconfig = [
      '549 libs found in cache `/etc/ld.so.cache\'',
      '\tlibfuse3.so.4 (libc6,x86-64) => /lib/x86_64-linux-gnu/libfuse3.so.4',
      '\tlibfuse3.so (libc6,x86-64) => /lib/x86_64-linux-gnu/libfuse3.so',
      '\tlibfuse.so.2.9 (libc6,x86-64) => /lib/x86_64-linux-gnu/libfuse.so.2.9',
    ].join('\n')
    expect(librariesIn(ldconfig)).toEqual(['libfuse3.so.4'])
    expect(librariesIn(`${ldconfig}\n\tlibfuse.so.2 (libc6,x86-64) => /lib/x86_64-linux-gnu/libfuse.so.2`)).toEqual(['libfuse.so.2', 'libfuse3.so.4'])
  })

  it('the candidates: a name only a Provides offers (libfuse2 on Ubuntu 24.04) is not one', () => {
    const policy = [
      'libfuse2:', '  Installed: (none)', '  Candidate: (none)', '  Version table:',
      'libfuse2t64:', '  Installed: (none)', '  Candidate: 2.9.9-8.1build1', '  Version table:',
      '     2.9.9-8.1build1 500', '        500 http://archive.ubuntu.com/ubuntu noble/main amd64 Packages',
      'libfuse3-3:', '  Installed: 3.14.0-5build1', '  Candidate: 3.14.0-5build1', '  Version table:',
    ].join('\n')
    expect(candidatesIn(policy)).toEqual(['libfuse2t64', 'libfuse3-3'])
    expect(candidatesIn('')).toEqual([])
  })
})

it('no machine gets a plan with fuse or one that may remove a package', () => {
  const facts = fc.record({
    mode: fc.constantFrom('start' as const, 'test' as const),
    libraries: fc.subarray(SONAMES),
    helpers: fc.array(fc.record({ path: fc.constantFrom(...HELPERS.map((h) => `/usr/bin/${h}`)), setuid: fc.boolean() }), { maxLength: 2 }),
    fuse3Headers: fc.boolean(),
    commands: fc.subarray(TOOLS.flatMap((t) => (t.command ? [t.command] : []))),
    pythonModules: fc.subarray(['dbus', 'gi']),
    paths: fc.subarray(TOOLS.flatMap((t) => (t.path ? [t.path] : []))),
    typelibs: fc.subarray(['Gtk-4.0']),
    foreignArchitectures: fc.subarray(['arm64', 'i386']),
    candidates: fc.subarray(APT_NAMES),
    apt: fc.boolean(),
    root: fc.boolean(),
    sudo: fc.boolean(),
  })
  fc.assert(fc.property(facts, (f) => {
    const plan = planSetup(f)
    expectSafe(plan)
    // Nothing runs when the bootstrap stops, and it stops with something said.
    if (plan.exitCode !== 0) expect([plan.command, plan.messages.length > 0]).toEqual([null, true])
  }))
})

describe('the real bootstrap, dry, on this machine (fuse3, libfuse2, libfuse3-dev installed)', () => {
  function dryRun(mode: string) {
    const r = spawnSync('bash', ['scripts/bootstrap.sh', mode, '--dry-run'], { cwd: ROOT, encoding: 'utf8' })
    expect(r.status, r.stderr).toBe(0)
    return r.stderr
  }

  it('start: nothing to install, nothing to warn about', () => {
    expect(dryRun('start')).toBe('bootstrap: dry run: would run: nothing\n')
  })

  it('test: no FUSE package, and at most the missing test tools, with --no-remove', () => {
    const stderr = dryRun('test')
    expect(stderr).not.toContain('setuid')
    const planned = /would run: (.*)$/m.exec(stderr)?.[1] ?? ''
    expect(planned, stderr).not.toBe('')
    const install = planned.split('; ').find((c) => c.includes('apt-get install'))
    if (install) {
      expect(install).toMatch(/^apt-get install -y --no-remove /)
      const packages = install.split(' ').slice(4)
      // None of this machine's FUSE packages (another architecture's libraries are the arm64 package's build).
      expect(packages.filter((p) => p.includes('fuse') && !p.includes(':'))).toEqual([])
      const testTools = [...TEST_TOOLS, ...ARM64_TOOLS].flatMap((t) => t.apt)
      expect(packages.filter((p) => !testTools.includes(p))).toEqual([])
    } else expect(planned).toBe('nothing')
  })
})
