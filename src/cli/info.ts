// `transferfs info <id|trackid|folder>`: a transfer's details and its download tracking
// (who downloaded which file, when, from where, how fast); `--files` adds each file with
// its own tracking. The argument may also be a folder of a mount: a transfer's folder
// (its name ends in "(<id>)") or anything inside one, or a folder holding .transfer.json.
import type { Command } from 'commander'
import { readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import type { TransferClient } from '../api/client.js'
import { ServiceError } from '../api/errors.js'
import { isServiceNotFound } from '../api/failure.js'
import type { Download, Transfer } from '../api/types.js'
import { TRANSFER_JSON } from '../vfs/transfer-tree.js'
import { commonFlags, readStdinValue, terminalWidth, withClient, type CommonOptions } from './output/command.js'
import { action } from './output/errors.js'
import { CliError, EXIT, UsageError } from './output/exit-codes.js'
import { formatBytes } from '../base/format-bytes.js'
import { plainText } from '../base/shown-text.js'
import { formatDate, formatSpeed } from './output/format.js'
import { publicTransfer, writeJson } from './output/json.js'
import { styleFor, type Style } from './output/style.js'
import { renderFields, renderTable, type Column } from './output/table.js'

/** How the service is asked for a transfer. */
export type TransferRef = { id: string; trackid?: undefined } | { trackid: string; id?: undefined } | { either: string; id?: undefined; trackid?: undefined }

const FOLDER_ID = /\(([^()/]+)\)$/

async function isDirectory(p: string): Promise<boolean | null> {
  try {
    return (await stat(p)).isDirectory()
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return null
    throw new CliError(`${p}: ${(err as Error).message}`, EXIT.error,
      code === 'ENOTCONN' ? 'the mount is stale (its process ended): `transferfs unmount` it, or `fusermount -uz` it, then mount again' : null)
  }
}

async function refOfTransferJson(file: string): Promise<TransferRef | null> {
  try {
    const json = JSON.parse(await readFile(file, 'utf8')) as { id?: unknown; trackid?: unknown }
    if (typeof json.id === 'string' && json.id) return { id: json.id }
    if (typeof json.trackid === 'string' && json.trackid) return { trackid: json.trackid }
  } catch {
    // Not a transfer's file after all.
  }
  return null
}

/**
 * The transfer an argument names. A path that exists is a folder: its own .transfer.json,
 * else the nearest folder upwards whose name ends in "(<id>)". Anything else is an id or
 * a trackid (which one is found out by asking).
 */
export async function resolveTransferRef(arg: string): Promise<TransferRef> {
  const text = arg.trim()
  if (!text) throw new UsageError('an empty transfer id')
  const kind = await isDirectory(text)
  if (kind === null) {
    if (text.includes('/') || text === '.' || text === '..') throw new UsageError(`${text}: no such folder`)
    return { either: text }
  }
  let dir = path.resolve(text)
  if (!kind) dir = path.dirname(dir)
  const fromJson = await refOfTransferJson(path.join(dir, TRANSFER_JSON))
  if (fromJson) return fromJson
  for (let d = dir; ; d = path.dirname(d)) {
    const m = FOLDER_ID.exec(path.basename(d))
    if (m) return { id: m[1]! }
    if (path.dirname(d) === d) break
  }
  throw new UsageError(`${text} is not a transfer's folder`, 'give a transfer id, or a folder of a mount whose name ends in "(<id>)"')
}

/** The transfer's details with every file; an unknown id is tried as a trackid before giving up. */
export async function fetchTransfer(client: TransferClient, ref: TransferRef, password?: string): Promise<Transfer> {
  const query = { filesLimit: -1, password }
  try {
    if (ref.trackid !== undefined) return await client.transfers.details(null, { ...query, trackId: ref.trackid })
    if (ref.id !== undefined) return await client.transfers.details(ref.id, query)
    try {
      return await client.transfers.details(ref.either, query)
    } catch (err) {
      if (!isServiceNotFound(err)) throw err
      try {
        return await client.transfers.details(null, { ...query, trackId: ref.either })
      } catch (second) {
        throw isServiceNotFound(second) ? new CliError(`no transfer with the id or trackid ${ref.either}`, EXIT.notFound,
          'check the id; `transferfs inbox` lists the transfers you received') : second
      }
    }
  } catch (err) {
    if (err instanceof ServiceError && (err.responsestatus === 'PasswordRequired' || err.responsestatus === 'AccessDenied') && password === undefined) {
      throw new CliError('this transfer is password protected', EXIT.auth, 'give its password with --password-stdin (or --password)')
    }
    if (err instanceof ServiceError && err.responsestatus === 'AccessDenied') {
      throw new CliError('wrong password for this transfer', EXIT.auth, 'check the password (after 5 wrong ones the service asks for a captcha on its web page)')
    }
    throw err
  }
}

export interface PasswordOptions {
  password?: string
  passwordStdin?: boolean
}

/** The transfer password from --password or stdin (stdin keeps it out of `ps` and the shell history). */
export async function transferPassword(opts: PasswordOptions): Promise<string | undefined> {
  if (opts.password !== undefined && opts.passwordStdin) throw new UsageError('give --password or --password-stdin, not both')
  if (opts.passwordStdin) return readStdinValue()
  return opts.password
}

export function addPasswordFlags(cmd: Command): Command {
  return cmd
    .option('--password <password>', 'password of a protected transfer (readable in `ps` until transferfs starts and hides it; prefer --password-stdin)')
    .option('--password-stdin', 'read the password of a protected transfer from standard input')
}

// ---- presentation ----------------------------------------------------------------------

const STATUS_WORDS: Record<string, string> = {
  STATUS_STARTED: 'being uploaded', STATUS_COMPLETE: 'complete', STATUS_CANCELLED: 'cancelled', STATUS_DELETED: 'deleted',
}

export function transferState(t: Transfer): string {
  const base = STATUS_WORDS[t.status] ?? t.status
  return t.isexpired ? `${base}, expired` : base
}

function expiry(t: Transfer): string {
  if (t.permanent) return 'never (permanent)'
  const when = Math.max(t.expiredate ?? 0, t.extendedexpiredate ?? 0)
  return `${formatDate(when)}${t.isexpired ? ' (expired)' : ''}`
}

function downloadColumns(withFile: boolean): Column<Download>[] {
  const cols: Column<Download>[] = [
    { header: 'WHEN', value: (d) => formatDate(d.downloaddate) },
    { header: 'WHO', value: (d) => d.email || '(anonymous)', shrink: true },
  ]
  if (withFile) cols.push({ header: 'WHAT', value: (d) => (d.downloadtype === 'EntireTransfer' ? '(whole transfer, ZIP)' : d.filename ?? '-'), shrink: true })
  cols.push(
    { header: 'SIZE', value: (d) => formatBytes(d.filesize), align: 'right' },
    { header: 'FROM', value: (d) => [d.location, d.ip].filter(Boolean).join(' ') || '-', shrink: true },
    { header: 'SPEED', value: (d) => formatSpeed(d.kBps), align: 'right' },
  )
  return cols
}

export function renderInfo(t: Transfer, opts: { files: boolean; style: Style; width?: number }): string {
  const { style } = opts
  const fields: Array<[string, string]> = [
    ['ID', t.id],
    ['Subject', t.subject || '(no subject)'],
    ['From', t.from ?? '(anonymous)'],
    ['Sent', formatDate(t.sentdate)],
    ['Expires', expiry(t)],
    ['Status', transferState(t)],
    ['Files', `${t.numberoffiles ?? t.files?.length ?? 0} (${formatBytes(t.size)})`],
    ['Downloads', String(t.numberofdownloads ?? 0)],
    ['Password', t.passwordprotected ? 'yes' : 'no'],
    ['Link', t.url || '-'],
  ]
  if (t.message) fields.push(['Message', t.message])
  if (t.recipients?.length) {
    fields.push(['Recipients', t.recipients.map((r) => `${r.email ?? '?'}${r.delivered ? '' : ` (not delivered${r.deliveryerror ? ': ' + r.deliveryerror : ''})`}`).join(', ')])
  }
  let out = renderFields(fields, style)
  const downloads = [...(t.downloads ?? [])].sort((a, b) => a.downloaddate - b.downloaddate)
  out += `\n${style.bold(`Download tracking (${downloads.length})`)}\n`
  if (downloads.length) out += renderTable(downloadColumns(true), downloads, style, opts.width)
  // Only the sender's view carries the key; others never see tracking (docs/design.md, Visibility).
  else out += t.key == null ? "shown to the transfer's sender only\n" : 'no downloads yet\n'
  if (opts.files) {
    const files = t.files ?? []
    out += `\n${style.bold(`Files (${files.length})`)}\n`
    out += renderTable<(typeof files)[number]>([
      { header: 'NAME', value: (f) => f.filename ?? '(unnamed)', shrink: true },
      { header: 'SIZE', value: (f) => formatBytes(f.filesize), align: 'right' },
      { header: 'DOWNLOADS', value: (f) => String(f.downloads?.length ?? 0), align: 'right' },
      { header: 'MD5', value: (f) => f.md5 ?? '-' },
    ], files, style, opts.width)
    for (const f of files) {
      if (!f.downloads?.length) continue
      // A heading of the sender's file name: plain text, as the tables' cells.
      out += `\n${style.bold(plainText(f.filename ?? '(unnamed)'))}\n`
      out += renderTable(downloadColumns(false), [...f.downloads].sort((a, b) => a.downloaddate - b.downloaddate), style, opts.width)
    }
  }
  return out
}

interface InfoOptions extends CommonOptions, PasswordOptions {
  files?: boolean
}

export function register(program: Command): void {
  const cmd = program
    .command('info')
    .description("A transfer's details and download tracking (who downloaded which file, when, from where, how fast)")
    .argument('<transfer>', 'a transfer id, a recipient\'s trackid, or a transfer\'s folder in a mount')
    .option('--files', 'also list every file with its own download tracking')
  addPasswordFlags(cmd)
  commonFlags(cmd, {
    examples: [
      'transferfs info 7f3a9c2e1b',
      'transferfs info 7f3a9c2e1b --files',
      'transferfs info ~/Transfers/inbox/"2026-01-31 Photos (7f3a9c2e1b)"',
      'transferfs info 7f3a9c2e1b --json | jq \'.downloads[] | {email, filename}\'',
      'echo "$PASSWORD" | transferfs info 7f3a9c2e1b --password-stdin',
    ],
  }).action(action(async (arg: string, opts: InfoOptions) => {
    const ref = await resolveTransferRef(arg)
    const password = await transferPassword(opts)
    const transfer = await withClient(opts, false, ({ client }) => fetchTransfer(client, ref, password))
    if (opts.json) writeJson(publicTransfer(transfer))
    else process.stdout.write(renderInfo(transfer, { files: opts.files ?? false, style: styleFor(process.stdout), width: terminalWidth() }))
  }))
}
