// `transferfs forward <transfer id or sent folder> <address|group>...`: adds recipients
// to a transfer sent from here; each gets an e-mail with a download link. The same as
// writing the addresses to the folder's `.forward` in the mount.
import type { Command } from 'commander'
import path from 'node:path'
import { loadSettings } from '../config/index.js'
import { addSettingFlags, CONNECTION_KEYS, createClient } from './compose.js'

/** The transfer id a folder name of the mount ends with ("2026-11-22 holiday.jpg (d4e5f6)"), or the argument itself. */
export function transferIdOf(arg: string): string {
  const name = path.basename(arg.replace(/\/+$/, ''))
  const m = /\(([^()\s]+)\)$/.exec(name)
  return m ? (m[1] as string) : name
}

export function register(program: Command): void {
  const cmd = program
    .command('forward')
    .description('Forward a sent transfer to more recipients (e-mail addresses or contact group names)')
    .argument('<transfer>', 'the transfer id, or its folder under sent/ (or inbox/, by-id/)')
    .argument('<recipients...>', 'e-mail addresses or contact group names')
  addSettingFlags(cmd, CONNECTION_KEYS).action(async (transfer: string, recipients: string[], opts: Record<string, unknown>) => {
    const settings = await loadSettings(opts)
    const client = await createClient(settings)
    try {
      const id = transferIdOf(transfer)
      const to = recipients.flatMap((r) => r.split(',')).map((r) => r.trim()).filter((r) => r !== '')
      const t = await client.transfers.forward(id, to)
      process.stdout.write(`forwarded transfer ${t.id} to ${to.join(', ')}\n`)
    } finally {
      await client.close()
    }
  })
}
