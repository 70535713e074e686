// The buffers READ replies are written into, used again once the socket has taken their bytes.
// A fresh buffer of 1 MiB for every READ cost the server more than the read path itself: in a
// V8 profile of nfs-cat reading 1 GiB, garbage collection took 13% of the server's time (1% on
// the FUSE mount), and filling new memory faulted every page in again.
import { MAX_IO_BYTES } from './nfs3-read.js'

/** Bytes of a READ reply at most: the data and its header (credentials and attributes are small). */
export const READ_REPLY_BYTES = MAX_IO_BYTES + 1024
/** Buffers kept for the next replies: as many as a connection lets wait unsent, and no more. */
const KEPT = 16

const free: Buffer[] = []
/** The buffers lent out, by the memory they view: a reply is a view into one. */
const lent = new WeakMap<ArrayBufferLike, Buffer>()

/** A buffer for a READ reply, READ_REPLY_BYTES long; give its reply back once written. */
export function takeReplyBuffer(): Buffer {
  const b = free.pop() ?? Buffer.allocUnsafeSlow(READ_REPLY_BYTES)
  lent.set(b.buffer, b)
  return b
}

/** Takes back the buffer `reply` views, if it is one of these; any other is left to the GC. */
export function giveBackReply(reply: Buffer): void {
  const b = lent.get(reply.buffer)
  if (!b) return
  lent.delete(reply.buffer)
  if (free.length < KEPT) free.push(b)
}
