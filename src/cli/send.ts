// `transferfs send <path>... [--to ADDR]...`: a transfer from files and folders without a
// mount, through the outbox's upload engine (src/send/service-sender.ts: chunks with
// their MD5, 406/449/5xx retried, at most 4 in flight) and the steps the outbox's send
// takes too (src/send/transfer-steps.ts), recorded in the sent log so a mount lists it
// under sent/. Prints the transfer's link.
import type { Command } from 'commander'
import { lstat } from 'node:fs/promises'
import path from 'node:path'
import type { Transfer } from '../api/types.js'
import { SENT_FILE } from '../send/open-outbox.js'
import { DEFAULT_SEND_OPTIONS, resolveSendOptions } from '../send/options.js'
import { chunkCount } from '../api/chunk-plan.js'
import { spanLength } from '../base/chunk-grid.js'
import { newTransferRequest, splitRecipients } from '../send/rules.js'
import { sendTransfer } from '../send/transfer-steps.js'
import { FileSentLog, sentRecordOf } from '../send/sent-log.js'
import { localReaders } from '../send/sent-access.js'
import { ServiceSender } from '../send/service-sender.js'
import { md5OfFile } from '../base/file-hash-pool.js'
import { takeSnapshot } from '../send/snapshot.js'
import { sendOptionsOf } from './compose.js'
import { commonFlags, ctrlC, withClient, type CommonOptions } from './output/command.js'
import { action, hintFor } from './output/errors.js'
import { CliError, exitCodeOf, UsageError } from './output/exit-codes.js'
import { formatBytes } from '../base/format-bytes.js'
import { plainText } from '../base/shown-text.js'
import { writeJson } from './output/json.js'
import { startProgress } from './output/progress.js'
import { createOwnerOnly } from '../config/owner-only.js'

export interface FileToSend {
  /** Name in the transfer ("a.txt", "photos/b.jpg"). */
  name: string
  path: string
  size: number
  md5: string
}

interface SendFlags extends CommonOptions {
  to: string[]
  subject?: string
  message?: string
  days?: string
  password?: string
  notify?: boolean
  confirmation?: boolean
}

/**
 * The files of the command line. One folder alone is sent like an outbox folder: its
 * files named relative to it, the folder's name as the subject. Otherwise a folder's
 * files keep the folder's name in front ("photos/b.jpg"). Temporary names and symbolic
 * links are left out, as in the outbox.
 */
export async function collectFiles(paths: readonly string[]): Promise<{ files: FileToSend[]; subject: string }> {
  const files: FileToSend[] = []
  const single = paths.length === 1
  for (const p of paths) {
    let st
    try {
      st = await lstat(p)
    } catch (err) {
      throw new UsageError(`${p}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or folder' : (err as Error).message}`)
    }
    const base = path.basename(path.resolve(p))
    if (st.isSymbolicLink()) throw new UsageError(`${p} is a symbolic link; give the file it points to`)
    if (st.isFile()) {
      files.push({ name: base, path: path.resolve(p), size: st.size, md5: await md5OfFile(p) })
      continue
    }
    if (!st.isDirectory()) throw new UsageError(`${p} is neither a file nor a folder`)
    const snap = await takeSnapshot(path.resolve(p), base)
    if (snap.kind !== 'content') continue
    await snap.hashed
    for (const f of snap.files) {
      files.push({ name: single ? f.name : `${base}/${f.name}`, path: path.join(path.resolve(p), f.rel), size: f.size, md5: f.md5 })
    }
  }
  if (!files.length) throw new UsageError('nothing to send: the folders given hold no files')
  const seen = new Set<string>()
  for (const f of files) {
    if (seen.has(f.name)) throw new UsageError(`two files would both be called ${JSON.stringify(f.name)} in the transfer; send them in separate folders`)
    seen.add(f.name)
  }
  const subject = single ? path.basename(path.resolve(paths[0]!)) : `${files.length} files`
  return { files, subject }
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, ...value.split(',').map((v) => v.trim()).filter(Boolean)]
}

export function register(program: Command): void {
  const cmd = program
    .command('send')
    .description('Send files and folders as a new transfer (no mount needed) and print its link')
    .argument('<path...>', 'files and folders to send')
    .option('--to <address>', 'a recipient: an e-mail address or a contact group (repeat, or separate with commas)', collect, [])
    .option('--subject <text>', 'the subject (default: the name of the file or folder)')
    .option('--message <text>', 'a message for the download page and the e-mails')
    .option('--days <n>', 'days until the transfer expires (-1 = permanent, where the account allows it)')
    .option('--password <password>', 'protect the transfer with this password')
    .option('--notify', 'e-mail me when the files are downloaded')
    .option('--no-notify', 'no e-mail when the files are downloaded')
    .option('--confirmation', 'e-mail me a confirmation once the transfer is complete')
    .option('--no-confirmation', 'no confirmation e-mail')
  commonFlags(cmd, {
    examples: [
      'transferfs send report.pdf --to alice@example.com',
      'transferfs send ./photos --subject "Holiday" --to alice@example.com,bob@example.org --days 14',
      'transferfs send a.txt b.txt --password "$SECRET" --notify',
      'transferfs send big.iso --json | jq -r .url',
    ],
  }).action(action(async (paths: string[], opts: SendFlags) => {
    // It writes into the data folder (the sent log); the files it reads are the user's.
    createOwnerOnly()
    const { files, subject: defaultSubject } = await collectFiles(paths)
    // Taken before the send, as the outbox takes them: sent/ shows each file to whom could read it here.
    const readers = await localReaders(files)
    // Flags win over TRANSFERFS_MESSAGE / _DAYS / _NOTIFY / ... and the config file, like every setting.
    await withClient(opts, true, async ({ client, loaded }) => {
      const subject = opts.subject ?? defaultSubject
      const { addresses, groups } = splitRecipients(opts.to)
      const total = files.reduce((n, f) => n + f.size, 0)
      const request = newTransferRequest(subject, total, addresses, resolveSendOptions(sendOptionsOf(loaded)))
      const chunkSize = DEFAULT_SEND_OPTIONS.uploadChunkSize
      const progress = startProgress({ title: 'send', total, quiet: opts.json })
      const interrupt = ctrlC()
      const sentLog = new FileSentLog(path.join(loaded.folders.data, SENT_FILE))
      const sender = new ServiceSender(client)
      // How far the send got: what an error says of the transfer, and what the output shows.
      const got: { transferid: string; transfer: Transfer | null } = { transferid: '', transfer: null }
      try {
        let sent = 0
        await sendTransfer({
          sender, signal: interrupt.signal, chunkSize, initialized: null, completedBefore: false, groups,
          initialize: async () => {
            const answer = await sender.initialize(request, interrupt.signal)
            got.transferid = answer.transferid
            return answer
          },
          uploads: () => files.map((f) => {
            const chunks = chunkCount(f.size, chunkSize)
            const label = `${f.name} (${chunks} chunk${chunks === 1 ? '' : 's'})`
            return {
              name: f.name, filePath: f.path, size: f.size, confirmed: new Set<number>(),
              onChunkConfirmed: (chunk: number) => {
                sent += spanLength(chunk, f.size, chunkSize)
                progress.update(sent, label)
              },
            }
          }),
        }, {
          // Recorded before the forward, so that a mount lists it under sent/ even when the forward fails.
          completed: async (t, done) => {
            got.transfer = done
            await sentLog.record(sentRecordOf(t, { subject, recipients: opts.to, files, sentAt: Date.now(), url: done.url ?? null, readers }))
            return true
          },
        })
      } catch (err) {
        progress.stop()
        const { transferid } = got
        if (transferid) {
          const what = got.transfer
            ? `transfer ${transferid} was sent, but not to ${groups.join(', ')}: \`transferfs forward ${transferid} ...\` tries again`
            : `transfer ${transferid} was left unfinished; recipients got nothing`
          throw new CliError(`${err instanceof Error ? err.message : String(err)} (${what})`,
            exitCodeOf(err), hintFor(err))
        }
        throw err
      } finally {
        interrupt.dispose()
      }
      const transfer = got.transfer
      if (!transfer) throw new Error('the send ended before Complete answered')
      if (opts.json) {
        writeJson({ transferid: transfer.id, url: transfer.url, subject, recipients: opts.to, size: total, files: files.map(({ name, size, md5 }) => ({ name, size, md5 })) })
        return
      }
      progress.stop(`sent ${files.length} file${files.length === 1 ? '' : 's'} (${formatBytes(total)}) as transfer ${transfer.id}` +
        (opts.to.length ? `; e-mailed to ${opts.to.join(', ')}` : ''))
      // The service's link, one line for scripts whatever it holds.
      process.stdout.write(`${plainText(transfer.url)}\n`)
    })
  }))
}
