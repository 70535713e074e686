// The checkout as a fresh clone has it, for tests of what a clean clone builds: every tracked
// file and every untracked one that is not ignored (work not committed yet counts), without
// node_modules, builds, addons or .git. Files deleted but not yet committed are left out.
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, statSync } from 'node:fs'
import { copyFile, mkdir, readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

function git(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('git', ['-C', REPO, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 }, (err, stdout, stderr) =>
      err ? reject(new Error(`git ${args.join(' ')}: ${stderr || err.message}`)) : resolve(stdout))
  })
}

/** The files a clean copy holds, relative to the checkout, sorted. */
export async function checkoutFiles(): Promise<string[]> {
  const files = (await git(['ls-files', '-z', '--cached', '--others', '--exclude-standard'])).split('\0').filter(Boolean)
  // Not a deleted file, nor an untracked link to a folder (a work tree's node_modules may be one).
  return files.filter((file) => existsSync(path.join(REPO, file)) && !statSync(path.join(REPO, file)).isDirectory()).sort()
}

/** A digest of what a clean copy would hold (names, modes and bytes): equal digests, equal copies. */
export async function checkoutDigest(): Promise<string> {
  const hash = createHash('sha256')
  for (const file of await checkoutFiles()) {
    const full = path.join(REPO, file)
    hash.update(`${file}\0${(await stat(full)).mode}\0`)
    hash.update(await readFile(full))
  }
  return hash.digest('hex')
}

/** Copies the checkout's files into dest (created); returns dest. */
export async function copyCleanCheckout(dest: string): Promise<string> {
  for (const file of await checkoutFiles()) {
    await mkdir(path.dirname(path.join(dest, file)), { recursive: true })
    // copyFile keeps the mode, so scripts stay executable.
    await copyFile(path.join(REPO, file), path.join(dest, file))
  }
  return dest
}

/**
 * The time of the checkout's last commit (seconds), for SOURCE_DATE_EPOCH: a copy has no
 * .git, so a build in it would otherwise date its files by when the copy was made.
 */
export async function lastCommitEpoch(): Promise<string> {
  return (await git(['log', '-1', '--format=%ct'])).trim()
}
