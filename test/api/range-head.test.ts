// The HTTP text of a range connection's exchange (range-head.ts): the request written, the
// answer's head read, and what is made of it: the body's length, whether the connection is
// kept, or an answer left to the general transport.
import { describe, expect, it } from 'vitest'
import { keepsConnection, NotPlainAnswer, parseHead, rangeJudge, requestText, shortJudge } from '../../src/api/range-head.js'

const head = (status: number, headers: Record<string, string>) => ({ status, headers })

describe('an answer head', () => {
  it('gives version, status and headers (names lower-cased, a repeated one its first value)', () => {
    expect(parseHead('HTTP/1.1 206 Partial Content\r\nContent-Length: 10\r\ncontent-range: bytes 0-9/100\r\nX-A: 1\r\nx-a: 2\r\nbad line\r\n: no name')).toEqual({
      version: '1.1', status: 206, headers: { 'content-length': '10', 'content-range': 'bytes 0-9/100', 'x-a': '1' },
    })
    expect(parseHead('HTTP/1.0 200 OK\r\nConnection: keep-alive')).toEqual({ version: '1.0', status: 200, headers: { connection: 'keep-alive' } })
    expect(parseHead('SSH-2.0-OpenSSH').status).toBe(0)
  })

  it('keeps an HTTP/1.1 connection unless told to close it, an HTTP/1.0 one only when told to keep it', () => {
    expect(keepsConnection(parseHead('HTTP/1.1 206 Partial Content'))).toBe(true)
    expect(keepsConnection(parseHead('HTTP/1.1 206 Partial Content\r\nConnection: Close'))).toBe(false)
    expect(keepsConnection(parseHead('HTTP/1.0 206 Partial Content'))).toBe(false)
    expect(keepsConnection(parseHead('HTTP/1.0 206 Partial Content\r\nConnection: Keep-Alive'))).toBe(true)
  })
})

describe('a request', () => {
  it('is a GET of the path and query with the host and the headers given, ended by a blank line', () => {
    expect(requestText(new URL('https://files.example:8443/d/f?x=1'), { range: 'bytes=0-9', authorization: 'Bearer t' }))
      .toBe('GET /d/f?x=1 HTTP/1.1\r\nhost: files.example:8443\r\nrange: bytes=0-9\r\nauthorization: Bearer t\r\n\r\n')
  })
})

describe('judging a range answer', () => {
  const judge = rangeJudge(10, 20)

  it('takes a 206 of exactly the bytes asked', () => {
    expect(judge(head(206, { 'content-length': '10', 'content-range': 'bytes 10-19/100' }))).toBe(10)
    expect(judge(head(206, { 'content-length': '10' }))).toBe(10)
  })

  it('leaves anything else to the general transport: another status, length or range, or a chunked body', () => {
    for (const answer of [
      head(200, { 'content-length': '10' }),
      head(404, {}),
      head(206, { 'content-length': '11' }),
      head(206, {}),
      head(206, { 'content-length': '10', 'content-range': 'bytes 0-9/100' }),
      head(206, { 'content-length': '10', 'transfer-encoding': 'chunked' }),
    ]) expect(judge(answer)).toBeInstanceOf(NotPlainAnswer)
  })
})

describe('judging a short answer', () => {
  const judge = shortJudge(100)

  it('takes a sized body of at most the limit, whatever the status', () => {
    expect(judge(head(200, { 'content-length': '100' }))).toBe(100)
    expect(judge(head(404, { 'content-length': '0' }))).toBe(0)
  })

  it('leaves a longer, unsized or chunked body to the general transport', () => {
    for (const answer of [
      head(200, { 'content-length': '101' }),
      head(200, {}),
      head(200, { 'content-length': '-1' }),
      head(200, { 'content-length': 'ten' }),
      head(200, { 'content-length': '10', 'transfer-encoding': 'chunked' }),
    ]) expect(judge(answer)).toBeInstanceOf(NotPlainAnswer)
  })
})
