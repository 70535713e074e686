// One clean build per checkout, shared by the tests that package the product (`npm pack`,
// the .deb): a clean copy of the checkout (clean-copy.ts) with its dependencies installed,
// the FUSE addons built and the TypeScript compiled, as a fresh clone gets them. It is kept
// in the temporary folder under a digest of the copy's files, so every test of a run, and
// every run of the same files, builds on the same one; a change to any file makes a new one.
// Whoever uses it holds its lock, as `npm pack` and build-deb.mjs both write into it. The .deb
// `npm run package` makes of it is kept beside it the same way (cleanBuildDeb), for the tests
// that install that package rather than test how it is built.
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { collectGroup } from '../../scripts/support/process-group.js'
import { checkoutDigest, copyCleanCheckout, lastCommitEpoch } from './clean-copy.js'
import { run } from './mount.js'

const CACHE = path.join(os.tmpdir(), 'transferfs-clean-build')
/** ms: the longest a build or a use may hold the lock (npm ci, three addons, tsc on two busy cores). */
const LOCK_WAIT_MS = 20 * 60_000
/** ms: builds of other checkouts older than this are removed. */
const KEEP_MS = 24 * 3600_000
const READY = '.clean-build-ready'
/** Beside a clean build: the folder its .deb is kept in (cleanBuildDeb). */
const DEB_SUFFIX = '.deb'

/** The lock: a folder made atomically, holding the pid of its holder (a dead holder's lock is taken over). */
async function lock(dir: string): Promise<() => Promise<void>> {
  const lockDir = `${dir}.lock`
  const end = Date.now() + LOCK_WAIT_MS
  for (;;) {
    try {
      await mkdir(lockDir)
      await writeFile(path.join(lockDir, 'pid'), String(process.pid))
      return () => rm(lockDir, { recursive: true, force: true })
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    }
    const holder = Number(await readFile(path.join(lockDir, 'pid'), 'utf8').catch(() => '0'))
    const age = Date.now() - (await stat(lockDir).then((s) => s.mtimeMs, () => Date.now()))
    // A holder that died (or never wrote its pid within a minute) leaves the lock to the next.
    if ((holder > 0 && !existsSync(`/proc/${holder}`)) || (holder === 0 && age > 60_000)) {
      await rm(lockDir, { recursive: true, force: true })
      continue
    }
    if (Date.now() > end) throw new Error(`the clean build at ${dir} stayed locked by pid ${holder} for ${LOCK_WAIT_MS / 60_000} min`)
    await new Promise((r) => setTimeout(r, 1000))
  }
}

async function pruneOthers(keep: string): Promise<void> {
  for (const name of await readdir(CACHE).catch(() => [])) {
    const dir = path.join(CACHE, name)
    if (dir === keep || dir === `${keep}${DEB_SUFFIX}` || name.endsWith('.lock')) continue
    const s = await stat(dir).catch(() => undefined)
    if (s && Date.now() - s.mtimeMs > KEEP_MS) await rm(dir, { recursive: true, force: true }).catch(() => {})
  }
}

async function step(what: string, dir: string, cmd: string, args: string[]): Promise<void> {
  const r = await run(cmd, args, { cwd: dir, timeoutMs: 600_000 })
  if (r.code !== 0) throw new Error(`${what} in a clean copy of the checkout (${dir}): exit ${r.code}\n${r.stderr.slice(-4000)}`)
}

/**
 * Runs use(dir) on the shared clean build of this checkout, made first if there is none
 * yet, with its lock held: use may build in it (its outputs must go elsewhere).
 */
export async function withCleanBuild<T>(use: (dir: string) => Promise<T>): Promise<T> {
  const dir = path.join(CACHE, (await checkoutDigest()).slice(0, 16))
  await mkdir(CACHE, { recursive: true })
  const unlock = await lock(dir)
  try {
    if (!existsSync(path.join(dir, READY))) {
      await rm(dir, { recursive: true, force: true })
      await copyCleanCheckout(dir)
      await step('npm ci', dir, 'npm', ['ci', '--no-audit', '--no-fund'])
      await step('the FUSE addons', dir, process.execPath, ['scripts/build-fuse-addon.mjs', '--prebuilds'])
      await step('tsc', dir, process.execPath, [path.join(dir, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'])
      await writeFile(path.join(dir, READY), `${new Date().toISOString()}\n`)
      await pruneOthers(dir)
    }
    return await use(dir)
  } finally {
    await unlock()
  }
}

/**
 * Runs use(dir) on a copy of the shared clean build (made first if there is none), taken under
 * its lock and used without it, then removed: a long build in the copy (both architectures'
 * packages) leaves the shared one to the other package tests meanwhile.
 */
export async function withCleanBuildCopy<T>(use: (dir: string) => Promise<T>): Promise<T> {
  const copy = await mkdtemp(path.join(os.tmpdir(), 'transferfs-clean-build-copy-'))
  try {
    await withCleanBuild(async (dir) => {
      // -a: node_modules/.bin's links and the scripts' modes as they are.
      const r = await run('cp', ['-a', `${dir}/.`, copy], { timeoutMs: 300_000 })
      if (r.code !== 0) throw new Error(`copying the clean build ${dir}: exit ${r.code}\n${r.stderr.slice(-4000)}`)
    })
    return await use(copy)
  } finally {
    await rm(copy, { recursive: true, force: true })
  }
}

export interface CleanBuildDeb {
  /** The .deb, in the cache: to be read, never written or moved. */
  file: string
  /** ms this call spent building it; 0 when it was built already (by this run's other tests or an earlier run). */
  buildMs: number
}

/**
 * The .deb `npm run package` (packaging/build-deb.mjs, no --repo-url) makes of the shared clean
 * build, built once per clean build and kept beside it under the same digest: the tests that
 * install the package (test/package/deb.test.ts, file-managers.test.ts) share one build.
 * Whichever asks first builds it, in a copy of the clean build (the package's build takes
 * minutes: the clean build stays free for the other tests' own builds meanwhile), under a lock
 * of its own that the others wait on for it.
 */
export async function cleanBuildDeb(): Promise<CleanBuildDeb> {
  const kept = path.join(CACHE, `${(await checkoutDigest()).slice(0, 16)}${DEB_SUFFIX}`)
  await mkdir(CACHE, { recursive: true })
  const unlock = await lock(kept)
  try {
    const found = (await readdir(kept).catch(() => [] as string[])).find((name) => name.endsWith('.deb'))
    if (found) return { file: path.join(kept, found), buildMs: 0 }
    const started = Date.now()
    // Built into a folder of its own and renamed: a run killed halfway leaves no package that looks complete.
    const partial = `${kept}.partial-${process.pid}`
    await rm(partial, { recursive: true, force: true })
    try {
      const built = await withCleanBuildCopy(async (copy) => collectGroup(spawn(process.execPath, ['packaging/build-deb.mjs', '--out', partial], {
        cwd: copy, detached: true, stdio: ['ignore', 'pipe', 'pipe'],
        // The copy has no .git to date the package's files by.
        env: { ...process.env, SOURCE_DATE_EPOCH: await lastCommitEpoch() },
      }), LOCK_WAIT_MS, undefined, 'build-deb.mjs'))
      const file = built.stdout.trim().split('\n').pop() ?? ''
      if (built.code !== 0 || path.dirname(file) !== partial) {
        throw new Error(`npm run package in a copy of the clean build: exit ${built.code}\nstdout: ${built.stdout.slice(-2000)}\nstderr: ${built.stderr.slice(-4000)}`)
      }
      await rm(kept, { recursive: true, force: true })
      await rename(partial, kept)
      return { file: path.join(kept, path.basename(file)), buildMs: Date.now() - started }
    } finally {
      await rm(partial, { recursive: true, force: true })
    }
  } finally {
    await unlock()
  }
}
