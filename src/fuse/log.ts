// The smallest logger the mount needs: levelled lines on stderr. Callers never pass
// secrets (keys, passwords, file bytes); paths are fine.
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
    if (RANK[l] <= RANK[level]) process.stderr.write(`${prefix}: ${l}: ${msg}\n`)
  }
  return { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') }
}

export const silentLogger: Logger = { error() {}, warn() {}, info() {}, debug() {} }
