// Read windows: bytes a sequential reader is about to read, lent to libfuse's threads so
// that they answer its next reads themselves, each with one memcpy, without waking the JS
// thread. libfuse 2 asks 128 KiB at a time, 8,192 reads per GiB; answering each in JS
// (a wake-up, a call into JS, a reply on the next tick, a semaphore to let the FUSE thread
// go, and the copy) was two thirds of the JS thread's time in a re-read from the disk cache,
// the copy a fifth of it. Now JS answers the first read of a block and lends the rest of it
// (FileSystemCore.lendAhead); our fuse-native patch keeps a table of these windows and
// answers from them.
//
// A window is only ever taken back by this thread, and the patch waits for any copy from it
// to finish first, so lent bytes go back (bytes.ts: giveBack) only once nothing reads them.
// One window per open file; a JS read of the file (the reader left the window) and its
// release take it back.
import { giveBack, type Bytes } from '../read/bytes.js'

/** What the patched addon offers (fuse-native's lendWindow, withdrawWindow, windowReads). */
export interface WindowTable {
  /** Lends `bytes` as the window of fh from file offset `start`; false when every window is in use. */
  lend(fh: number, start: number, bytes: Buffer): boolean
  /** Takes the window of fh back, once no FUSE thread copies from it; true when it had one. */
  withdraw(fh: number): boolean
  /** Reads the FUSE threads answered from windows since the mount. */
  reads(): number
}

export class ReadWindows {
  /** fh → the bytes lent as its window, oldest first. */
  private readonly lent = new Map<number, Bytes>()

  constructor(private readonly table: WindowTable) {}

  /** Lends `bytes` (lent to us: given back when the window ends) as the window of fh from `start`. */
  open(fh: number, start: number, bytes: Bytes): void {
    this.close(fh)
    // The table takes one piece of memory: bytes in parts (across blocks) are not lent.
    const one = Buffer.isBuffer(bytes) ? bytes : bytes.length === 1 ? bytes[0]! : undefined
    if (!one || one.length === 0) return giveBack(bytes)
    let lent = this.table.lend(fh, start, one)
    // Every window is in use: the oldest one goes (its reader may have stopped reading).
    const oldest = lent ? undefined : this.lent.keys().next().value
    if (oldest !== undefined) {
      this.close(oldest)
      lent = this.table.lend(fh, start, one)
    }
    if (!lent) return giveBack(bytes)
    this.lent.set(fh, bytes)
  }

  /** Takes the window of fh back, if it has one. */
  close(fh: number): void {
    const bytes = this.lent.get(fh)
    if (bytes === undefined) return
    this.lent.delete(fh)
    this.table.withdraw(fh)
    giveBack(bytes)
  }

  closeAll(): void {
    for (const fh of [...this.lent.keys()]) this.close(fh)
  }

  /** Windows lent now. */
  get size(): number {
    return this.lent.size
  }

  /** Reads the FUSE threads answered from windows since the mount. */
  get reads(): number {
    return this.table.reads()
  }
}
