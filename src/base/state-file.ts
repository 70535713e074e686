// Reading the JSON files transferfs keeps its state in (config.json, pins.json, the send
// journal, a download's sidecar). A file that does not parse is named with the line and
// column where it stops being JSON, and never quoted: these files hold API keys, tokens,
// names and paths, and an error message goes to terminals, logs and bug reports. Values
// taken from such a file are checked before any arithmetic uses them (stateCount), since a
// size that is not a number turns loops over blocks into loops that never end.
import { readFile, rename } from 'node:fs/promises'

/** A state file that is not JSON: where it stops being so, and why, with none of its text. */
export class StateFileError extends Error {
  override readonly name = 'StateFileError'
  readonly code = 'EBADSTATE'
  constructor(
    readonly file: string,
    readonly line: number,
    readonly column: number,
    readonly reason: string,
  ) {
    super(`${file}:${line}:${column}: not valid JSON (${reason})`)
  }
}

/** The file's JSON value, or undefined when it does not exist; StateFileError when it does not parse. */
export async function readStateFile(file: string): Promise<unknown> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
  return parseStateText(text, file)
}

/** `text` (the content of `file`) as JSON; StateFileError naming file:line:column when it is not. */
export function parseStateText(text: string, file: string): unknown {
  try {
    return JSON.parse(text) as unknown
  } catch {
    // JSON.parse's own message quotes the text around the fault: it is not passed on.
    const { offset, reason } = syntaxFault(text)
    const { line, column } = lineAndColumn(text, offset)
    throw new StateFileError(file, line, column, reason)
  }
}

/** Renames a damaged state file out of the way, to "<file>.damaged-<UTC time>"; the new path. */
export async function setAside(file: string, now: Date = new Date()): Promise<string> {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')
  const to = `${file}.damaged-${stamp}`
  await rename(file, to)
  return to
}

/** The largest count a state file may give (sizes, offsets, counts): what arithmetic on doubles keeps exact. */
export const MAX_STATE_COUNT = Number.MAX_SAFE_INTEGER

/** `v` when it is a whole number in [0, max]; otherwise null. */
export function stateCount(v: unknown, max: number = MAX_STATE_COUNT): number | null {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 && v <= max ? v : null
}

/** 1-based line and column of `offset` in `text`. */
function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1
  let start = 0
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 0x0a) {
      line++
      start = i + 1
    }
  }
  return { line, column: offset - start + 1 }
}

/**
 * Where `text` first breaks the JSON grammar, and what is wrong there in a few words. A
 * scanner of its own, since the parser's error gives no position for some faults.
 */
export function syntaxFault(text: string): { offset: number; reason: string } {
  let i = 0
  class Fault {
    constructor(readonly offset: number, readonly reason: string) {}
  }
  const fail = (reason: string, at = i): never => {
    throw new Fault(at, at >= text.length ? 'the file ends too soon' : reason)
  }
  const space = (): void => {
    while (i < text.length && ' \t\r\n'.includes(text[i]!)) i++
  }
  const literal = (word: string): void => {
    for (const ch of word) {
      if (text[i] !== ch) fail('unexpected character')
      i++
    }
  }
  const string = (): void => {
    const open = i
    i++
    for (;;) {
      if (i >= text.length) fail('a string is not closed', open)
      const c = text.charCodeAt(i)
      if (c === 0x22) return void i++
      if (c < 0x20) fail('a control character inside a string')
      if (c === 0x5c) {
        i++
        const e = text[i]
        if (e === 'u') {
          for (let k = 1; k <= 4; k++) if (!/[0-9a-fA-F]/.test(text[i + k] ?? '')) fail('a bad \\u escape')
          i += 5
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i++
        else fail('a bad escape')
      } else i++
    }
  }
  const digits = (): void => {
    if (!/[0-9]/.test(text[i] ?? '')) fail('a malformed number')
    while (/[0-9]/.test(text[i] ?? '')) i++
  }
  const number = (): void => {
    if (text[i] === '-') i++
    if (text[i] === '0') i++
    else digits()
    if (text[i] === '.') {
      i++
      digits()
    }
    if (text[i] === 'e' || text[i] === 'E') {
      i++
      if (text[i] === '+' || text[i] === '-') i++
      digits()
    }
  }
  const value = (depth: number): void => {
    if (depth > 10_000) fail('nested too deeply')
    space()
    const c = text[i]
    if (c === '{') {
      i++
      space()
      if (text[i] === '}') return void i++
      for (;;) {
        space()
        if (text[i] !== '"') fail('expected a quoted property name')
        string()
        space()
        if (text[i] !== ':') fail('expected a colon')
        i++
        value(depth + 1)
        space()
        if (text[i] === ',') i++
        else if (text[i] === '}') return void i++
        else fail('expected a comma or a closing brace')
      }
    }
    if (c === '[') {
      i++
      space()
      if (text[i] === ']') return void i++
      for (;;) {
        value(depth + 1)
        space()
        if (text[i] === ',') i++
        else if (text[i] === ']') return void i++
        else fail('expected a comma or a closing bracket')
      }
    }
    if (c === '"') return string()
    if (c === 't') return literal('true')
    if (c === 'f') return literal('false')
    if (c === 'n') return literal('null')
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return number()
    fail('unexpected character')
  }
  try {
    value(0)
    space()
    if (i < text.length) fail('more after the value')
  } catch (e) {
    if (e instanceof Fault) return { offset: e.offset, reason: e.reason }
    if (e instanceof RangeError) return { offset: 0, reason: 'nested too deeply' }
    throw e
  }
  // JSON.parse refused what this scanner accepts (it should not happen): no position is known.
  return { offset: 0, reason: 'not JSON' }
}
