// Tasks that only make sense together (the chunks of one file, the files of one
// download): each runs on a shared queue; the first failure aborts the others through
// the signal each is given, and once every task has settled (none still writing to a
// file the caller is about to close) that first failure is what the caller gets.
import type PQueue from 'p-queue'

export async function allOrFirstFailure<T>(
  queue: PQueue,
  tasks: ReadonlyArray<(signal: AbortSignal) => Promise<T>>,
  outer?: AbortSignal,
): Promise<T[]> {
  const stop = new AbortController()
  const signal = outer ? AbortSignal.any([outer, stop.signal]) : stop.signal
  const results = await Promise.allSettled(tasks.map((task) => queue.add(async () => {
    signal.throwIfAborted()
    return task(signal)
  }).catch((err: unknown) => {
    if (!stop.signal.aborted) stop.abort(err)
    throw err
  })))
  // Stopped from outside (Ctrl-C, the caller's abort): that, not the aborts it caused.
  outer?.throwIfAborted()
  if (stop.signal.aborted) throw stop.signal.reason
  return results.map((r) => (r as PromiseFulfilledResult<T>).value)
}
