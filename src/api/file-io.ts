// Writing bytes that arrived in parts (network buffers, kept as they came) to a file at a
// position, all of them: writev takes at most IOV_MAX buffers at once, and a short write
// (a signal, a full disk's last bytes) goes on where it stopped.
import type { FileHandle } from 'node:fs/promises'

/** Buffers one writev may take (Linux's IOV_MAX). */
const IOV_MAX = 1024

export async function writeParts(fh: FileHandle, parts: readonly Buffer[], position: number): Promise<void> {
  for (let i = 0; i < parts.length; i += IOV_MAX) {
    const batch = parts.slice(i, i + IOV_MAX)
    let { bytesWritten } = await fh.writev(batch as Buffer[], position)
    position += bytesWritten
    for (const b of batch) {
      if (bytesWritten >= b.length) {
        bytesWritten -= b.length
        continue
      }
      let done = bytesWritten
      while (done < b.length) {
        const r = await fh.write(b, done, b.length - done, position)
        done += r.bytesWritten
        position += r.bytesWritten
      }
      bytesWritten = 0
    }
  }
}
