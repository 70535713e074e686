// File handles: small positive numbers, one per open(2). A number comes back into use
// only after the counter has gone all the way round, and never while it is still open,
// so a stale number from a closed handle is far more likely to be unknown (EBADF) than
// to land on someone else's file.
import { FsError } from './core.js'

const MAX_HANDLE = 0x7fffffff

export class HandleTable<T> {
  private readonly open = new Map<number, T>()
  private last = 0

  add(value: T): number {
    if (this.open.size >= MAX_HANDLE) throw new FsError('EBUSY', 'too many open files')
    do {
      this.last = this.last >= MAX_HANDLE ? 1 : this.last + 1
    } while (this.open.has(this.last))
    this.open.set(this.last, value)
    return this.last
  }

  get(fh: number): T {
    const value = this.open.get(fh)
    if (value === undefined) throw new FsError('EBADF')
    return value
  }

  /** The value of fh, or undefined when it is not open (get throws EBADF instead). */
  find(fh: number): T | undefined {
    return this.open.get(fh)
  }

  remove(fh: number): T {
    const value = this.get(fh)
    this.open.delete(fh)
    return value
  }

  values(): IterableIterator<T> {
    return this.open.values()
  }

  get size(): number {
    return this.open.size
  }
}
