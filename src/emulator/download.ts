// File-server reads: single files and the whole-transfer ZIP (with one Range each), GetRangeHash,
// and the download page. Tracking records are added when a response delivers the last byte.
import { setTimeout as sleep } from 'node:timers/promises'
import { createReadStream } from 'node:fs'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Download, DownloadType } from '../api/types.js'
import { downloadToken, type ServiceContext } from './context.js'
import { deliver, deliverBuffer } from './delivery.js'
import { ApiError, invalid, Query } from './envelope.js'
import type { FaultSpec } from './faults.js'
import type { Recipient, StoredFile, StoredTransfer } from './store.js'
import { SETTINGS } from './settings.js'
import { zipLayout } from './zip.js'

export type ByteRange = { start: number; end: number }

/** `bytes=a-b` with both ends inside the file; null without a header; 'bad' for anything else. */
export function parseRange(header: string | undefined, size: number): ByteRange | null | 'bad' {
  if (header === undefined) return null
  const m = /^\s*bytes\s*=\s*(\d+)\s*-\s*(\d+)\s*$/.exec(header)
  if (!m) return 'bad'
  const start = Number(m[1])
  const end = Number(m[2])
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start > end || end >= size) return 'bad'
  return { start, end }
}

interface Access {
  transfer: StoredTransfer
  recipient: Recipient | null
}

/** The checks every download shares: transfer state, expiry, signed token of protected transfers, trackid, optional API key. */
export function access(ctx: ServiceContext, req: IncomingMessage, q: Query, transferid: string): Access {
  const transfer = ctx.store.transfers.get(transferid)
  if (!transfer || transfer.status === 'STATUS_CANCELLED' || transfer.status === 'STATUS_DELETED') {
    throw new ApiError('NotFound', 'no such transfer')
  }
  if (ctx.store.isExpired(transfer)) throw new ApiError('NotFound', 'the transfer has expired')
  const key = req.headers['x-api-key']
  if (key !== undefined && key !== ctx.apiKey) throw new ApiError('InvalidApikey', 'unknown API key')
  if (transfer.password !== null && q.string('token') !== downloadToken(ctx, transfer)) {
    throw new ApiError('AccessDenied', 'this transfer is password protected; use the download URL from its details')
  }
  const trackid = q.string('trackid')
  let recipient: Recipient | null = null
  if (trackid !== undefined) {
    recipient = transfer.recipients.find((r) => r.trackid === trackid) ?? null
    if (!recipient) throw new ApiError('NotFound', 'unknown trackid')
  }
  return { transfer, recipient }
}

function track(ctx: ServiceContext, req: IncomingMessage, a: Access, type: DownloadType, file: StoredFile | null, size: number, startedAt: number): void {
  const seconds = Math.max((Date.now() - startedAt) / 1000, 0.001)
  const record: Download = {
    downloaddate: ctx.clock.now(), ip: req.socket.remoteAddress ?? '', email: a.recipient?.email ?? '',
    location: '', locationurl: '', locationflag: null, kBps: Math.round(size / 1024 / seconds),
    filename: file?.name ?? `${a.transfer.id}.zip`, filesize: size, downloadtype: type,
  }
  if (file) file.downloads.push(record)
  else a.transfer.transferDownloads.push(record)
  const t = a.transfer
  const total = t.transferDownloads.length + t.files.reduce((n, f) => n + f.downloads.length, 0)
  if (t.notify && t.from && total <= 2) {
    ctx.mail.record({
      kind: total === 1 ? 'download-first' : 'download-summary', to: t.from,
      subject: `${total === 1 ? 'Downloaded' : 'Download summary'}: ${t.subject}`,
      link: `${ctx.fileOrigin}/d/${t.id}`, transferid: t.id, at: ctx.clock.now(),
    })
  }
}

function contentDisposition(name: string): string {
  const base = name.split('/').pop() ?? name
  return `attachment; filename="${base.replace(/[^\x20-\x7e]|"/g, '_')}"; filename*=UTF-8''${encodeURIComponent(base)}`
}

async function* fileBytes(path: string, start: number, endInclusive: number): AsyncGenerator<Buffer> {
  if (endInclusive < start) return
  yield* createReadStream(path, { start, end: endInclusive, highWaterMark: SETTINGS.fileReadBytes }) as AsyncIterable<Buffer>
}

/** Sends the requested range of a body of `size` bytes; `onLastByte` runs when the response delivers the body's last byte. */
async function sendRanged(ctx: ServiceContext, req: IncomingMessage, res: ServerResponse, size: number,
  headers: Record<string, string>, fault: FaultSpec | null, body: (start: number, endInclusive: number) => AsyncIterable<Buffer>,
  onLastByte: () => void): Promise<void> {
  const range = parseRange(typeof req.headers.range === 'string' ? req.headers.range : undefined, size)
  if (range === 'bad') {
    res.writeHead(416, { 'content-range': `bytes */${size}`, 'content-length': '0' })
    res.end()
    return
  }
  const start = range?.start ?? 0
  const end = range?.end ?? size - 1
  const length = end - start + 1
  res.writeHead(range ? 206 : 200, {
    ...headers,
    'accept-ranges': 'bytes',
    'content-length': String(length),
    ...(range ? { 'content-range': `bytes ${start}-${end}/${size}` } : {}),
  })
  if (req.method === 'HEAD') {
    res.end()
    return
  }
  await deliver(res, body(start, end), {
    length, fault, link: ctx.faults.link ?? undefined,
    onBytes: (n) => { ctx.faults.counters.bytesServed += n },
    onDelivered: () => { if (end === size - 1) onLastByte() },
  })
}

export async function downloadFile(ctx: ServiceContext, req: IncomingMessage, res: ServerResponse, url: URL,
  transferid: string, fileid: string, fault: FaultSpec | null): Promise<void> {
  const a = access(ctx, req, new Query(url.searchParams), transferid)
  const file = a.transfer.files.find((f) => f.fileid === fileid)
  if (!file) throw new ApiError('NotFound', 'no such file')
  const startedAt = Date.now()
  await sendRanged(ctx, req, res, file.size, {
    'content-type': 'application/octet-stream',
    'content-disposition': contentDisposition(file.name),
    etag: `"${file.md5}"`,
    'last-modified': new Date(file.mtime).toUTCString(),
  }, fault, (start, end) => fileBytes(file.path, start, end), () => track(ctx, req, a, 'SingleFile', file, file.size, startedAt))
}

export async function downloadZip(ctx: ServiceContext, req: IncomingMessage, res: ServerResponse, url: URL,
  transferid: string, fault: FaultSpec | null): Promise<void> {
  const a = access(ctx, req, new Query(url.searchParams), transferid)
  const files = [...a.transfer.files]
  const layout = zipLayout(files.map((f) => ({ name: f.name, size: f.size, crc32: f.crc32, mtime: new Date(f.mtime) })))
  const startedAt = Date.now()
  const body = async function* (start: number, end: number): AsyncGenerator<Buffer> {
    for (const segment of layout.segments(start, end + 1)) {
      if (segment.kind === 'bytes') yield segment.data
      else yield* fileBytes(files[segment.index]!.path, segment.start, segment.end - 1)
    }
  }
  const name = `${(a.transfer.subject || a.transfer.id).replace(/[/\\]/g, '_')}.zip`
  await sendRanged(ctx, req, res, layout.size, {
    'content-type': 'application/zip',
    'content-disposition': contentDisposition(name),
  }, fault, body, () => track(ctx, req, a, 'EntireTransfer', null, layout.size, startedAt))
}

export async function rangeHash(ctx: ServiceContext, req: IncomingMessage, res: ServerResponse, url: URL, fault: FaultSpec | null): Promise<void> {
  const key = req.headers['x-api-key']
  if (key === undefined || key === '') throw new ApiError('MissingApikey', 'the x-api-key header is required')
  if (key !== ctx.apiKey) throw new ApiError('InvalidApikey', 'unknown API key')
  const q = new Query(url.searchParams)
  const transferid = q.required('transferid')
  const name = q.required('thefilename')
  const position = q.integer('position', 0)
  const length = q.integer('length', 0)
  if (position === undefined) throw invalid('position', "'position' is required", 'InputParameterMissing')
  if (length === undefined) throw invalid('length', "'length' is required", 'InputParameterMissing')
  const transfer = ctx.store.transfers.get(transferid)
  if (!transfer || transfer.status === 'STATUS_CANCELLED' || transfer.status === 'STATUS_DELETED') throw new ApiError('NotFound', 'no such transfer')
  const file = transfer.files.find((f) => f.name === name)
  if (!file) throw new ApiError('NotFound', 'no such file in the transfer')
  if (position + length > file.size) throw invalid('length', `the range ends past the file's ${file.size} bytes`)
  const started = Date.now()
  let hex = await ctx.hashes.md5(file.path, position, length)
  ctx.faults.counters.bytesHashed += length
  const slowest = ctx.faults.throttle.hashBytesPerSecond
  if (slowest) await sleep(Math.max(0, (length * 1000) / slowest - (Date.now() - started)))
  if (fault?.kind === 'corrupt') hex = (hex[0] === '0' ? '1' : '0') + hex.slice(1)
  const body = Buffer.from(hex)
  res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'content-length': String(body.length) })
  await deliverBuffer(res, body, fault?.kind === 'reset' ? fault : null)
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

/** The transfer's web page: the files with their download links (the interface's `url`). */
export function downloadPage(ctx: ServiceContext, res: ServerResponse, url: URL, transferid: string): void {
  const q = new Query(url.searchParams)
  const transfer = ctx.store.transfers.get(transferid)
  const live = transfer && transfer.status !== 'STATUS_CANCELLED' && transfer.status !== 'STATUS_DELETED' && !ctx.store.isExpired(transfer)
  const params = new URLSearchParams()
  const trackid = q.string('trackid')
  if (trackid) params.set('trackid', trackid)
  const token = q.string('token')
  if (token) params.set('token', token)
  const suffix = params.size ? `?${params}` : ''
  let body: string
  if (!transfer || !live) body = '<p>This transfer is not available.</p>'
  else if (transfer.password !== null && token !== downloadToken(ctx, transfer)) body = '<p>This transfer is password protected.</p>'
  else {
    body = `<h1>${escapeHtml(transfer.subject || 'Transfer')}</h1><p>${escapeHtml(transfer.message)}</p><ul>` +
      transfer.files.map((f) => `<li><a href="/download/${transfer.id}/${f.fileid}${suffix}">${escapeHtml(f.name)}</a> (${f.size} bytes)</li>`).join('') +
      `</ul><p><a href="/zip/${transfer.id}${suffix}">All files (ZIP)</a></p>`
  }
  const html = Buffer.from(`<!doctype html><meta charset="utf-8"><title>Transfer</title>${body}`)
  res.writeHead(transfer ? 200 : 404, { 'content-type': 'text/html; charset=utf-8', 'content-length': String(html.length) })
  res.end(html)
}
