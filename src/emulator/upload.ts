// POST {upload_url}/savefile.ashx: whole files and chunks, streamed to disk, never held in memory.
// Chunks are written at their place (index * chunksize) in one file per upload; the file joins the
// transfer when every index has arrived, after one pass that computes its MD5 and CRC-32.
import { createHash } from 'node:crypto'
import { createReadStream, createWriteStream } from 'node:fs'
import { open, rename, rm, truncate } from 'node:fs/promises'
import type { IncomingMessage } from 'node:http'
import { PassThrough } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { createGunzip } from 'node:zlib'
import type { ServiceContext } from './context.js'
import { ApiError, invalid, Query } from './envelope.js'
import type { FaultSpec } from './faults.js'
import { SETTINGS } from './settings.js'
import { FileHasher, sink, type PendingUpload, type StoredTransfer } from './store.js'

interface ChunkParams {
  chunksize: number
  chunks: number
  chunk: number
}

function chunkParams(q: Query): ChunkParams | null {
  const given = ['chunksize', 'chunks', 'chunk'].filter((name) => q.string(name) !== undefined)
  if (given.length === 0) return null
  if (given.length < 3) {
    const missing = ['chunksize', 'chunks', 'chunk'].find((name) => !given.includes(name))!
    throw invalid(missing, 'chunksize, chunks and chunk go together', 'InputParameterMissing')
  }
  const chunksize = q.integer('chunksize', 1)!
  const chunks = q.integer('chunks', 1)!
  const chunk = q.integer('chunk', 0)!
  if (chunk >= chunks) throw invalid('chunk', `chunk must be below chunks (${chunks})`)
  return { chunksize, chunks, chunk }
}

function md5Param(q: Query): Buffer | null {
  const value = q.string('md5')
  if (value === undefined) return null
  const bytes = Buffer.from(value, 'base64')
  if (bytes.length !== 16 || !/^[A-Za-z0-9+/]+={0,2}$/.test(value)) throw invalid('md5', 'md5 must be the Base64 of 16 bytes')
  return bytes
}

/** Counts the bytes as sent, hashes them, enforces the request size limit, and resets the connection for a fault. */
function requestTap(hash: ReturnType<typeof createHash>, resetAt: number, onReset: () => void) {
  return async function* (source: AsyncIterable<Buffer>) {
    let seen = 0
    for await (const chunk of source) {
      if (seen + chunk.length >= resetAt) {
        onReset()
        throw new Error('connection reset by fault')
      }
      seen += chunk.length
      if (seen > SETTINGS.maxUploadBodyBytes) throw invalid('body', `upload bodies above ${SETTINGS.maxUploadBodyBytes} bytes are refused; send chunks`)
      hash.update(chunk)
      yield chunk
    }
  }
}

/** Counts the stored (uncompressed) bytes and refuses more than `max`. */
function storedTap(max: number, counter: { bytes: number }, hasher: FileHasher | null) {
  return async function* (source: AsyncIterable<Buffer>) {
    for await (const chunk of source) {
      counter.bytes += chunk.length
      if (counter.bytes > max) throw invalid('chunksize', `this chunk holds more than chunksize (${max}) bytes`)
      hasher?.update(chunk)
      yield chunk
    }
  }
}

function transferFor(ctx: ServiceContext, q: Query): StoredTransfer {
  const transferid = q.required('transferid')
  const transferkey = q.required('transferkey')
  const transfer = ctx.store.transfers.get(transferid)
  if (!transfer || transfer.key !== transferkey) throw new ApiError('AccessDenied', 'unknown transfer or wrong transfer key')
  if (transfer.status === 'STATUS_CANCELLED' || transfer.status === 'STATUS_DELETED') {
    throw new ApiError('InvalidTransferState', `the transfer is ${transfer.status}`)
  }
  if (ctx.store.isExpired(transfer)) throw new ApiError('TransferExpired', 'the transfer has expired')
  return transfer
}

async function createEmpty(path: string): Promise<void> {
  const handle = await open(path, 'w')
  await handle.close()
}

async function hashFile(path: string): Promise<{ md5: string; crc32: number; size: number }> {
  const hasher = new FileHasher()
  await pipeline(createReadStream(path, { highWaterMark: 1024 * 1024 }), hasher.tap(), sink())
  return hasher.result()
}

/** Handles one savefile request; resolves when the answer is decided (null: the connection was reset). */
export async function saveFile(ctx: ServiceContext, req: IncomingMessage, url: URL, fault: FaultSpec | null): Promise<'ok' | 'reset'> {
  const q = new Query(url.searchParams)
  const transfer = transferFor(ctx, q)
  const name = q.required('thefilename')
  const params = chunkParams(q)
  const expectedMd5 = md5Param(q)
  const compressed = q.boolean('compressed') ?? false
  q.integer('retry', 0)
  const declared = Number(req.headers['content-length'] ?? NaN)
  if (declared > SETTINGS.maxUploadBodyBytes) {
    throw invalid('body', `upload bodies above ${SETTINGS.maxUploadBodyBytes} bytes are refused; send chunks`)
  }

  let pending: PendingUpload
  if (params) {
    const existing = transfer.uploads.get(name)
    if (existing?.assembling) throw new ApiError('ServiceInterruption', 'this file is being assembled; retry', null, 406)
    if (existing && existing.chunks === params.chunks && existing.chunksize === params.chunksize) {
      pending = existing
    } else {
      // Different chunk geometry: the client started this file over.
      // Registered before any await, so that chunks arriving in parallel share one upload.
      const path = ctx.store.newUploadPath(transfer)
      pending = {
        name, chunks: params.chunks, chunksize: params.chunksize, received: new Set(), lastChunkSize: null, path,
        assembling: false, ready: (existing ? rm(existing.path, { force: true }) : Promise.resolve()).then(() => createEmpty(path)),
      }
      transfer.uploads.set(name, pending)
    }
    await pending.ready
  } else {
    pending = { name, chunks: 1, chunksize: SETTINGS.maxUploadBodyBytes, received: new Set(), lastChunkSize: null, path: ctx.store.newUploadPath(transfer), assembling: false, ready: Promise.resolve() }
  }
  const index = params?.chunk ?? 0
  const isLast = index === pending.chunks - 1
  const bodyHash = createHash('md5')
  const stored = { bytes: 0 }
  // A whole-file upload is hashed as it streams; chunked files are hashed once assembled.
  const liveHasher = params ? null : new FileHasher()
  let wasReset = false
  const resetAt = fault?.kind === 'reset' ? (fault.afterBytes ?? Math.floor((Number.isFinite(declared) ? declared : 0) / 2)) : Infinity
  const onReset = () => {
    wasReset = true
    req.socket.destroy()
  }
  const body = new PassThrough()
  req.pipe(body)
  try {
    const stages: unknown[] = [
      body,
      requestTap(bodyHash, resetAt, onReset),
      ...(compressed ? [createGunzip()] : []),
      storedTap(pending.chunksize, stored, liveHasher),
      createWriteStream(pending.path, params ? { flags: 'r+', start: index * pending.chunksize } : { flags: 'w' }),
    ]
    await (pipeline as unknown as (...streams: unknown[]) => Promise<void>)(...stages)
  } catch (err) {
    req.unpipe(body)
    req.resume()
    if (!params) await rm(pending.path, { force: true })
    if (wasReset) return 'reset'
    if (err instanceof ApiError) throw err
    if (compressed && err instanceof Error && 'code' in err && String(err.code).startsWith('Z_')) throw invalid('compressed', 'the body is not a valid gzip stream')
    throw err
  }
  const discard = async () => { if (!params) await rm(pending.path, { force: true }) }
  if (expectedMd5 && !bodyHash.digest().equals(expectedMd5)) {
    await discard()
    throw new ApiError('InvalidParameter', 'md5 of the body does not match; send the chunk again', [{ propertyName: 'md5', errorCode: 'InvalidParameter', errorMessage: 'md5 mismatch' }], 449)
  }
  if (params) {
    const zeroByteFile = pending.chunks === 1 && stored.bytes === 0
    if (!isLast && stored.bytes !== pending.chunksize) throw invalid('chunk', `chunk ${index} holds ${stored.bytes} bytes; every chunk but the last holds chunksize (${pending.chunksize})`)
    if (isLast && stored.bytes < 1 && !zeroByteFile) throw invalid('chunk', 'the last chunk must hold at least one byte')
    pending.received.add(index)
    if (isLast) pending.lastChunkSize = stored.bytes
    if (pending.received.size === pending.chunks && transfer.uploads.get(name) === pending) await assemble(ctx, transfer, pending)
  } else {
    const { fileid, path } = ctx.store.newFilePath(transfer)
    await rename(pending.path, path)
    const result = liveHasher!.result()
    await ctx.store.putFile(transfer, { fileid, name, path, mtime: ctx.clock.now(), downloads: [], ...result })
    ctx.log(`savefile ${transfer.id}: ${name} (${result.size} bytes)`)
  }
  return 'ok'
}

async function assemble(ctx: ServiceContext, transfer: StoredTransfer, pending: PendingUpload): Promise<void> {
  pending.assembling = true
  try {
    const size = (pending.chunks - 1) * pending.chunksize + (pending.lastChunkSize ?? 0)
    await truncate(pending.path, size)
    const result = await hashFile(pending.path)
    const { fileid, path } = ctx.store.newFilePath(transfer)
    await rename(pending.path, path)
    await ctx.store.putFile(transfer, { fileid, name: pending.name, path, mtime: ctx.clock.now(), downloads: [], ...result })
    transfer.uploads.delete(pending.name)
    ctx.log(`savefile ${transfer.id}: ${pending.name} assembled (${result.size} bytes in ${pending.chunks} chunks)`)
  } finally {
    pending.assembling = false
  }
}
