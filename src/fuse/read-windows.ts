// Read windows: bytes a sequential reader is about to read, lent to libfuse's threads so
// that they answer its next reads themselves, each with one memcpy, without waking the JS
// thread. libfuse 2 asks 128 KiB at a time, 8,192 reads per GiB; answering each in JS
// (a wake-up, a call into JS, a reply on the next tick, a semaphore to let the FUSE thread
// go, and the copy) was two thirds of the JS thread's time in a re-read from the disk cache,
// the copy a fifth of it. Now JS answers a read and lends what follows the file's furthest
// read (FileSystemCore.lendAhead: the rest of its block, and for a reader asking less than a
// block at a time the blocks after it), each block a window; our fuse-native patch keeps a
// table of these windows and answers from them.
//
// A window is only ever taken back by this thread, and the patch waits for any copy from it
// to finish first, so lent bytes go back (bytes.ts: giveBack) only once nothing reads them.
// A file has the windows its last lending gave it (at most three); a read of the file that
// reaches JS takes back those it has passed, and its release takes back all.
import { giveBack, type Bytes } from '../read/bytes.js'
import type { LentAhead } from '../read/source.js'

/** What the patched addon offers (fuse-native's lendWindow, withdrawWindow, windowReads). */
export interface WindowTable {
  /** Lends `bytes` as the window of fh from file offset `start`, in place of one from the same start; false when every window is in use. */
  lend(fh: number, start: number, bytes: Buffer): boolean
  /** Takes the window of fh from `start` back (start -1: every window of fh), once no FUSE thread copies from it; true when there was one. */
  withdraw(fh: number, start: number): boolean
  /** Reads the FUSE threads answered from windows since the mount. */
  reads(): number
}

interface Window {
  start: number
  end: number
  /** What was lent to us: given back when the window ends. */
  bytes: Bytes
}

/** The one piece of memory `bytes` are, if they are one and not empty: the table takes no bytes in parts (across blocks). */
function onePiece(bytes: Bytes): Buffer | undefined {
  const one = Buffer.isBuffer(bytes) ? bytes : bytes.length === 1 ? bytes[0]! : undefined
  return one && one.length > 0 ? one : undefined
}

export class ReadWindows {
  /** fh → its windows; files in the order they were last lent to, oldest first. */
  private readonly lent = new Map<number, Window[]>()

  constructor(private readonly table: WindowTable) {}

  /**
   * Makes `ahead` (each lent to us: given back when its window ends) the windows of fh. One
   * it has already over the same bytes stays as it is; the others it had are taken back.
   */
  open(fh: number, ahead: LentAhead[]): void {
    const had = this.lent.get(fh) ?? []
    this.lent.delete(fh)
    const kept: Window[] = []
    const fresh: Array<{ start: number; one: Buffer; bytes: Bytes }> = []
    for (const { start, bytes } of ahead) {
      const one = onePiece(bytes)
      const same = one && had.find((w) => w.start === start && w.end === start + one.length)
      if (same) kept.push(same)
      if (same || !one) giveBack(bytes)
      else fresh.push({ start, one, bytes })
    }
    for (const w of had) if (!kept.includes(w)) this.end(fh, w)
    for (const { start, one, bytes } of fresh) {
      let lent = this.table.lend(fh, start, one)
      // Every window is in use: the oldest file's go (its reader may have stopped reading).
      const oldest = lent ? undefined : this.lent.keys().next().value
      if (oldest !== undefined) {
        this.close(oldest)
        lent = this.table.lend(fh, start, one)
      }
      if (lent) kept.push({ start, end: start + one.length, bytes })
      else giveBack(bytes)
    }
    if (kept.length > 0) this.lent.set(fh, kept)
  }

  /** A read of fh from `position` reached JS: the windows of fh that end at or before it are behind the reader and go back. */
  passed(fh: number, position: number): void {
    const had = this.lent.get(fh)
    if (!had || had.every((w) => w.end > position)) return
    const ahead = had.filter((w) => w.end > position)
    for (const w of had) if (w.end <= position) this.end(fh, w)
    if (ahead.length > 0) this.lent.set(fh, ahead)
    else this.lent.delete(fh)
  }

  /** Takes every window of fh back. */
  close(fh: number): void {
    const had = this.lent.get(fh)
    if (had === undefined) return
    this.lent.delete(fh)
    this.table.withdraw(fh, -1)
    for (const w of had) giveBack(w.bytes)
  }

  closeAll(): void {
    for (const fh of [...this.lent.keys()]) this.close(fh)
  }

  private end(fh: number, w: Window): void {
    this.table.withdraw(fh, w.start)
    giveBack(w.bytes)
  }

  /** Windows lent now. */
  get size(): number {
    let n = 0
    for (const ws of this.lent.values()) n += ws.length
    return n
  }

  /** Reads the FUSE threads answered from windows since the mount. */
  get reads(): number {
    return this.table.reads()
  }
}
