// `transferfs login --email E [--password-stdin]`: signs in and keeps the session in the
// token file (0600). The password comes from stdin, or a hidden prompt on a terminal;
// never from a flag (it would show in `ps` and the shell history).
import type { Command } from 'commander'
import { loadSettings } from '../config/index.js'
import { addSettingFlags, CONNECTION_KEYS, createClient } from './compose.js'
import { readStdinValue } from './output/command.js'
import { createOwnerOnly } from '../config/owner-only.js'

interface LoginOptions extends Record<string, unknown> {
  email: string
  passwordStdin?: boolean
}

/** Reads a line from the terminal without echoing it. */
export function promptHidden(question: string): Promise<string> {
  const input = process.stdin
  const output = process.stderr
  return new Promise((resolve, reject) => {
    output.write(question)
    input.setRawMode?.(true)
    input.resume()
    input.setEncoding('utf8')
    let answer = ''
    const finish = (err?: Error) => {
      input.setRawMode?.(false)
      input.pause()
      input.off('data', onData)
      output.write('\n')
      if (err) reject(err)
      else resolve(answer)
    }
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') return finish()
        if (ch === '\u0003') return finish(new Error('cancelled'))
        if (ch === '\u007f' || ch === '\b') answer = answer.slice(0, -1)
        else answer += ch
      }
    }
    input.on('data', onData)
  })
}

export function register(program: Command): void {
  const cmd = program
    .command('login')
    .description('Sign in to the Transfer Service and keep the session for the mount and the commands')
    .requiredOption('--email <address>', 'the account\'s e-mail address')
    .option('--password-stdin', 'read the password from standard input')
  addSettingFlags(cmd, CONNECTION_KEYS).action(async (opts: LoginOptions) => {
    createOwnerOnly()
    let password: string
    if (opts.passwordStdin) password = await readStdinValue()
    else if (process.stdin.isTTY) password = await promptHidden(`Password for ${opts.email}: `)
    else throw new Error('no terminal to ask for the password on: use --password-stdin')
    if (!password) throw new Error('an empty password')
    const settings = await loadSettings(opts)
    const client = await createClient(settings)
    try {
      await client.auth.login(opts.email, password)
    } finally {
      await client.close()
    }
    process.stdout.write(`signed in as ${opts.email}\n`)
  })
}
