// ONC RPC version 2 messages (RFC 5531): a call's header and credentials read from one
// record, and every kind of reply written. A call whose header cannot be read is dropped
// (there is no xid to answer); one that can is always answered, with an accepted or denied
// reply that says what was wrong.
import { XdrError, XdrReader, XdrWriter } from './xdr.js'

const RPC_VERSION = 2
const CALL = 0
const REPLY = 1
const MSG_ACCEPTED = 0
const MSG_DENIED = 1

export const AUTH_NONE = 0
export const AUTH_UNIX = 1
/** Credentials and verifiers are at most this long (RFC 5531). */
const MAX_AUTH_BYTES = 400
/** AUTH_UNIX: a host name of at most 255 bytes and at most 16 more groups (RFC 5531, appendix A). */
const MAX_MACHINE_NAME = 255
const MAX_GROUPS = 16

export const AcceptStat = { SUCCESS: 0, PROG_UNAVAIL: 1, PROG_MISMATCH: 2, PROC_UNAVAIL: 3, GARBAGE_ARGS: 4, SYSTEM_ERR: 5 } as const
export type AcceptStat = (typeof AcceptStat)[keyof typeof AcceptStat]

const RPC_MISMATCH = 0
const AUTH_ERROR = 1
export const AuthStat = { BADCRED: 1, REJECTEDCRED: 2, TOOWEAK: 5 } as const
export type AuthStat = (typeof AuthStat)[keyof typeof AuthStat]

/** Who the caller says it is. */
export type Credential =
  | { flavor: typeof AUTH_NONE }
  | { flavor: typeof AUTH_UNIX; stamp: number; machine: string; uid: number; gid: number; gids: number[] }

export interface RpcCall {
  xid: number
  prog: number
  vers: number
  proc: number
  cred: Credential
  /** The procedure's arguments, positioned after the header. */
  args: XdrReader
}

/** What one record is: a call to serve, a reply to send at once (the call is refused), or nothing to answer. */
export type Incoming = { kind: 'call'; call: RpcCall } | { kind: 'refused'; reply: Buffer } | { kind: 'drop'; why: string }

function credentialOf(flavor: number, body: Buffer): Credential | null {
  if (flavor === AUTH_NONE) return { flavor: AUTH_NONE }
  if (flavor !== AUTH_UNIX) return null
  const r = new XdrReader(body)
  const stamp = r.uint32()
  const machine = r.string(MAX_MACHINE_NAME)
  const uid = r.uint32()
  const gid = r.uint32()
  const count = r.uint32()
  if (count > MAX_GROUPS) throw new XdrError(`AUTH_UNIX with ${count} groups`)
  const gids: number[] = []
  for (let i = 0; i < count; i++) gids.push(r.uint32())
  r.end()
  return { flavor: AUTH_UNIX, stamp, machine, uid, gid, gids }
}

/** Reads one record as a call. Never throws: what cannot be served is refused or dropped. */
export function readCall(record: Buffer): Incoming {
  const r = new XdrReader(record)
  let xid: number
  try {
    xid = r.uint32()
    if (r.uint32() !== CALL) return { kind: 'drop', why: 'not a call' }
  } catch {
    return { kind: 'drop', why: 'a record too short for an RPC header' }
  }
  try {
    if (r.uint32() !== RPC_VERSION) return { kind: 'refused', reply: deniedReply(xid, (w) => w.uint32(RPC_MISMATCH).uint32(RPC_VERSION).uint32(RPC_VERSION)) }
    const prog = r.uint32()
    const vers = r.uint32()
    const proc = r.uint32()
    const credFlavor = r.uint32()
    const credBody = r.opaque(MAX_AUTH_BYTES)
    r.uint32() // the verifier's flavor: AUTH_NONE and AUTH_UNIX callers send none worth checking
    r.opaque(MAX_AUTH_BYTES)
    const cred = credentialOf(credFlavor, credBody)
    if (!cred) return { kind: 'refused', reply: authError(xid, AuthStat.BADCRED) }
    return { kind: 'call', call: { xid, prog, vers, proc, cred, args: r } }
  } catch (err) {
    if (err instanceof XdrError) return { kind: 'refused', reply: authError(xid, AuthStat.BADCRED) }
    throw err
  }
}

// Every reply below starts with 4 bytes of room for its record mark (records.ts markRecord).

/** A writer with room for the record mark, then the reply's xid and type. */
function replyStart(xid: number): XdrWriter {
  return new XdrWriter().uint32(0).uint32(xid).uint32(REPLY)
}

/**
 * An accepted reply with `stat`; for SUCCESS the caller writes the results into the writer
 * returned, then marks the record (records.ts markRecord) from its bytes.
 */
export function acceptedReply(xid: number, stat: AcceptStat, sizeHint: number | Buffer = 512): XdrWriter {
  const w = typeof sizeHint !== 'number' || sizeHint > 512 ? new XdrWriter(sizeHint).uint32(0).uint32(xid).uint32(REPLY) : replyStart(xid)
  return w.uint32(MSG_ACCEPTED).uint32(AUTH_NONE).uint32(0).uint32(stat)
}

/** PROG_MISMATCH: the versions of the program served. */
export function progMismatch(xid: number, low: number, high: number): Buffer {
  return acceptedReply(xid, AcceptStat.PROG_MISMATCH).uint32(low).uint32(high).bytes()
}

/** An accepted reply with no results: PROG_UNAVAIL, PROC_UNAVAIL, GARBAGE_ARGS or SYSTEM_ERR. */
export function failedCall(xid: number, stat: AcceptStat): Buffer {
  return acceptedReply(xid, stat).bytes()
}

function deniedReply(xid: number, body: (w: XdrWriter) => void): Buffer {
  const w = replyStart(xid).uint32(MSG_DENIED)
  body(w)
  return w.bytes()
}

export function authError(xid: number, stat: AuthStat): Buffer {
  return deniedReply(xid, (w) => w.uint32(AUTH_ERROR).uint32(stat))
}
