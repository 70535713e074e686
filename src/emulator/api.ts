// The API listener: {base_url} = <origin>/api, plus the test controls under /_emulator.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import type { ServiceContext } from './context.js'
import { handleControl } from './controls.js'
import { deliverBuffer } from './delivery.js'
import { ApiError, errorEnvelope, Query, responseStatusForHttp } from './envelope.js'
import type { FaultSpec } from './faults.js'
import { authRoutes } from './routes/auth.js'
import type { ApiResult, ApiRoute } from './routes/common.js'
import { detailsRoute } from './routes/details.js'
import { inboxRoute } from './routes/inbox.js'
import { transferRoutes } from './routes/transfers.js'
import { SETTINGS } from './settings.js'

// Order matters: /transfer/inbox before the /transfer/{id} pattern.
const ROUTES: ApiRoute[] = [...authRoutes, ...transferRoutes, inboxRoute, detailsRoute]

export function errorResult(err: unknown, ctx: ServiceContext): ApiResult {
  if (err instanceof ApiError) {
    const headers: Record<string, string> = {}
    if (err.httpStatus === 429) headers['retry-after'] = String(SETTINGS.retryAfterSeconds)
    return { http: err.httpStatus, body: errorEnvelope(err.status, err.message, err.validationerrors), headers }
  }
  ctx.log(`internal error: ${err instanceof Error ? err.stack ?? err.message : String(err)}`)
  return { http: 500, body: errorEnvelope('UnknownError', 'internal error of the local service') }
}

/** The answer a `status` fault gives instead of serving. */
export function faultResult(fault: FaultSpec): ApiResult {
  const http = fault.status ?? 500
  const status = fault.responsestatus ?? responseStatusForHttp(http)
  const headers: Record<string, string> = {}
  if (http === 429) headers['retry-after'] = String(SETTINGS.retryAfterSeconds)
  return { http, body: errorEnvelope(status, `injected fault: HTTP ${http}`), headers }
}

export function checkApiKey(ctx: ServiceContext, req: IncomingMessage): void {
  const key = req.headers['x-api-key']
  if (key === undefined || key === '') throw new ApiError('MissingApikey', 'the x-api-key header is required')
  if (key !== ctx.apiKey) throw new ApiError('InvalidApikey', 'unknown API key')
}

export async function writeResult(res: ServerResponse, result: ApiResult, fault: FaultSpec | null): Promise<void> {
  const body = Buffer.from(JSON.stringify(result.body))
  res.writeHead(result.http, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(body.length),
    ...result.headers,
  })
  await deliverBuffer(res, body, fault?.kind === 'reset' ? fault : null)
}

export function apiHandler(ctx: ServiceContext) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', ctx.apiOrigin)
    const { latencyMs: latency, closeConnections } = ctx.faults.throttle
    if (closeConnections) res.shouldKeepAlive = false
    if (latency) await sleep(latency)
    if (url.pathname.startsWith('/_emulator/') && ctx.controls) {
      let result: ApiResult
      try {
        checkApiKey(ctx, req)
        result = await handleControl(ctx, req, url)
      } catch (err) {
        result = errorResult(err, ctx)
      }
      return writeResult(res, result, null)
    }
    const path = url.pathname.startsWith('/api/') ? url.pathname.slice(4) : null
    let match: { route: ApiRoute; params: string[] } | null = null
    for (const route of ROUTES) {
      const m = path !== null && req.method === route.method ? route.pattern.exec(path) : null
      if (m) {
        match = { route, params: m.slice(1) }
        break
      }
    }
    if (!match) {
      req.resume()
      return writeResult(res, { http: 404, body: errorEnvelope('NotFound', `no operation ${req.method} ${url.pathname}`) }, null)
    }
    const { route, params } = match
    ctx.faults.count(route.name, res)
    let fault = ctx.faults.take(route.name)
    if (fault?.kind === 'stall') {
      ctx.log(`${route.name}: stalled by fault`)
      if (fault.ms === undefined) return void req.resume()
      await sleep(fault.ms)
      fault = null
    }
    let result: ApiResult
    if (fault?.kind === 'status') {
      req.resume()
      result = faultResult(fault)
    } else {
      try {
        checkApiKey(ctx, req)
        result = await route.handle({ req, url, query: new Query(url.searchParams), params, ctx })
      } catch (err) {
        req.resume()
        result = errorResult(err, ctx)
      }
    }
    ctx.log(`${req.method} ${url.pathname} ${result.http}`)
    await writeResult(res, result, fault)
  }
}
