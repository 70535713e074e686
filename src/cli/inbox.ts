// `transferfs inbox [--search S] [--since DATE] [--include-expired]`: the transfers this
// account received, newest first, as a table (or --json). `--watch` prints each transfer
// that arrives from then on, one line each (or one JSON object per line), asking every
// interval only for what was sent after the newest one seen.
import type { Command } from 'commander'
import type { Transfer } from '../api/types.js'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseDuration } from '../config/settings.js'
import { DEFAULT_ARRIVAL_OPTIONS } from '../vfs/arrivals.js'
import { transferFolderName } from '../vfs/names.js'
import { transferState } from './info.js'
import { commonFlags, ctrlC, terminalWidth, withClient, type CommonOptions } from './output/command.js'
import { action, messageOf } from './output/errors.js'
import { UsageError } from './output/exit-codes.js'
import { formatBytes } from '../base/format-bytes.js'
import { plainText } from '../base/shown-text.js'
import { formatDate, parseSince } from './output/format.js'
import { publicTransfer, writeJson } from './output/json.js'
import { styleFor } from './output/style.js'
import { renderTable } from './output/table.js'

interface InboxOptions extends CommonOptions {
  search?: string
  since?: string
  includeExpired?: boolean
  limit?: string
  watch?: boolean
  interval?: string
}

/** ms: how often `--watch` asks by default: the mount's own interval while someone looks at the inbox. */
const WATCH_INTERVAL_MS = DEFAULT_ARRIVAL_OPTIONS.watchedIntervalMs
/** Transfers one page of an ask holds: arrivals between two asks are few. */
const WATCH_TAKE = DEFAULT_ARRIVAL_OPTIONS.take

/**
 * One arrival as a line: date, sender, subject, files and size, and its folder under the
 * mount's inbox/. The sender wrote most of it: the line is plain text, so it stays one line.
 */
function arrivalLine(t: Transfer): string {
  const files = t.numberoffiles ?? t.files?.length ?? 0
  return plainText([formatDate(t.sentdate), t.from ?? '(anonymous)', t.subject || '(no subject)',
    `${files} file${files === 1 ? '' : 's'}, ${formatBytes(t.size)}`, `inbox/${transferFolderName(t.sentdate, t.subject, t.id)}`].join('  '))
}

async function watchInbox(opts: InboxOptions): Promise<void> {
  const interval = opts.interval === undefined ? WATCH_INTERVAL_MS : parseDuration(opts.interval)
  if (interval === null || interval < 1) throw new UsageError('--interval takes a duration such as 10s')
  const stop = ctrlC()
  try {
    await withClient(opts, true, async ({ client }) => {
      // What is there now is not an arrival: the newest transfer is where watching starts.
      const first = await client.transfers.inbox({ take: 1, signal: stop.signal })
      let newest = first.transfers?.[0]?.sentdate ?? 0
      process.stderr.write('watching the inbox for new transfers (Ctrl-C ends)\n')
      for (;;) {
        await sleep(interval, undefined, { signal: stop.signal })
        const found: Transfer[] = []
        try {
          // Usually one short page; a full one is followed by the next, so none is skipped.
          for await (const t of client.transfers.inboxAll({ from: newest, take: WATCH_TAKE, signal: stop.signal })) {
            if (t.status === 'STATUS_COMPLETE') found.push(t)
          }
        } catch (err) {
          if (stop.signal.aborted) throw err
          process.stderr.write(`transferfs: ${plainText(messageOf(err))}; trying again\n`)
          continue
        }
        found.sort((a, b) => a.sentdate - b.sentdate)
        for (const t of found) {
          process.stdout.write(opts.json ? `${JSON.stringify({ ...publicTransfer(t), folder: `inbox/${transferFolderName(t.sentdate, t.subject, t.id)}` })}\n` : `${arrivalLine(t)}\n`)
          newest = Math.max(newest, t.sentdate)
        }
      }
    })
  } catch (err) {
    if (stop.signal.aborted) return
    throw err
  } finally {
    stop.dispose()
  }
}

export function register(program: Command): void {
  const cmd = program
    .command('inbox')
    .description('List the transfers you received, newest first')
    .option('--search <text>', 'only transfers whose id, subject, message, sender, recipients or custom fields contain this')
    .option('--since <date>', 'only transfers received after this: 2026-01-31, 2026-01-31T08:00, or an age such as 7d, 12h')
    .option('--include-expired', 'also list expired transfers')
    .option('--limit <n>', 'at most this many transfers')
    .option('--watch', 'print each transfer that arrives from now on, one line each (--json: one object per line), until Ctrl-C')
    .option('--interval <duration>', 'with --watch: how often to ask (default 8s)')
  commonFlags(cmd, {
    examples: [
      'transferfs inbox',
      'transferfs inbox --since 7d --search invoice',
      'transferfs inbox --include-expired --json | jq -r \'.[].id\'',
      'transferfs inbox --watch --json | jq -r .subject',
    ],
  }).action(action(async (opts: InboxOptions) => {
    if (opts.watch) return watchInbox(opts)
    const from = opts.since !== undefined ? parseSince(opts.since) : undefined
    let limit = Infinity
    if (opts.limit !== undefined) {
      limit = Number(opts.limit)
      if (!Number.isInteger(limit) || limit < 1) throw new UsageError('--limit takes a whole number above 0')
    }
    const transfers = await withClient(opts, true, async ({ client }) => {
      const out: Transfer[] = []
      for await (const t of client.transfers.inboxAll({ from, search: opts.search, includeExpired: opts.includeExpired ?? false })) {
        out.push(t)
        if (out.length >= limit) break
      }
      return out
    })
    if (opts.json) {
      // The listing's fields, without keys.
      writeJson(transfers.map(publicTransfer))
      return
    }
    if (!transfers.length) {
      process.stderr.write(`no transfers${opts.search || opts.since ? ' match' : ' received yet'}\n`)
      return
    }
    const style = styleFor(process.stdout)
    process.stdout.write(renderTable<Transfer>([
      { header: 'RECEIVED', value: (t) => formatDate(t.sentdate) },
      { header: 'SUBJECT', value: (t) => t.subject || '(no subject)', shrink: true },
      { header: 'FROM', value: (t) => t.from ?? '(anonymous)', shrink: true },
      { header: 'FILES', value: (t) => String(t.numberoffiles ?? t.files?.length ?? 0), align: 'right' },
      { header: 'SIZE', value: (t) => formatBytes(t.size), align: 'right' },
      { header: 'STATE', value: (t) => transferState(t), color: (text, t) => (t.isexpired ? style.dim(text) : text) },
      { header: 'ID', value: (t) => t.id },
    ], transfers, style, terminalWidth()))
  }))
}
