// `transferfs inbox [--search S] [--since DATE] [--include-expired]`: the transfers this
// account received, newest first, as a table (or --json).
import type { Command } from 'commander'
import type { Transfer } from '../api/types.js'
import { transferState } from './info.js'
import { commonFlags, terminalWidth, withClient, type CommonOptions } from './output/command.js'
import { action } from './output/errors.js'
import { UsageError } from './output/exit-codes.js'
import { formatBytes, formatDate, parseSince } from './output/format.js'
import { publicTransfer, writeJson } from './output/json.js'
import { styleFor } from './output/style.js'
import { renderTable } from './output/table.js'

interface InboxOptions extends CommonOptions {
  search?: string
  since?: string
  includeExpired?: boolean
  limit?: string
}

export function register(program: Command): void {
  const cmd = program
    .command('inbox')
    .description('List the transfers you received, newest first')
    .option('--search <text>', 'only transfers whose id, subject, message, sender, recipients or custom fields contain this')
    .option('--since <date>', 'only transfers received after this: 2026-01-31, 2026-01-31T08:00, or an age such as 7d, 12h')
    .option('--include-expired', 'also list expired transfers')
    .option('--limit <n>', 'at most this many transfers')
  commonFlags(cmd, {
    examples: [
      'transferfs inbox',
      'transferfs inbox --since 7d --search invoice',
      'transferfs inbox --include-expired --json | jq -r \'.[].id\'',
    ],
  }).action(action(async (opts: InboxOptions) => {
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
