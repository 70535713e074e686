// The JSON envelope, HTTP statuses per responsestatus (docs/design.md), request bodies and query values.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { randomUUID } from 'node:crypto'
import { errorCodeOf, type Envelope, type ServiceStatus, type ValidationError } from '../api/types.js'
import { SETTINGS } from './settings.js'

const STATUS_OF: Partial<Record<ServiceStatus, number>> = {
  InvalidParameter: 400, InputParameterMissing: 400, InvalidEmail: 400, InvalidRequest: 400,
  TooManyRecipients: 400, FileSizeBlockSender: 400,
  MissingApikey: 401, InvalidApikey: 401, InvalidOrExpiredLoginToken: 401, WrongUsernamePassword: 401,
  RefreshTokenExpired: 401, RefreshTokenAlreadyUsed: 401, PasswordRequired: 401, AccessDenied: 401,
  CaptchaRequiredForNextLogin: 401,
  NotFound: 404,
  InvalidTransferState: 409, UploadNotComplete: 409, TransferExpired: 409, InvalidDataState: 409,
  RateLimitExceeded: 429, ApiKeyQuotaExceeded: 429,
  ServiceInterruption: 503, AllFileserversBusy: 503,
}

/** The responsestatus that goes with an HTTP status when only the status is known (faults). */
const DEFAULT_STATUS_FOR_HTTP: Record<number, ServiceStatus> = {
  400: 'InvalidParameter', 401: 'AccessDenied', 404: 'NotFound', 406: 'ServiceInterruption',
  409: 'InvalidTransferState', 429: 'RateLimitExceeded', 449: 'ChunkDownloadError', 503: 'ServiceInterruption',
}

export function httpStatusOf(status: ServiceStatus): number {
  return STATUS_OF[status] ?? (status === 'OK' ? 200 : 500)
}

export function responseStatusForHttp(http: number): ServiceStatus {
  return DEFAULT_STATUS_FOR_HTTP[http] ?? 'UnknownError'
}

/** An error that a route throws; the router turns it into the error envelope. */
export class ApiError extends Error {
  constructor(
    readonly status: ServiceStatus,
    message: string,
    readonly validationerrors: ValidationError[] | null = null,
    readonly httpStatus: number = httpStatusOf(status),
  ) {
    super(message)
  }
}

export function invalid(property: string, message: string, status: ServiceStatus = 'InvalidParameter'): ApiError {
  return new ApiError(status, message, [{ propertyName: property, errorCode: status, errorMessage: message }])
}

export function sendJson(res: ServerResponse, httpStatus: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body)
  res.writeHead(httpStatus, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  })
  res.end(text)
}

export function okEnvelope<T>(data: T): Envelope<T> {
  return { responsestatus: 'OK', errorid: null, errormessage: null, data, errorcode: errorCodeOf('OK') }
}

export function errorEnvelope(status: ServiceStatus, message: string, validationerrors: ValidationError[] | null = null): Envelope<null> {
  return {
    responsestatus: status, errorid: randomUUID(), errormessage: message, data: null,
    errorcode: errorCodeOf(status), validationerrors,
  }
}

export function sendError(res: ServerResponse, err: ApiError): void {
  const headers: Record<string, string> = {}
  if (err.httpStatus === 429) headers['retry-after'] = String(SETTINGS.retryAfterSeconds)
  sendJson(res, err.httpStatus, errorEnvelope(err.status, err.message, err.validationerrors), headers)
}

const JSON_TYPES = ['application/json', 'text/json', 'application/json-patch+json']

function isJsonType(contentType: string): boolean {
  const type = contentType.split(';')[0]!.trim().toLowerCase()
  return JSON_TYPES.includes(type) || /^application\/[^/]+\+json$/.test(type)
}

/** Reads a JSON request body; an absent body reads as `{}` so that required fields are reported by name. */
export async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > SETTINGS.maxJsonBodyBytes) throw new ApiError('InvalidRequest', 'request body too large')
    chunks.push(chunk)
  }
  const text = Buffer.concat(chunks).toString('utf8')
  if (text.trim() === '') return {}
  const contentType = req.headers['content-type'] ?? ''
  if (!isJsonType(contentType)) {
    throw new ApiError('InvalidRequest', `unsupported content type ${JSON.stringify(contentType)}; send JSON`)
  }
  try {
    return JSON.parse(text) as unknown
  } catch {
    throw invalid('body', 'the body is not valid JSON')
  }
}

export type FieldType = 'string' | 'boolean' | 'integer' | 'string[]' | 'idvalue[]'

export interface FieldRule {
  type: FieldType
  required?: boolean
  minLength?: number
}

/** Checks a body against its fields: unknown properties (when strict), missing, min length, wrong type. */
export function validateBody(body: unknown, rules: Record<string, FieldRule>, strict: boolean): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalid('body', 'the body must be a JSON object')
  }
  const record = body as Record<string, unknown>
  const errors: ValidationError[] = []
  const add = (propertyName: string, errorCode: ServiceStatus, errorMessage: string) =>
    errors.push({ propertyName, errorCode, errorMessage })
  if (strict) {
    for (const key of Object.keys(record)) {
      if (!(key in rules)) add(key, 'InvalidParameter', `unknown property '${key}'`)
    }
  }
  for (const [name, rule] of Object.entries(rules)) {
    const value = record[name]
    if (value === undefined || value === null) {
      if (rule.required) add(name, 'InputParameterMissing', `'${name}' is required`)
      continue
    }
    if (!hasType(value, rule.type)) {
      add(name, 'InvalidParameter', `'${name}' must be of type ${rule.type}`)
      continue
    }
    if (rule.minLength !== undefined && (value as string | unknown[]).length < rule.minLength) {
      add(name, 'InvalidParameter', `'${name}' must have a length of at least ${rule.minLength}`)
    }
  }
  if (errors.length > 0) {
    const status = errors.some((e) => e.errorCode === 'InputParameterMissing') ? 'InputParameterMissing' : 'InvalidParameter'
    throw new ApiError(status, errors.map((e) => e.errorMessage).join('; '), errors)
  }
  return record
}

function hasType(value: unknown, type: FieldType): boolean {
  switch (type) {
    case 'string': return typeof value === 'string'
    case 'boolean': return typeof value === 'boolean'
    case 'integer': return typeof value === 'number' && Number.isSafeInteger(value)
    case 'string[]': return Array.isArray(value) && value.every((v) => typeof v === 'string')
    case 'idvalue[]': return Array.isArray(value) && value.every((v) =>
      typeof v === 'object' && v !== null && typeof (v as { id?: unknown }).id === 'string' &&
      typeof (v as { value?: unknown }).value === 'string')
  }
}

/** Query values: lowercase `true`/`false` booleans and decimal integers; anything else is a 400 naming the parameter. */
export class Query {
  constructor(readonly params: URLSearchParams) {}

  string(name: string): string | undefined {
    return this.params.get(name) ?? undefined
  }

  required(name: string): string {
    const value = this.params.get(name)
    if (value === null || value === '') throw invalid(name, `query parameter '${name}' is required`, 'InputParameterMissing')
    return value
  }

  boolean(name: string): boolean | undefined {
    const value = this.params.get(name)
    if (value === null) return undefined
    if (value.toLowerCase() === 'true') return true
    if (value.toLowerCase() === 'false') return false
    throw invalid(name, `query parameter '${name}' must be true or false`)
  }

  integer(name: string, min = Number.MIN_SAFE_INTEGER): number | undefined {
    const value = this.params.get(name)
    if (value === null) return undefined
    if (!/^-?\d+$/.test(value) || !Number.isSafeInteger(Number(value)) || Number(value) < min) {
      throw invalid(name, `query parameter '${name}' must be an integer${min > Number.MIN_SAFE_INTEGER ? ` of at least ${min}` : ''}`)
    }
    return Number(value)
  }
}

export function isEmail(value: string): boolean {
  return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value)
}
