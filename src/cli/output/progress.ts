// A progress bar on stderr, only on a terminal (cli-progress); elsewhere (pipes, CI,
// tests, --json) nothing, so logs stay clean. Labels and lines name files a sender named:
// each is written as plain text (base/shown-text.ts), so none can move the cursor.
import cliProgress from 'cli-progress'
import { formatBytes } from '../../base/format-bytes.js'
import { plainText } from '../../base/shown-text.js'

export interface Progress {
  /** Total bytes expected (may grow as work is discovered). */
  setTotal(total: number): void
  /** Bytes done so far, and what is being worked on. */
  update(done: number, label?: string): void
  /** Removes the bar; `message` then printed on its own line, when given. */
  stop(message?: string): void
  /** A line printed above the bar without tearing it. */
  log(line: string): void
}

const silent = (stream: NodeJS.WriteStream, quiet: boolean): Progress => ({
  setTotal() {},
  update() {},
  stop(message) {
    if (message && !quiet) stream.write(`${message}\n`)
  },
  log(line) {
    if (!quiet) stream.write(`${line}\n`)
  },
})

export function startProgress(opts: { title: string; total: number; quiet?: boolean; stream?: NodeJS.WriteStream }): Progress {
  const stream = opts.stream ?? process.stderr
  return shownAsText(stream.isTTY && !opts.quiet ? progressBar(stream, opts.title, opts.total) : silent(stream, opts.quiet ?? false))
}

/** `p` with every label, line and message it is given written as plain text. */
function shownAsText(p: Progress): Progress {
  return {
    setTotal: (total) => p.setTotal(total),
    update: (done, label) => p.update(done, label === undefined ? undefined : plainText(label)),
    stop: (message) => p.stop(message === undefined ? undefined : plainText(message)),
    log: (line) => p.log(plainText(line)),
  }
}

function progressBar(stream: NodeJS.WriteStream, title: string, initialTotal: number): Progress {
  const bar = new cliProgress.SingleBar(
    {
      stream,
      format: `${title} [{bar}] {percentage}% | {done} of {size} | {speed} | ETA {eta_formatted} | {label}`,
      barsize: 24,
      hideCursor: true,
      clearOnComplete: true,
      etaBuffer: 50,
      fps: 5,
    },
    cliProgress.Presets.shades_classic,
  )
  const started = Date.now()
  let total = initialTotal
  const payload = (done: number, label: string) => {
    const seconds = Math.max(0.001, (Date.now() - started) / 1000)
    return { done: formatBytes(done), size: formatBytes(total), speed: `${formatBytes(Math.round(done / seconds))}/s`, label }
  }
  let label = ''
  bar.start(Math.max(1, total), 0, payload(0, label))
  return {
    setTotal(t) {
      total = t
      bar.setTotal(Math.max(1, t))
    },
    update(done, l) {
      if (l !== undefined) label = l
      bar.update(done, payload(done, label))
    },
    stop(message) {
      bar.stop()
      if (message) stream.write(`${message}\n`)
    },
    log(line) {
      // cli-progress redraws on the next update; clear the line first so the text stays whole.
      stream.write(`\r\u001b[K${line}\n`)
    },
  }
}
