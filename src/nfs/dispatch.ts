// One RPC call to its reply: the program and version checked (PROG_UNAVAIL, PROG_MISMATCH),
// the procedure found (PROC_UNAVAIL), its arguments read (GARBAGE_ARGS), its work done within
// a deadline, and its failure told as the status its results start with. Whatever happens,
// the call is answered exactly once and nothing thrown escapes.
import { errorForLog } from '../vfs/errno.js'
import { MOUNT_PROCEDURES, MOUNT_PROGRAM, MOUNT_VERSION } from './mountd.js'
import { READ_PROCEDURES } from './nfs3-read.js'
import { WRITE_PROCEDURES } from './nfs3-write.js'
import type { Body, NfsContext, Procedure } from './procedure.js'
import { takeReplyBuffer } from './reply-buffers.js'
import { AcceptStat, acceptedReply, AUTH_UNIX, authError, AuthStat, failedCall, progMismatch, type RpcCall } from './rpc.js'
import { NFS3, nfsStatusOf } from './status.js'
import { XdrError } from './xdr.js'

export const NFS_PROGRAM = 100003
export const NFS_VERSION = 3

export interface Deadlines {
  /** ms: READ. */
  readTimeoutMs: number
  /** ms: WRITE, CREATE, COMMIT, SETATTR. */
  writeTimeoutMs: number
  /** ms: every other procedure. */
  metadataTimeoutMs: number
}

interface Spec {
  run: Procedure
  /** Words of a failure's results after its status (their optional attributes, all "none"); null when the results have no status. */
  fail: number | null
  deadline: keyof Deadlines
}

const NFS_NAMES = ['NULL', 'GETATTR', 'SETATTR', 'LOOKUP', 'ACCESS', 'READLINK', 'READ', 'WRITE', 'CREATE', 'MKDIR', 'SYMLINK', 'MKNOD', 'REMOVE', 'RMDIR', 'RENAME', 'LINK', 'READDIR', 'READDIRPLUS', 'FSSTAT', 'FSINFO', 'PATHCONF', 'COMMIT']
/** A failure's results: GETATTR has none; LOOKUP, ACCESS, READLINK, READ, READDIR(PLUS), FSSTAT, FSINFO, PATHCONF an attribute; changes their wcc_data. */
const NFS_FAIL_WORDS = [0, 0, 2, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 4, 3, 1, 1, 1, 1, 1, 2]
const WRITE_DEADLINE = new Set([2, 7, 8, 21])

const NFS_SPECS = new Map<number, Spec>()
for (const [proc, run] of [...READ_PROCEDURES, ...WRITE_PROCEDURES]) {
  NFS_SPECS.set(proc, { run, fail: NFS_FAIL_WORDS[proc] ?? 0, deadline: proc === 6 ? 'readTimeoutMs' : WRITE_DEADLINE.has(proc) ? 'writeTimeoutMs' : 'metadataTimeoutMs' })
}
const MOUNT_SPECS = new Map<number, Spec>([...MOUNT_PROCEDURES].map(([proc, run]) => [proc, { run, fail: proc === 1 ? 0 : null, deadline: 'metadataTimeoutMs' }]))

/** The name of a call for the log: "NFS READ", "MOUNT 1". */
function callName(call: RpcCall): string {
  if (call.prog === NFS_PROGRAM) return `NFS ${NFS_NAMES[call.proc] ?? call.proc}`
  return call.prog === MOUNT_PROGRAM ? `MOUNT ${call.proc}` : `program ${call.prog}`
}

class DeadlinePassed extends Error {}

function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlinePassed()), ms)
  })
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer))
}

/** The reply to `call` (with room for its record mark). Never rejects. */
export async function dispatch(call: RpcCall, cx: NfsContext, deadlines: Deadlines): Promise<Buffer> {
  const { xid } = call
  let specs: Map<number, Spec>
  if (call.prog === NFS_PROGRAM) {
    if (call.vers !== NFS_VERSION) return progMismatch(xid, NFS_VERSION, NFS_VERSION)
    specs = NFS_SPECS
  } else if (call.prog === MOUNT_PROGRAM) {
    if (call.vers !== MOUNT_VERSION) return progMismatch(xid, MOUNT_VERSION, MOUNT_VERSION)
    specs = MOUNT_SPECS
  } else {
    return failedCall(xid, AcceptStat.PROG_UNAVAIL)
  }
  if (call.proc === 0) return acceptedReply(xid, AcceptStat.SUCCESS).bytes()
  const spec = specs.get(call.proc)
  if (!spec) return failedCall(xid, AcceptStat.PROC_UNAVAIL)
  if (cx.ownerUid !== null) {
    // Only the account's owner (or root) gets in, as on a FUSE mount without allowOther.
    if (call.cred.flavor !== AUTH_UNIX) return authError(xid, AuthStat.TOOWEAK)
    if (call.cred.uid !== cx.ownerUid && call.cred.uid !== 0 && spec.fail !== null) {
      cx.log.debug(`${callName(call)}: uid ${call.cred.uid} is not the owner's → NFS3ERR_ACCES`)
      const w = acceptedReply(xid, AcceptStat.SUCCESS).uint32(NFS3.ACCES)
      for (let i = 0; i < spec.fail; i++) w.uint32(0)
      return w.bytes()
    }
  }

  let body: Body | null = null
  let status: number = NFS3.OK
  try {
    body = await withDeadline(spec.run(call.args, cx, call.cred), deadlines[spec.deadline])
  } catch (err) {
    if (err instanceof XdrError) {
      cx.log.debug(`${callName(call)}: ${err.message} → GARBAGE_ARGS`)
      return failedCall(xid, AcceptStat.GARBAGE_ARGS)
    }
    const why = err instanceof DeadlinePassed ? `no answer within ${deadlines[spec.deadline]} ms` : errorForLog(err)
    if (spec.fail === null) {
      // Results without a status (MOUNT's DUMP, EXPORT) have no way to say it.
      cx.log.warn(`${callName(call)}: ${why} → SYSTEM_ERR`)
      return failedCall(xid, AcceptStat.SYSTEM_ERR)
    }
    status = err instanceof DeadlinePassed ? NFS3.IO : nfsStatusOf(err)
    cx.log.debug(`${callName(call)}: ${why} → status ${status}`)
  }
  try {
    const w = acceptedReply(xid, AcceptStat.SUCCESS, call.prog === NFS_PROGRAM && call.proc === 6 ? takeReplyBuffer() : 512)
    if (spec.fail !== null) w.uint32(status)
    if (status === NFS3.OK) body?.(w)
    else for (let i = 0; i < (spec.fail ?? 0); i++) w.uint32(0)
    return w.bytes()
  } catch (err) {
    cx.log.warn(`${callName(call)}: writing the results: ${errorForLog(err)} → SYSTEM_ERR`)
    return failedCall(xid, AcceptStat.SYSTEM_ERR)
  }
}
