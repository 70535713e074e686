// Small HTTP helpers for the service's conformance tests: real HTTPS through undici, nothing mocked.
import { request } from 'undici'
import type { Envelope } from '../../src/api/types.js'
import type { TestService } from '../support/service.js'

export interface Reply<T = unknown> {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: Envelope<T>
}

export interface CallOptions {
  body?: unknown
  query?: Record<string, string | number | boolean>
  logintoken?: string
  apiKey?: string | null
}

export async function api<T = any>(svc: TestService, method: 'GET' | 'POST', path: string, opts: CallOptions = {}): Promise<Reply<T>> {
  const url = new URL(svc.baseUrl + path)
  for (const [k, v] of Object.entries(opts.query ?? {})) url.searchParams.set(k, String(v))
  const headers: Record<string, string> = {}
  const key = opts.apiKey === undefined ? svc.apiKey : opts.apiKey
  if (key !== null) headers['x-api-key'] = key
  if (opts.logintoken) headers.logintoken = opts.logintoken
  if (opts.body !== undefined) headers['content-type'] = 'application/json'
  const res = await request(url, {
    method, headers, dispatcher: svc.dispatcher,
    body: opts.body !== undefined ? JSON.stringify(opts.body) : undefined,
  })
  const text = await res.body.text()
  return { status: res.statusCode, headers: res.headers, body: JSON.parse(text) as Envelope<T> }
}

export async function login(svc: TestService, email = svc.user.email, password = svc.user.password): Promise<{ logintoken: string; refreshtoken: string }> {
  const res = await api(svc, 'POST', '/auth/login', { body: { email, password } })
  if (res.status !== 200) throw new Error(`login failed: ${JSON.stringify(res.body)}`)
  return res.body.data
}

export interface Upload {
  status: number
  text: string
}

export async function upload(svc: TestService, transferurl: string, query: Record<string, string | number | boolean>, body: Buffer | AsyncIterable<Buffer>, contentLength?: number): Promise<Upload> {
  const url = new URL(transferurl)
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, String(v))
  const headers: Record<string, string> = { 'content-type': 'application/octet-stream' }
  if (contentLength !== undefined) headers['content-length'] = String(contentLength)
  const res = await request(url, { method: 'POST', headers, body: body as any, dispatcher: svc.dispatcher })
  return { status: res.statusCode, text: await res.body.text() }
}

export async function get(svc: TestService, url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; bytes: Buffer }> {
  const res = await request(url, { method: 'GET', headers, dispatcher: svc.dispatcher })
  const bytes = Buffer.from(await res.body.arrayBuffer())
  return { status: res.statusCode, headers: res.headers, bytes }
}

/** Creates a transfer with files (whole uploads) and completes it; returns the initialize data. */
export async function sendTransfer(svc: TestService, logintoken: string | undefined, init: Record<string, unknown>,
  files: Record<string, Buffer>, complete = true): Promise<{ transferid: string; transferkey: string; transferurl: string }> {
  const res = await api(svc, 'POST', '/transfer/initialize', { body: init, logintoken })
  if (res.status !== 200) throw new Error(`initialize failed: ${JSON.stringify(res.body)}`)
  const data = res.body.data as { transferid: string; transferkey: string; transferurl: string }
  for (const [name, bytes] of Object.entries(files)) {
    const up = await upload(svc, data.transferurl, { transferid: data.transferid, transferkey: data.transferkey, thefilename: name }, bytes)
    if (up.status !== 200) throw new Error(`upload failed: ${up.status} ${up.text}`)
  }
  if (complete) {
    const done = await api(svc, 'POST', '/transfer/complete', { body: { transferid: data.transferid, transferkey: data.transferkey }, logintoken })
    if (done.status !== 200) throw new Error(`complete failed: ${JSON.stringify(done.body)}`)
  }
  return data
}
