// `transferfs forward <transfer id or sent folder> <address|group>...`: adds recipients
// to a transfer sent from here; each gets an e-mail with a download link. The same as
// writing the addresses to the folder's `.forward` in the mount.
import type { Command } from 'commander'
import { plainText } from '../base/shown-text.js'
import { resolveTransferRef } from './info.js'
import { commonFlags, withClient } from './output/command.js'
import { action } from './output/errors.js'

export function register(program: Command): void {
  const cmd = program
    .command('forward')
    .description('Forward a sent transfer to more recipients (e-mail addresses or contact group names)')
    .argument('<transfer>', 'the transfer id, or its folder under sent/ (or inbox/, by-id/)')
    .argument('<recipients...>', 'e-mail addresses or contact group names')
  commonFlags(cmd, {
    json: false,
    examples: [
      'transferfs forward 7f3a9c2e1b carol@example.com dave@example.com',
      'transferfs forward ~/Transfers/sent/"2026-01-31 Photos (7f3a9c2e1b)" Team',
    ],
  }).action(action(async (transfer: string, recipients: string[], opts: Record<string, unknown>) => {
    const ref = await resolveTransferRef(transfer)
    // Forward takes the transfer's id: a bare argument is one (a trackid names a recipient's copy).
    const id = ref.id ?? ('either' in ref ? ref.either : ref.trackid)
    const to = recipients.flatMap((r) => r.split(',')).map((r) => r.trim()).filter((r) => r !== '')
    const t = await withClient(opts, true, ({ client }) => client.transfers.forward(id, to))
    process.stdout.write(`${plainText(`forwarded transfer ${t.id} to ${to.join(', ')}`)}\n`)
  }))
}
