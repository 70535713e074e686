#!/usr/bin/env node
// The system packages `npm start` or `npm test` need: gathers the facts setup-plan.mjs
// decides on, then runs apt as planned, its output shown. Node built-ins only: it runs
// before npm ci. Usage: node scripts/bootstrap.mjs start|test [--dry-run]; a dry run prints
// the apt commands instead of running them.
import { spawnSync } from 'node:child_process'
import { accessSync, constants, existsSync, realpathSync, statSync } from 'node:fs'
import path from 'node:path'
import { APT_NAMES, ARM64_TOOLS, BUILD_TOOLS, FUSE3_HEADER, HELPERS, PKG_CONFIG, TEST_TOOLS, candidatesIn, librariesIn, planSetup } from './setup-plan.mjs'

const mode = process.argv[2]
const dryRun = process.argv[3] === '--dry-run'
if ((mode !== 'start' && mode !== 'test') || process.argv.length > (dryRun ? 4 : 3)) {
  console.error('usage: node scripts/bootstrap.mjs start|test [--dry-run]')
  process.exit(2)
}

const pathDirs = (process.env.PATH ?? '').split(':').filter(Boolean)

/** The executable `name` in `dirs`, as its real path, if any. */
function which(name, dirs = pathDirs) {
  for (const dir of dirs) {
    const p = path.join(dir, name)
    try {
      accessSync(p, constants.X_OK)
      if (statSync(p).isFile()) return realpathSync(p)
    } catch {}
  }
  return undefined
}

function output(command, args) {
  const r = spawnSync(command, args, { encoding: 'utf8' })
  return r.status === 0 ? r.stdout : ''
}

function gatherFacts() {
  // ldconfig lives in sbin, which a user's PATH may lack.
  const ldconfig = which('ldconfig', ['/sbin', '/usr/sbin', ...pathDirs])
  // fusermount is a link to fusermount3 on Debian 12: one helper, met under both names.
  const helpers = new Map()
  for (const name of HELPERS) {
    const real = which(name, ['/bin', '/usr/bin', '/usr/local/bin', ...pathDirs])
    if (real && !helpers.has(real)) {
      const st = statSync(real)
      helpers.set(real, { path: real, setuid: st.uid === 0 && (st.mode & 0o4000) !== 0 })
    }
  }
  const apt = which('apt-get') !== undefined
  const tools = [...BUILD_TOOLS, PKG_CONFIG, ...TEST_TOOLS, ...ARM64_TOOLS]
  return {
    mode,
    libraries: ldconfig ? librariesIn(output(ldconfig, ['-p'])) : [],
    helpers: [...helpers.values()],
    fuse3Headers: existsSync(FUSE3_HEADER),
    commands: tools.flatMap((t) => (t.command && which(t.command) ? [t.command] : [])),
    // The notification test's server runs on /usr/bin/python3.
    pythonModules: tools.flatMap((t) =>
      (t.module && spawnSync('/usr/bin/python3', ['-c', `import ${t.module}`], { stdio: 'ignore' }).status === 0 ? [t.module] : [])),
    paths: tools.flatMap((t) => (t.path && existsSync(t.path) ? [t.path] : [])),
    typelibs: tools.flatMap((t) => {
      if (!t.typelib) return []
      const [name, version] = t.typelib.split('-')
      const load = `import gi; gi.require_version(${JSON.stringify(name)}, ${JSON.stringify(version)}); from gi.repository import ${name}`
      return spawnSync('/usr/bin/python3', ['-c', load], { stdio: 'ignore' }).status === 0 ? [t.typelib] : []
    }),
    foreignArchitectures: output('dpkg', ['--print-foreign-architectures']).split('\n').filter(Boolean),
    candidates: apt ? candidatesIn(output('apt-cache', ['policy', ...APT_NAMES])) : [],
    apt,
    root: process.getuid?.() === 0,
    sudo: which('sudo') !== undefined,
  }
}

function run(argv) {
  const r = spawnSync(argv[0], argv.slice(1), { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } })
  return r.status ?? 1
}

let plan = planSetup(gatherFacts())
// Fresh lists may name the packages differently (libfuse2t64): the plan is made again after them
// (and after the architectures its "name:arch" packages need, whose lists they bring).
if (plan.update && !dryRun) {
  for (const command of plan.addArchitectures ?? []) if (run(command) !== 0) process.exit(1)
  if (run(plan.update) !== 0) process.exit(1)
  plan = planSetup(gatherFacts())
}
for (const line of plan.messages) console.error(line)
if (plan.exitCode !== 0) process.exit(plan.exitCode)
if (dryRun) {
  const commands = [...(plan.addArchitectures ?? []), plan.update, plan.command].filter(Boolean)
  console.error(`bootstrap: dry run: would run: ${commands.length ? commands.map((c) => c.join(' ')).join('; ') : 'nothing'}`)
} else if (plan.command && run(plan.command) !== 0) {
  console.error('bootstrap: apt-get install failed (see above); it runs with --no-remove, so it refuses rather than remove a package')
  process.exit(1)
}
