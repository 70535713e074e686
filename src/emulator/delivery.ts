// Writing a response body with the faults and throttle applied for real: a reset destroys the
// socket after some bytes went out, corrupt flips a byte that is actually sent, the throttle paces writes.
import type { ServerResponse } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FaultSpec } from './faults.js'
import type { Link } from './link.js'
import { SETTINGS } from './settings.js'

export interface DeliveryOptions {
  /** Body length announced in the headers, bytes. */
  length: number
  fault: FaultSpec | null
  /** The shared link every throttled body goes through (see Link). */
  link?: Link
  onBytes?: (n: number) => void
  /** Called as the last byte is handed to the socket, before any wait for it to drain: a client that
   * has read it may ask about it (tracking) at once. */
  onDelivered?: () => void
}

function waitDrainOrClose(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done)
      res.off('close', done)
      resolve()
    }
    res.on('drain', done)
    res.on('close', done)
  })
}

function writeFlushed(res: ServerResponse, data: Buffer): Promise<void> {
  return new Promise((resolve) => {
    if (data.length === 0) return resolve()
    res.write(data, () => resolve())
  })
}

/** Writes the body; true when every byte was handed to the socket. */
export async function deliver(res: ServerResponse, source: AsyncIterable<Buffer>, opts: DeliveryOptions): Promise<boolean> {
  const { fault, link, onBytes } = opts
  const resetAt = fault?.kind === 'reset' ? (fault.afterBytes ?? Math.floor(opts.length / 2)) : Infinity
  const corruptAt = fault?.kind === 'corrupt' ? Math.floor(opts.length / 2) : -1
  const sliced = link !== undefined || resetAt !== Infinity
  let sent = 0
  const cut = () => {
    res.destroy()
    res.socket?.destroy()
  }
  if (resetAt <= 0) {
    res.flushHeaders()
    await sleep(10)
    cut()
    return false
  }
  for await (const chunk of source) {
    const step = sliced ? SETTINGS.bodySliceBytes : chunk.length || 1
    for (let off = 0; off < chunk.length; off += step) {
      if (res.destroyed) return false
      let piece = chunk.subarray(off, off + step)
      if (corruptAt >= sent && corruptAt < sent + piece.length) {
        piece = Buffer.from(piece)
        piece[corruptAt - sent] = piece[corruptAt - sent]! ^ 0xff
      }
      if (sent + piece.length >= resetAt) {
        const part = piece.subarray(0, resetAt - sent)
        await writeFlushed(res, part)
        onBytes?.(part.length)
        await sleep(10)
        cut()
        return false
      }
      if (link) {
        // The bytes arrive once the shared link has carried them.
        await sleep(link.take(piece.length))
        if (res.destroyed) return false
      }
      sent += piece.length
      onBytes?.(piece.length)
      const flowing = res.write(piece)
      if (sent === opts.length) opts.onDelivered?.()
      if (!flowing) await waitDrainOrClose(res)
    }
  }
  if (res.destroyed) return false
  if (opts.length === 0) opts.onDelivered?.()
  res.end()
  return true
}

async function* once(buf: Buffer): AsyncGenerator<Buffer> {
  yield buf
}

/** A small body (JSON, text) through the same faults. */
export function deliverBuffer(res: ServerResponse, body: Buffer, fault: FaultSpec | null): Promise<boolean> {
  return deliver(res, once(body), { length: body.length, fault })
}
