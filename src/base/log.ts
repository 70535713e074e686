// The one logger shape of the mount, and its levelled lines on stderr. Every part that
// tells the log something (the read path, searches, the pinner, the desktop side, the
// FUSE adapter) takes this Logger. Callers never pass secrets (keys, passwords, file
// bytes); paths are fine. A message quotes names and senders' text, so each is written
// as plain text (shown-text.ts): one message is one line, whatever it quotes, and
// nothing in it can pass for a line of the log's own.
import { plainText } from './shown-text.js'

export type LogLevel = 'error' | 'warn' | 'info' | 'debug'
export const LOG_LEVELS: readonly LogLevel[] = ['error', 'warn', 'info', 'debug']

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
