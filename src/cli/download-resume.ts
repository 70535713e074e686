// One file (or the ZIP) to disk in ranged chunks that survive an interruption: until it is
// whole, the bytes wait in the hidden folder ".transferfs-partial/" of the download's folder,
// under "files/" at the file's own path ("files/photos/big.bin"), and a small sidecar at the
// same path under "state/" lists the chunks that are written, synced and verified. A transfer's
// own names never land in that folder (download.ts renames a transfer's top-level
// ".transferfs-partial"), and the two trees mirror the download's own, so no file of the
// transfer, whatever its name ("big.bin.part" beside "big.bin"), can be taken for another's
// partial bytes or overwrite them. The sidecar is replaced atomically (temporary file + rename)
// after each chunk, so a run killed at any moment leaves a state that is true; the next
// run fetches only the chunks it does not list. Each chunk is checked against the
// service's range hash when one exists (files), fetched again on a mismatch, and the
// whole file against its MD5 at the end. The ZIP has no hash: its chunks are only
// length-checked.
import { mkdir, open, readdir, rename, rm, rmdir, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type PQueue from 'p-queue'
import type { TransferClient } from '../api/client.js'
import { allOrFirstFailure } from '../base/all-or-first-failure.js'
import { spanCount, spansOf } from '../base/chunk-grid.js'
import { writeParts } from '../api/file-io.js'
import { IntegrityError } from '../api/errors.js'
import { durableWriteTarget, writeFileDurably } from '../base/durable-file.js'
import { md5OfFile } from '../base/file-hash-pool.js'
import { readStateFile } from '../base/state-file.js'

/** The hidden folder, in the download's folder, of the files not yet whole. */
export const PARTIAL_DIR = '.transferfs-partial'
const STATE_VERSION = 1

/** What a chunk list belongs to: a sidecar of anything else is not resumed. */
export interface DownloadIdentity {
  transferId: string
  /** The file's name in the transfer, or "(zip)". */
  name: string
  size: number
  md5: string | null
  chunkSize: number
}

export interface SidecarState extends DownloadIdentity {
  version: number
  /** Indices of chunks written, synced and verified. */
  verified: number[]
}

export interface ChunkJob extends DownloadIdentity {
  /** Where the finished file goes. */
  target: string
  /** Where it waits until whole: its partial bytes, and the sidecar of its verified chunks (partialOf). */
  partial: PartialPaths
  url: string
  /** Check each chunk with the range hash (the service names the file by its `filename`). */
  rangeHashName: string | null
}

export interface PartialPaths {
  /** The download's folder (-o). */
  dir: string
  bytes: string
  state: string
}

/** Where the file that goes to `target` (below `dir`) waits until whole. */
export function partialOf(dir: string, target: string): PartialPaths {
  const rel = path.relative(dir, target)
  return { dir, bytes: path.join(dir, PARTIAL_DIR, 'files', rel), state: path.join(dir, PARTIAL_DIR, 'state', rel) }
}

function sameIdentity(a: DownloadIdentity, b: DownloadIdentity): boolean {
  return a.transferId === b.transferId && a.name === b.name && a.size === b.size && a.md5 === b.md5 && a.chunkSize === b.chunkSize
}

/** The sidecar's state, when it belongs to `job` and its partial file is there; else null (start over). */
export async function readState(job: ChunkJob): Promise<SidecarState | null> {
  let state: SidecarState
  try {
    // A damaged sidecar costs the chunks it listed, nothing more: the download starts over.
    state = (await readStateFile(job.partial.state)) as SidecarState
  } catch {
    return null
  }
  if (typeof state !== 'object' || state === null || state.version !== STATE_VERSION || !Array.isArray(state.verified) || !sameIdentity(state, job)) return null
  try {
    if ((await stat(job.partial.bytes)).size !== job.size) return null
  } catch {
    return null
  }
  const count = spanCount(job.size, job.chunkSize)
  return { ...state, verified: [...new Set(state.verified)].filter((i) => Number.isInteger(i) && i >= 0 && i < count) }
}

export type FileOutcome = 'downloaded' | 'resumed' | 'present'

export interface RunChunksOptions {
  client: TransferClient
  /** Shared by every file of one command: at most this many ranges in flight. */
  chunks: PQueue
  signal: AbortSignal
  /** Bytes that became verified (or were already, at the start). */
  onBytes(n: number): void
}

/**
 * Downloads `job` to its target; resolves once the target holds the whole, verified file
 * and the sidecar is gone. On failure the partial file and its state stay for a resume.
 */
export async function downloadChunked(job: ChunkJob, o: RunChunksOptions): Promise<{ outcome: FileOutcome; fetchedChunks: number }> {
  const part = job.partial.bytes
  const statePath = job.partial.state
  if (job.size === 0) {
    await writeFile(job.target, Buffer.alloc(0))
    await finish(job, job.target)
    return { outcome: 'downloaded', fetchedChunks: 0 }
  }
  const previous = await readState(job)
  await mkdir(path.dirname(part), { recursive: true })
  await mkdir(path.dirname(statePath), { recursive: true })
  const state: SidecarState = { version: STATE_VERSION, ...identityOf(job), verified: previous?.verified ?? [] }
  const handle = await open(part, previous ? 'r+' : 'w', 0o644)
  const hashed = job.rangeHashName === null ? null : { transferId: job.transferId, fileName: job.rangeHashName }
  let fetched = 0
  let chunkTotal = 0
  try {
    if (!previous) {
      await handle.truncate(job.size)
      await saveState(statePath, state)
    }
    const chunks = spansOf(job.size, job.chunkSize)
    chunkTotal = chunks.length
    const done = new Set(state.verified)
    for (const i of done) o.onBytes(chunks[i]!.end - chunks[i]!.start)
    // State writes one at a time, each a whole replacement: the last one always wins.
    let saving: Promise<void> = Promise.resolve()
    const pending = chunks.map((_, i) => i).filter((i) => !done.has(i))
    await allOrFirstFailure(o.chunks, pending.map((index) => async (signal: AbortSignal) => {
      const { start, end } = chunks[index]!
      // A chunk with a range hash is written first and hashed back from the file on a
      // worker thread, which keeps MD5 (~2 CPU-s per GiB) off the thread that feeds the
      // sockets. A mismatch rewrites the range; the state lists only chunks that matched.
      const parts = await o.client.download.fetchVerifiedRange(job.url, start, end, hashed, {
        signal,
        digest: hashed
          ? async (got) => {
            await writeParts(handle, got, start)
            return md5OfFile(part, start, end - start)
          }
          : undefined,
      })
      if (!hashed) await writeParts(handle, parts, start)
      // On disk before the state says so: a state never lists bytes a crash could lose.
      await handle.datasync()
      fetched++
      done.add(index)
      state.verified = [...done].sort((a, b) => a - b)
      const snapshot = { ...state }
      saving = saving.then(() => saveState(statePath, snapshot))
      await saving
      o.onBytes(end - start)
    }), o.signal)
    await handle.sync()
  } finally {
    await handle.close()
  }
  // Every chunk of this run checked against its range hash covers the file: hashing it
  // again whole would double the work. Chunks an earlier run left are checked as a whole.
  if (!(hashed && fetched === chunkTotal)) await finish(job, part)
  await rename(part, job.target)
  await rm(statePath, { force: true })
  return { outcome: previous ? 'resumed' : 'downloaded', fetchedChunks: fetched }
}

function identityOf(job: DownloadIdentity): DownloadIdentity {
  return { transferId: job.transferId, name: job.name, size: job.size, md5: job.md5, chunkSize: job.chunkSize }
}

/** The whole file against its MD5; a mismatch starts the next run from scratch. */
async function finish(job: ChunkJob, file: string): Promise<void> {
  if (!job.md5) return
  const actual = await md5OfFile(file)
  if (actual !== job.md5.toLowerCase()) {
    await rm(job.partial.state, { force: true })
    throw new IntegrityError(`${job.name} does not match its MD5 after download; run the command again to fetch it anew`, job.md5, actual)
  }
}

/**
 * Removes the empty folders of `dir`'s staging folder, and the folder itself once empty: a
 * download that finished leaves none of it behind, and one that did not keeps every partial
 * file. Run once all files are done, since the files of one download finish in any order.
 * A state's temporary file whose state is gone is removed on the way: a run killed while it
 * replaced the state left it, and the file it was for is whole now.
 */
export async function tidyPartials(dir: string): Promise<void> {
  const removeEmpty = async (folder: string): Promise<void> => {
    let entries
    try {
      entries = await readdir(folder, { withFileTypes: true })
    } catch {
      return
    }
    const names = new Set(entries.map((e) => e.name))
    for (const e of entries) {
      if (e.isDirectory()) await removeEmpty(path.join(folder, e.name))
      else {
        const of = durableWriteTarget(e.name)
        if (of !== null && !names.has(of)) await rm(path.join(folder, e.name), { force: true })
      }
    }
    await rmdir(folder).catch(() => {})
  }
  await removeEmpty(path.join(dir, PARTIAL_DIR))
}

function saveState(file: string, state: SidecarState): Promise<void> {
  return writeFileDurably(file, JSON.stringify(state))
}

/** True when `target` already holds the file (same size and, when known, same MD5). */
export async function alreadyPresent(target: string, size: number, md5: string | null): Promise<'same' | 'different' | 'absent'> {
  let st
  try {
    st = await stat(target)
  } catch {
    return 'absent'
  }
  if (!st.isFile() || st.size !== size || !md5) return 'different'
  return (await md5OfFile(target)) === md5.toLowerCase() ? 'same' : 'different'
}
