// What the service commands (info, download, send, inbox) share: the connection flags,
// --json, the exit-code conventions and a client built from the settings like the
// mount's (src/cli/compose.ts).
import type { Command } from 'commander'
import type { TransferClient } from '../../api/client.js'
import { NotSignedInError } from '../../api/errors.js'
import { loadSettings, type LoadedSettings, type SettingKey } from '../../config/index.js'
import { addSettingFlags, CONNECTION_KEYS, createClient, NOT_SIGNED_IN } from '../compose.js'
import { addExamples } from './examples.js'

export interface CommonOptions extends Record<string, unknown> {
  json?: boolean
}

/** --json, the settings flags of `keys` (the connection's by default), examples in --help. */
export function commonFlags(cmd: Command, opts: { examples: string[]; keys?: readonly SettingKey[]; json?: boolean }): Command {
  if (opts.json !== false) cmd.option('--json', 'print JSON for scripts (on stdout; messages stay on stderr)')
  addSettingFlags(cmd, opts.keys ?? CONNECTION_KEYS)
  return addExamples(cmd, opts.examples)
}

export interface Connected {
  client: TransferClient
  loaded: LoadedSettings
}

/**
 * A client for one command, closed by `use` returning. With `session`, a missing
 * session is an auth error before anything is asked of the service.
 */
export async function withClient<T>(opts: Record<string, unknown>, session: boolean, use: (c: Connected) => Promise<T>): Promise<T> {
  const loaded = await loadSettings(opts)
  const client = await createClient(loaded)
  try {
    if (session && !(await client.auth.isSignedIn())) throw new NotSignedInError(NOT_SIGNED_IN)
    return await use({ client, loaded })
  } finally {
    await client.close()
  }
}

/** Columns of the terminal, for tables; none (no shortening) when stdout is not one. */
export function terminalWidth(): number | undefined {
  return process.stdout.isTTY ? process.stdout.columns : undefined
}

/** A signal Ctrl-C aborts (with an AbortError: exit code 130, "interrupted"); dispose() stops listening. */
export function ctrlC(): { signal: AbortSignal; dispose(): void } {
  const c = new AbortController()
  const onSigint = (): void => c.abort(Object.assign(new Error('interrupted'), { name: 'AbortError' }))
  process.once('SIGINT', onSigint)
  return { signal: c.signal, dispose: () => process.off('SIGINT', onSigint) }
}

/** Standard input as one value (a password, a key), without its final newline. */
export async function readStdinValue(): Promise<string> {
  const parts: Buffer[] = []
  for await (const piece of process.stdin) parts.push(Buffer.isBuffer(piece) ? piece : Buffer.from(piece as string))
  return Buffer.concat(parts).toString('utf8').replace(/\r?\n$/, '')
}
