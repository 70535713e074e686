// Colours, only where a person reads them: on a terminal, unless NO_COLOR is set
// (https://no-color.org) or TERM is "dumb". FORCE_COLOR turns them on anyway (CI logs).

export interface ColorContext {
  isTTY: boolean
  env: NodeJS.ProcessEnv
}

export function colorEnabled(ctx: ColorContext): boolean {
  const { env } = ctx
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '' && env.FORCE_COLOR !== '0') return true
  if (env.TERM === 'dumb') return false
  return ctx.isTTY
}

export interface Style {
  enabled: boolean
  bold(text: string): string
  dim(text: string): string
  red(text: string): string
  green(text: string): string
  yellow(text: string): string
  cyan(text: string): string
}

const wrap = (on: boolean, open: number, close: number) => (text: string): string => (on ? `\u001b[${open}m${text}\u001b[${close}m` : text)

export function makeStyle(enabled: boolean): Style {
  return {
    enabled,
    bold: wrap(enabled, 1, 22),
    dim: wrap(enabled, 2, 22),
    red: wrap(enabled, 31, 39),
    green: wrap(enabled, 32, 39),
    yellow: wrap(enabled, 33, 39),
    cyan: wrap(enabled, 36, 39),
  }
}

/** The style for a stream of this process. */
export function styleFor(stream: NodeJS.WriteStream): Style {
  return makeStyle(colorEnabled({ isTTY: Boolean(stream.isTTY), env: process.env }))
}

const ANSI = /\u001b\[[0-9;]*m/g

/** Characters a text takes on screen (colour codes take none). */
export function visibleLength(text: string): number {
  let n = 0
  for (const ch of text.replace(ANSI, '')) {
    const cp = ch.codePointAt(0)!
    // East Asian wide and emoji take two cells; combining marks none. Close enough for tables.
    if (cp >= 0x300 && cp <= 0x36f) continue
    n += cp >= 0x1100 && (cp <= 0x115f || (cp >= 0x2e80 && cp <= 0xa4cf) || (cp >= 0xac00 && cp <= 0xd7a3) ||
      (cp >= 0xf900 && cp <= 0xfaff) || (cp >= 0xfe30 && cp <= 0xfe4f) || (cp >= 0xff00 && cp <= 0xff60) ||
      (cp >= 0xffe0 && cp <= 0xffe6) || (cp >= 0x1f300 && cp <= 0x1faff) || (cp >= 0x20000 && cp <= 0x3fffd)) ? 2 : 1
  }
  return n
}
