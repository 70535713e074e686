// The smallest logger the mount needs: levelled lines on stderr. Callers never pass
// secrets (keys, passwords, file bytes); paths are fine. A message quotes names and
// senders' text, so each is written as plain text (base/shown-text.ts): one message is
// one line, whatever it quotes, and nothing in it can pass for a line of the log's own.
import { plainText } from '../base/shown-text.js'
import type { LogLevel } from '../config/settings.js'

export interface Logger {
  error(msg: string): void
  warn(msg: string): void
  info(msg: string): void
  debug(msg: string): void
}

const RANK: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 }

export function stderrLogger(level: LogLevel, prefix = 'transferfs'): Logger {
  const at = (l: LogLevel) => (msg: string) => {
    if (RANK[l] <= RANK[level]) process.stderr.write(`${prefix}: ${l}: ${plainText(msg)}\n`)
  }
  return { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') }
}

export const silentLogger: Logger = { error() {}, warn() {}, info() {}, debug() {} }
