// The HTTP/1.1 text of a range connection's exchange (range-sockets.ts): the request it
// writes, the answer's head it reads, and what it makes of that head: the body's length to
// take, whether the connection may carry another request, or an answer not parsed here.
// Pure: no socket, no clock.

/** The answer was not one parsed here (a plain 206 with a length; a short, sized body): ask through the general transport instead. */
export class NotPlainAnswer extends Error {
  override readonly name = 'NotPlainAnswer'
}

/** An answer's status and headers (lowercase names, the first value of each). */
export interface AnswerHead {
  status: number
  headers: Record<string, string>
}

/** An answer's head as read, with its HTTP version. */
export interface ParsedHead extends AnswerHead {
  version: string
}

/** What an exchange makes of an answer's head: the body's length to take, or why not here. */
export type HeadJudge = (answer: AnswerHead) => number | NotPlainAnswer

/** Headers longer than this are not a file server's range answer. */
export const MAX_HEADER_BYTES = 16 * 1024

/** The text of a GET of `url` with `headers` (written as latin1). */
export function requestText(url: URL, headers: Record<string, string>): string {
  const lines = [`GET ${url.pathname}${url.search} HTTP/1.1`, `host: ${url.host}`]
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`)
  return `${lines.join('\r\n')}\r\n\r\n`
}

/** Status and headers (names lower-cased; a repeated one keeps its first value) of an HTTP/1.1 answer's head. */
export function parseHead(text: string): ParsedHead {
  const lines = text.split('\r\n')
  const first = /^HTTP\/(1\.[01]) (\d{3})/.exec(lines[0] ?? '')
  const version = first?.[1] ?? ''
  const status = Number(first?.[2] ?? 0)
  const headers: Record<string, string> = {}
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':')
    if (colon <= 0) continue
    const name = line.slice(0, colon).trim().toLowerCase()
    headers[name] ??= line.slice(colon + 1).trim()
  }
  return { version, status, headers }
}

/** Whether the connection an answer came on may carry the next request. */
export function keepsConnection(head: ParsedHead): boolean {
  // HTTP/1.1 keeps a connection unless told otherwise; HTTP/1.0 only when told to.
  const connection = head.headers.connection ?? ''
  return head.version === '1.0' ? /\bkeep-alive\b/i.test(connection) : !/\bclose\b/i.test(connection)
}

/** Takes only a plain answer to a Range request for bytes [start, end): a 206 of exactly those bytes, not chunked. */
export function rangeJudge(start: number, end: number): HeadJudge {
  return (answer) => {
    const range = answer.headers['content-range']
    const plain = answer.status === 206 &&
      answer.headers['content-length'] === String(end - start) &&
      answer.headers['transfer-encoding'] === undefined &&
      (range === undefined || new RegExp(`^bytes ${start}-${end - 1}/`).test(range))
    return plain ? end - start : new NotPlainAnswer(`answer ${answer.status}`)
  }
}

/** Takes any answer whose body is sized, not chunked, and at most `limit` bytes, whatever its status. */
export function shortJudge(limit: number): HeadJudge {
  return (answer) => {
    const length = Number(answer.headers['content-length'] ?? NaN)
    if (answer.headers['transfer-encoding'] !== undefined || !Number.isSafeInteger(length) || length < 0) return new NotPlainAnswer(`answer ${answer.status} of no length`)
    return length <= limit ? length : new NotPlainAnswer(`answer ${answer.status} of ${length} bytes`)
  }
}
