// The checkout as a fresh clone has it, for tests of what a clean clone builds: every tracked
// file and every untracked one that is not ignored (work not committed yet counts), without
// node_modules, builds, addons or .git. Files deleted but not yet committed are left out.
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { copyFile, mkdir } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

function git(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('git', ['-C', REPO, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 }, (err, stdout, stderr) =>
      err ? reject(new Error(`git ${args.join(' ')}: ${stderr || err.message}`)) : resolve(stdout))
  })
}

/** Copies the checkout's files into dest (created); returns dest. */
export async function copyCleanCheckout(dest: string): Promise<string> {
  const files = (await git(['ls-files', '-z', '--cached', '--others', '--exclude-standard'])).split('\0').filter(Boolean)
  for (const file of files) {
    if (!existsSync(path.join(REPO, file))) continue
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
