// A response body read as batches: every chunk that has arrived since the reader last
// looked, as one array. Iterating a body chunk by chunk cost an await (and the promises of
// each layer that passes the chunk on) per 16 KiB TLS record, 65,536 of them per GiB. The
// reader is woken once per turn of the event loop (setImmediate): woken at each chunk, it
// would run between the chunks of one socket read and take them one by one again. The body is paused while a
// batch nobody has taken holds `highWaterBytes`, so a slow reader still slows the sender.
import { finished, type Readable } from 'node:stream'

export async function* bodyBatches(body: Readable, highWaterBytes: number): AsyncGenerator<Buffer[]> {
  let batch: Buffer[] = []
  let bytes = 0
  let ended = false
  let failure: unknown = null
  let wake: (() => void) | null = null
  let waking: NodeJS.Immediate | null = null
  const wakeSoon = (): void => {
    if (wake && !waking) waking = setImmediate(() => { waking = null; wake?.() })
  }
  const onData = (chunk: Buffer): void => {
    batch.push(chunk)
    bytes += chunk.length
    if (bytes >= highWaterBytes) body.pause()
    wakeSoon()
  }
  body.on('data', onData)
  const stopWatching = finished(body, { writable: false }, (err) => {
    if (err) failure = err
    else ended = true
    wake?.()
  })
  try {
    for (;;) {
      if (batch.length > 0) {
        const out = batch
        batch = []
        bytes = 0
        if (body.isPaused() && !ended && failure === null) body.resume()
        yield out
        continue
      }
      if (failure !== null) throw failure
      if (ended) return
      await new Promise<void>((resolve) => (wake = resolve))
      wake = null
    }
  } finally {
    if (waking) clearImmediate(waking)
    body.off('data', onData)
    stopWatching()
  }
}
