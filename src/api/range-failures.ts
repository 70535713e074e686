// How a range connection's failures are reported (range-sockets.ts): each timeout, a
// broken or overlong answer as the NetworkError (with undici's or the socket's code) the
// failure policy (failure.ts) already knows, and which failure earns another try on a new
// connection.
import { NetworkError } from './errors.js'

/** The TLS connection was not made within `ms`. */
export function connectTimeout(origin: string, ms: number): NetworkError {
  return new NetworkError(`cannot reach ${origin}: no connection within ${ms} ms`, 'UND_ERR_CONNECT_TIMEOUT')
}

/** No answer's head within `ms` of the request. */
export function headersTimeout(origin: string, ms: number): NetworkError {
  return new NetworkError(`${origin} sent no answer within ${ms} ms`, 'UND_ERR_HEADERS_TIMEOUT')
}

/** The socket was silent for `ms` during the exchange. */
export function bodyTimeout(origin: string, ms: number): NetworkError {
  return new NetworkError(`${origin} sent nothing for ${ms} ms`, 'UND_ERR_BODY_TIMEOUT')
}

/** Bytes past the length the answer's head gave. */
export function overLength(origin: string): NetworkError {
  return new NetworkError(`${origin} sent more than its answer's length`, 'EPROTO')
}

/** The socket closed before the answer was complete. */
export function closedConnection(origin: string): NetworkError {
  return new NetworkError(`${origin} closed the connection`, 'ECONNRESET')
}

/** The socket ended or failed during an exchange: a NetworkError as it is, anything else as one with its code. */
export function brokenConnection(origin: string, e: Error): NetworkError {
  return e instanceof NetworkError ? e : new NetworkError(`${origin}: ${e.message}`, (e as { code?: string }).code ?? null, { cause: e })
}

/**
 * Whether a request that failed is asked once more on a new connection: a kept connection
 * the server closed meanwhile (its idle timeout) fails before any answer.
 */
export function isIdleClose(e: unknown, attempt: { reused: boolean; answered: boolean; aborted: boolean }): boolean {
  return attempt.reused && !attempt.answered && e instanceof NetworkError && !attempt.aborted
}
