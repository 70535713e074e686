// The file-server listener ({upload_url}): uploads, downloads, ZIP, GetRangeHash, thumbnails, download pages.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { errorResult, faultResult, writeResult } from './api.js'
import type { ServiceContext } from './context.js'
import { downloadFile, downloadPage, downloadZip, rangeHash } from './download.js'
import { errorEnvelope } from './envelope.js'
import type { RouteName } from './faults.js'
import { serveThumbnail } from './thumbnails.js'
import { saveFile } from './upload.js'

interface FileRoute {
  name: RouteName | 'page'
  params: string[]
}

function route(method: string, path: string): FileRoute | null {
  let m: RegExpExecArray | null
  const read = method === 'GET' || method === 'HEAD'
  if (method === 'POST' && path === '/savefile.ashx') return { name: 'savefile', params: [] }
  if (read && (m = /^\/download\/([^/]+)\/([^/]+)$/.exec(path))) return { name: 'download', params: [m[1]!, m[2]!] }
  if (read && (m = /^\/zip\/([^/]+)$/.exec(path))) return { name: 'zip', params: [m[1]!] }
  if (method === 'GET' && (m = /^\/preview\/([^/]+)\/([^/]+)$/.exec(path))) return { name: 'preview', params: [m[1]!, m[2]!] }
  if (method === 'GET' && path === '/GetRangeHash.ashx') return { name: 'rangehash', params: [] }
  if (method === 'GET' && (m = /^\/d\/([^/]+)$/.exec(path))) return { name: 'page', params: [m[1]!] }
  return null
}

export function fileServerHandler(ctx: ServiceContext) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', ctx.fileOrigin)
    const { latencyMs: latency, closeConnections } = ctx.faults.throttle
    if (closeConnections) res.shouldKeepAlive = false
    if (latency) await sleep(latency)
    const found = route(req.method ?? 'GET', url.pathname)
    if (!found) {
      req.resume()
      return writeResult(res, { http: 404, body: errorEnvelope('NotFound', `nothing at ${req.method} ${url.pathname}`) }, null)
    }
    if (found.name === 'page') return downloadPage(ctx, res, url, decodeURIComponent(found.params[0]!))
    const name = found.name
    ctx.faults.count(name, res)
    let fault = ctx.faults.take(name)
    if (fault?.kind === 'stall') {
      ctx.log(`${name}: stalled by fault`)
      if (fault.ms === undefined) return void req.resume()
      await sleep(fault.ms)
      fault = null
    }
    if (fault?.kind === 'status') {
      req.resume()
      return writeResult(res, faultResult(fault), null)
    }
    try {
      const [a, b] = found.params.map((p) => decodeURIComponent(p))
      switch (name) {
        case 'savefile': {
          const outcome = await saveFile(ctx, req, url, fault)
          if (outcome === 'ok') {
            res.writeHead(200, { 'content-length': '0' })
            res.end()
          }
          break
        }
        case 'download': await downloadFile(ctx, req, res, url, a!, b!, fault); break
        case 'zip': await downloadZip(ctx, req, res, url, a!, fault); break
        case 'rangehash': await rangeHash(ctx, req, res, url, fault); break
        case 'preview': await serveThumbnail(ctx, req, res, url, a!, b!, fault); break
      }
    } catch (err) {
      req.resume()
      if (res.headersSent) {
        ctx.log(`${name}: failed after the headers were sent: ${err instanceof Error ? err.message : String(err)}`)
        res.destroy()
        return
      }
      const result = errorResult(err, ctx)
      ctx.log(`${req.method} ${url.pathname} ${result.http}`)
      await writeResult(res, result, null)
    }
  }
}
