// `transferfs download <transfer> [-o DIR] [--zip]`: every file of a transfer (or its
// ZIP) into DIR, in ranged chunks with at most 4 in flight, each verified, resumable
// after an interruption without fetching finished chunks again (download-resume.ts).
import type { Command } from 'commander'
import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import PQueue from 'p-queue'
import { allOrFirstFailure } from '../base/all-or-first-failure.js'
import type { TransferClient } from '../api/client.js'
import type { Transfer } from '../api/types.js'
import type { LoadedSettings } from '../config/index.js'
import { disambiguate, safeName, withSuffix } from '../vfs/names.js'
import { CONNECTION_KEYS } from './compose.js'
import { alreadyPresent, downloadChunked, partialOf, PARTIAL_DIR, readState, tidyPartials, type ChunkJob, type FileOutcome } from './download-resume.js'
import { addPasswordFlags, fetchTransfer, resolveTransferRef, transferPassword, type PasswordOptions } from './info.js'
import { commonFlags, ctrlC, withClient, type CommonOptions } from './output/command.js'
import { action } from './output/errors.js'
import { CliError, EXIT, UsageError } from './output/exit-codes.js'
import { formatBytes } from '../base/format-bytes.js'
import { writeJson } from './output/json.js'
import { startProgress } from './output/progress.js'

/** count: ranges in flight at once, and files open at once (the interface's limits). */
export const MAX_PARALLEL_CHUNKS = 4
export const MAX_PARALLEL_FILES = 4

interface DownloadOptions extends CommonOptions, PasswordOptions {
  output?: string
  zip?: boolean
  force?: boolean
}

/**
 * Where each file of the transfer goes below `dir`: every path component made safe
 * (no "..", no "/", no control characters), so nothing lands outside `dir`; two files
 * that would share a name get " (2)", " (3)", ...
 */
export function outputPaths(dir: string, names: readonly string[]): string[] {
  const placed = names.map((raw) => {
    const parts = raw.split('/').filter((p) => p !== '' && p !== '.').map((p) => safeName(p))
    if (parts.length === 0) parts.push(safeName(''))
    // The folder where unfinished files wait is not the transfer's to use.
    if (parts[0] === PARTIAL_DIR) parts[0] = withSuffix(PARTIAL_DIR, 2)
    const last = parts.pop()!
    return { folder: path.join(...parts), last }
  })
  // Names alike within one folder are numbered as the mount numbers them, in one pass per
  // folder: a sender's thousands of look-alike names cost no more than as many distinct ones.
  const byFolder = new Map<string, number[]>()
  placed.forEach((p, i) => {
    const indices = byFolder.get(p.folder)
    if (indices) indices.push(i)
    else byFolder.set(p.folder, [i])
  })
  const leaves: string[] = new Array<string>(names.length)
  for (const indices of byFolder.values()) {
    const unique = disambiguate(indices.map((i) => placed[i]!.last))
    indices.forEach((i, k) => (leaves[i] = unique[k]!))
  }
  return placed.map((p, i) => {
    const full = path.join(dir, p.folder, leaves[i]!)
    if (path.relative(dir, full).startsWith('..')) throw new Error(`unsafe name ${JSON.stringify(names[i])}`)
    return full
  })
}

function checkDownloadable(t: Transfer): void {
  if (t.isexpired) throw new CliError(`transfer ${t.id} has expired; its files can no longer be downloaded`, EXIT.notFound)
  if (t.status !== 'STATUS_COMPLETE') {
    throw new CliError(`transfer ${t.id} is ${t.status === 'STATUS_STARTED' ? 'still being uploaded' : t.status.replace('STATUS_', '').toLowerCase()}; nothing to download`, EXIT.notFound)
  }
}

async function plan(client: TransferClient, loaded: LoadedSettings, t: Transfer, dir: string, zip: boolean): Promise<ChunkJob[]> {
  const chunkSize = loaded.settings.chunkSize
  if (chunkSize <= 0) throw new UsageError('--chunk-size must be above 0')
  if (zip) {
    if (!t.compressedfileurl) throw new CliError('this transfer offers no ZIP', EXIT.notFound)
    // The ZIP's size is in no listing: the file server tells it.
    const size = await client.download.size(t.compressedfileurl)
    return [{
      transferId: t.id, name: '(zip)', size, md5: null, chunkSize, target: path.join(dir, `${safeName(t.id)}.zip`),
      partial: partialOf(dir, path.join(dir, `${safeName(t.id)}.zip`)), url: t.compressedfileurl, rangeHashName: null,
    }]
  }
  const files = t.files ?? []
  const targets = outputPaths(dir, files.map((f) => f.filename ?? f.fileid ?? ''))
  return files.map((f, i) => ({
    transferId: t.id, name: f.filename ?? f.fileid ?? '(unnamed)', size: f.filesize ?? 0, md5: f.md5 ?? null, chunkSize,
    target: targets[i]!, partial: partialOf(dir, targets[i]!), url: f.downloadurl, rangeHashName: f.filename,
  }))
}

interface FileReport {
  name: string
  path: string
  size: number
  md5: string | null
  outcome: FileOutcome
  fetchedChunks: number
}

async function run(client: TransferClient, loaded: LoadedSettings, arg: string, opts: DownloadOptions): Promise<void> {
  const ref = await resolveTransferRef(arg)
  const password = await transferPassword(opts)
  const t = await fetchTransfer(client, ref, password)
  checkDownloadable(t)
  const dir = path.resolve(opts.output ?? '.')
  const jobs = await plan(client, loaded, t, dir, opts.zip ?? false)
  // Every conflict is found before the first byte is fetched.
  const todo: ChunkJob[] = []
  const reports: FileReport[] = []
  for (const job of jobs) {
    const resumable = (await readState(job)) !== null
    const present = resumable ? 'absent' : await alreadyPresent(job.target, job.size, job.md5)
    if (present === 'same') {
      reports.push({ name: job.name, path: job.target, size: job.size, md5: job.md5, outcome: 'present', fetchedChunks: 0 })
      continue
    }
    if (present === 'different' && !opts.force) {
      throw new CliError(`${job.target} exists already and is not this transfer's ${job.name === '(zip)' ? 'ZIP' : 'file'}`, EXIT.error,
        'remove it, choose another folder with -o, or replace it with --force')
    }
    todo.push(job)
  }
  if (opts.zip && !opts.json) {
    process.stderr.write('note: the ZIP cannot be verified (the service gives no hash for it); its chunks are only checked for length\n')
  }
  const total = todo.reduce((s, j) => s + j.size, 0)
  const progress = startProgress({ title: 'download', total, quiet: opts.json })
  let done = 0
  const interrupt = ctrlC()
  const chunks = new PQueue({ concurrency: MAX_PARALLEL_CHUNKS })
  const filesQueue = new PQueue({ concurrency: MAX_PARALLEL_FILES })
  try {
    // The first failure (or Ctrl-C) stops the other files; it is what is reported.
    await allOrFirstFailure(filesQueue, todo.map((job) => async (signal: AbortSignal) => {
      await mkdir(path.dirname(job.target), { recursive: true })
      const r = await downloadChunked(job, {
        client, chunks, signal,
        onBytes: (n) => {
          done += n
          progress.update(done, path.basename(job.target))
        },
      })
      reports.push({ name: job.name, path: job.target, size: job.size, md5: job.md5, ...r })
    }), interrupt.signal)
  } catch (err) {
    progress.stop()
    if (!opts.json) process.stderr.write('the chunks verified so far are kept: run the same command again to resume\n')
    throw err
  } finally {
    interrupt.dispose()
  }
  await tidyPartials(dir)
  const order = new Map(jobs.map((j, i) => [j.target, i]))
  reports.sort((a, b) => order.get(a.path)! - order.get(b.path)!)
  const bytes = reports.filter((r) => r.outcome !== 'present').reduce((s, r) => s + r.size, 0)
  const verified = !opts.zip
  if (opts.json) {
    writeJson({ transferid: t.id, directory: dir, zip: opts.zip ?? false, verified, files: reports })
    return
  }
  const fetchedFiles = reports.filter((r) => r.outcome !== 'present').length
  const skipped = reports.length - fetchedFiles
  progress.stop(
    `${opts.zip ? 'downloaded the ZIP' : `downloaded ${fetchedFiles} file${fetchedFiles === 1 ? '' : 's'}`} (${formatBytes(bytes)}) to ${dir}` +
      (skipped ? `; ${skipped} already there with the same MD5` : '') +
      (verified ? '; every chunk verified by its range hash and every file by its MD5' : '; not verified (no hash exists for a ZIP)'),
  )
  for (const r of reports) process.stdout.write(`${r.path}\n`)
}

export function register(program: Command): void {
  const cmd = program
    .command('download')
    .description('Download every file of a transfer (or its ZIP), verified, resumable after an interruption')
    .argument('<transfer>', 'a transfer id, a recipient\'s trackid, or a transfer\'s folder in a mount')
    .option('-o, --output <dir>', 'folder to put the files in (created if missing)', '.')
    .option('--zip', 'download the whole transfer as one ZIP archive (cannot be verified: the service gives no hash for it)')
    .option('--force', 'replace files that exist already with other content')
  addPasswordFlags(cmd)
  commonFlags(cmd, {
    keys: [...CONNECTION_KEYS, 'chunkSize'],
    examples: [
      'transferfs download 7f3a9c2e1b -o ~/Downloads/photos',
      'transferfs download 7f3a9c2e1b --zip -o /tmp',
      'transferfs download 7f3a9c2e1b            # after Ctrl-C: the same command resumes',
      'echo "$PASSWORD" | transferfs download 7f3a9c2e1b --password-stdin',
      'transferfs download 7f3a9c2e1b --json | jq -r \'.files[].path\'',
    ],
  }).action(action(async (arg: string, opts: DownloadOptions) => {
    await withClient(opts, false, ({ client, loaded }) => run(client, loaded, arg, opts))
  }))
}
