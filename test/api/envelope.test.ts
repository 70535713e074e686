import { describe, expect, it } from 'vitest'
import { parseEnvelope, statusError } from '../../src/api/envelope.js'
import { parseRangeHash } from '../../src/api/download.js'
import { buildQuery } from '../../src/api/protocol.js'
import { ServiceError } from '../../src/api/errors.js'
import { redactUrl } from '../../src/api/http.js'

const env = (o: object) => JSON.stringify({ errorid: null, errormessage: null, data: null, errorcode: 0, ...o })

function caught(fn: () => unknown): ServiceError {
  try {
    fn()
  } catch (err) {
    if (err instanceof ServiceError) return err
    throw err
  }
  throw new Error('did not throw')
}

describe('envelope', () => {
  it('gives the data of an OK answer', () => {
    expect(parseEnvelope('x', 200, {}, env({ responsestatus: 'OK', data: { a: 1 } }))).toEqual({ a: 1 })
    expect(parseEnvelope('x', 200, {}, env({ responsestatus: 'OK' }))).toBeNull()
  })

  it('turns an error envelope into a ServiceError with every field and an actionable message', () => {
    const err = caught(() =>
      parseEnvelope('forwarding the transfer', 400, {}, env({
        responsestatus: 'InvalidEmail', errorid: 'e-42', errormessage: 'bad address', errorcode: 4,
        validationerrors: [{ propertyName: 'to', errorCode: 'InvalidEmail', errorMessage: 'not-an-address is unknown' }],
      })),
    )
    expect(err.httpStatus).toBe(400)
    expect(err.responsestatus).toBe('InvalidEmail')
    expect(err.errorid).toBe('e-42')
    expect(err.errormessage).toBe('bad address')
    expect(err.validationerrors).toHaveLength(1)
    expect(err.message).toContain('forwarding the transfer failed')
    expect(err.message).toContain('contact groups')
    expect(err.message).toContain('to: not-an-address is unknown')
  })

  it('treats an OK envelope with an error HTTP status, and a non-envelope body, as errors', () => {
    expect(caught(() => parseEnvelope('x', 500, {}, env({ responsestatus: 'OK' }))).httpStatus).toBe(500)
    const html = caught(() => parseEnvelope('x', 502, {}, '<html>bad gateway</html>'))
    expect(html.responsestatus).toBeNull()
    expect(html.message).toContain('HTTP 502')
    expect(caught(() => parseEnvelope('x', 200, {}, 'hello')).responsestatus).toBeNull()
  })

  it('keeps Retry-After in seconds', () => {
    const err = caught(() => parseEnvelope('x', 429, { 'retry-after': '7' }, env({ responsestatus: 'RateLimitExceeded' })))
    expect(err.retryAfter).toBe(7)
  })

  it('never puts a query string (keys, tokens) into a message', () => {
    const url = new URL('https://h:1/savefile.ashx?transferkey=SECRET&md5=a%2Bb')
    expect(redactUrl(url)).toBe('https://h:1/savefile.ashx')
    expect(statusError('upload', url, 449, {}, '').message).not.toContain('SECRET')
  })
})

describe('range hash answers', () => {
  const hex = '0123456789abcdef0123456789abcdef'
  it('accepts bare, padded, quoted, upper-case and enveloped hex', () => {
    expect(parseRangeHash(hex)).toBe(hex)
    expect(parseRangeHash(`  ${hex}\r\n`)).toBe(hex)
    expect(parseRangeHash(`"${hex}"`)).toBe(hex)
    expect(parseRangeHash(hex.toUpperCase())).toBe(hex)
    expect(parseRangeHash(env({ responsestatus: 'OK', data: hex }))).toBe(hex)
  })
  it('refuses anything else', () => {
    expect(parseRangeHash('')).toBeNull()
    expect(parseRangeHash(hex.slice(1))).toBeNull()
    expect(parseRangeHash('{"data":null}')).toBeNull()
  })
})

describe('query strings', () => {
  it('encodes every value, booleans lowercase, lists comma-separated, leaves out the unset', () => {
    expect(buildQuery({ md5: 'a+b/c==', allDevices: true, x: undefined, ids: ['p1', 'p2'], n: 0 })).toBe(
      '?md5=a%2Bb%2Fc%3D%3D&allDevices=true&ids=p1%2Cp2&n=0',
    )
    expect(buildQuery({})).toBe('')
  })
})
