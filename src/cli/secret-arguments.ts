// A secret given on the command line (--api-key KEY, --password PW, a --proxy URL with a
// password in it) can be read by every user of this computer for as long as the process
// runs: /proc/PID/cmdline is readable by all, and `ps` shows it. So the arguments the
// process shows are written again without it as soon as it starts (main.ts does it before
// it loads the rest of the program), with a warning saying where secrets go instead. The
// process keeps its own copy (process.argv), so the flag still works; a background mount's
// daemon is given it in its environment (compose.ts, settingEnv), never as an argument.
import { envName, flagName, holdsSecret, SETTINGS, type SettingSpec } from '../config/settings.js'

/** What a secret value shows instead, where its setting has no redaction of its own. */
const HIDDEN = '********'

export interface MaskedArguments {
  /** The arguments with each secret value replaced. */
  shown: string[]
  /** The settings whose values were replaced, each once, in the order found. */
  hidden: SettingSpec[]
}

/**
 * `args` with the value of each flag that holds a secret masked, given as `--flag VALUE`
 * or `--flag=VALUE`. What follows `--` is arguments, not flags: it stays as it is.
 */
export function maskSecretArguments(args: readonly string[]): MaskedArguments {
  const byFlag = new Map(SETTINGS.filter((s) => s.secret || s.holdsSecret).map((s) => [flagName(s.key), s]))
  const shown: string[] = []
  const hidden = new Set<SettingSpec>()
  const mask = (s: SettingSpec, value: string): string => {
    if (!holdsSecret(s, value)) return value
    hidden.add(s)
    return s.redact ? s.redact(value) : HIDDEN
  }
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === '--') {
      shown.push(...args.slice(i))
      break
    }
    const eq = arg.indexOf('=')
    const flag = eq === -1 ? arg : arg.slice(0, eq)
    const s = arg.startsWith('--') ? byFlag.get(flag) : undefined
    if (!s) shown.push(arg)
    else if (eq !== -1) shown.push(`${flag}=${mask(s, arg.slice(eq + 1))}`)
    else {
      shown.push(arg)
      if (i + 1 < args.length) shown.push(mask(s, args[++i]!))
    }
  }
  return { shown, hidden: [...hidden] }
}

/** Where the secret of `s` goes instead of the command line. */
export function secretWarning(s: SettingSpec): string {
  const flag = flagName(s.key)
  const what = s.secret ? flag : `${flag} with a password in it`
  const transferPassword = s.key === 'password' ? '; a protected transfer\'s password (info, download): --password-stdin' : ''
  return `transferfs: warning: ${what} on the command line can be read by every user of this computer (ps, /proc/PID/cmdline); ` +
    'it is hidden from them now, but it was there while transferfs started. Give it another way: ' +
    `\`transferfs config set ${flag.slice(2)} -\` (reads it from standard input into your config file), ${envName(s.key)} in the environment, ` +
    `or "${s.key}" in the config file${transferPassword}\n`
}

/**
 * Takes the secrets given as flags off the arguments this process shows, and warns about
 * each. Assigning process.title rewrites the memory /proc/PID/cmdline is read from (all the
 * argument strings, which Node has copied): the process then shows this one line instead.
 */
export function hideSecretArguments(stderr: NodeJS.WritableStream = process.stderr): void {
  const { shown, hidden } = maskSecretArguments(process.argv.slice(2))
  if (hidden.length === 0) return
  process.title = [process.argv0, ...process.execArgv, process.argv[1] ?? '', ...shown].join(' ')
  for (const s of hidden) stderr.write(secretWarning(s))
}
