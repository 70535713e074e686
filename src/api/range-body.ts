// An answer's body on its way from a range connection to its sink (range-sockets.ts): the
// bytes handed on in order, never more than the length the head gave, the socket held
// back while the sink's promise is pending, and the sink's own memory named as where the
// socket decrypts to while it can take bytes at once.
import { overLength } from './range-failures.js'

/** What becomes of the body's bytes: copied out during the call (the buffer is reused after it); a promise pauses the socket until it settles. */
export interface BodySink {
  (bytes: Buffer): void | Promise<void>
  /**
   * Where the sink would copy the next bytes to, asked after each call: the socket then
   * decrypts them straight there, and the call gets a view of that memory (the sink sees
   * it is in place and copies nothing). Undefined: the shared read buffer, copied as ever.
   * Asked only while the sink takes bytes at once (no promise pending); the memory must
   * stay the sink's until its next call or the end of the answer.
   */
  room?(): Buffer | undefined
}

/** The exchange a body belongs to, as the body sees it. */
export interface BodyOwner {
  /** The exchange has ended (complete, failed or aborted): no byte is handed on after. */
  readonly over: boolean
  /** Ends the exchange: complete (null) or with `error`. */
  finish(error: Error | null): void
  /** Lets the socket read again after the sink's promise held it back. */
  resume(): void
}

export class BodyStream {
  /** The body's bytes still to come. */
  private left: number
  /** The sink's pending promise, while it holds the stream back. */
  private held: Promise<void> | null = null
  // While the sink's promise is pending, bytes the socket had already decrypted still
  // come (a pause stops the next read, not the records of this one): they are copied
  // aside, since the read buffer is used again, and handed on in order afterwards.
  private readonly queued: Buffer[] = []

  constructor(private readonly sink: BodySink, length: number, private readonly origin: string, private readonly owner: BodyOwner) {
    this.left = length
  }

  /** Takes bytes of the body that arrived; false pauses the socket. */
  take(bytes: Buffer): boolean {
    if (this.held === null) return this.hand(bytes)
    this.queued.push(Buffer.from(bytes))
    return false
  }

  /** Where the socket decrypts the next bytes to: the sink's room, or undefined for the shared read buffer. */
  room(): Buffer | undefined {
    if (this.held !== null || this.left === 0) return undefined
    const room = this.sink.room?.()
    // Never more than the answer has left: bytes past it are refused, not written to the sink's memory.
    return room && room.length > this.left ? room.subarray(0, this.left) : room
  }

  /** Hands `bytes` to the sink; false when the socket is to pause (held back or over). */
  private hand(bytes: Buffer): boolean {
    const { owner, sink } = this
    if (bytes.length > this.left) {
      owner.finish(overLength(this.origin))
      return false
    }
    this.left -= bytes.length
    let paused: void | Promise<void>
    try {
      paused = sink(bytes)
    } catch (e) {
      owner.finish(e as Error)
      return false
    }
    if (this.left === 0) {
      // The answer is complete; the sink's promise (if any) is waited for before it is over.
      if (paused) paused.then(() => owner.finish(null), (e: unknown) => owner.finish(e as Error))
      else owner.finish(null)
      return true
    }
    if (!paused) return true
    this.hold(paused)
    return false
  }

  /** Holds the stream back until the sink's promise settles, then hands on what came meanwhile and lets the socket read again. */
  private hold(paused: Promise<void>): void {
    const { owner } = this
    this.held = paused
    paused.then(() => {
      this.held = null
      while (this.queued.length > 0 && this.held === null && !owner.over) this.hand(this.queued.shift()!)
      if (this.held === null && !owner.over) owner.resume()
    }, (e: unknown) => owner.finish(e as Error))
  }
}
