// `transferfs logout [--all-devices]`: ends the session at the service and forgets it here.
import type { Command } from 'commander'
import { loadSettings } from '../config/index.js'
import { addSettingFlags, CONNECTION_KEYS, createClient } from './compose.js'
import { createOwnerOnly } from '../config/owner-only.js'

interface LogoutOptions extends Record<string, unknown> {
  allDevices?: boolean
}

export function register(program: Command): void {
  const cmd = program
    .command('logout')
    .description('Sign out (this device, or every device of the account) and forget the session')
    .option('--all-devices', 'end the sessions of every device of the account')
  addSettingFlags(cmd, CONNECTION_KEYS).action(async (opts: LogoutOptions) => {
    createOwnerOnly()
    const settings = await loadSettings(opts)
    const client = await createClient(settings)
    try {
      const email = await client.auth.email()
      if (!(await client.auth.isSignedIn())) {
        process.stdout.write('not signed in\n')
        return
      }
      await client.auth.logout({ allDevices: opts.allDevices ?? false })
      process.stdout.write(`signed out${email ? ' ' + email : ''}${opts.allDevices ? ' on every device' : ''}\n`)
    } finally {
      await client.close()
    }
  })
}
