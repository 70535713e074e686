// Writing man(7) source: text that roff prints as given, and the few macros a manual page
// needs. Everything that reaches the page goes through `escape`, so no description, example
// or setting can turn into a roff request or lose a character on the way.

/**
 * Text as roff prints it. A backslash is roff's escape character. `-` becomes `\-`, the
 * character that prints as the ASCII hyphen-minus a reader can copy into a shell (a bare
 * `-` may print as a typographic hyphen). Quotes, the backtick, `~` and `^` get their named
 * glyphs for the same reason, and anything beyond ASCII its code point, so the page does not
 * depend on the encoding its reader assumes.
 */
export function escape(text: string): string {
  let out = ''
  for (const ch of text) {
    const code = ch.codePointAt(0) as number
    if (ch === '\\') out += '\\e'
    else if (ch === '-') out += '\\-'
    else if (ch === "'") out += '\\(aq'
    else if (ch === '`') out += '\\(ga'
    else if (ch === '~') out += '\\(ti'
    else if (ch === '^') out += '\\(ha'
    else if (ch === '\t') out += ' '
    else if (ch === '\n') out += ch
    // Other control characters have no glyph; roff would take some of them as its own.
    else if (code < 0x20 || code === 0x7f) continue
    else if (code > 0x7f) out += `\\[u${code.toString(16).toUpperCase().padStart(4, '0')}]`
    else out += ch
  }
  return out
}

/**
 * Already escaped source made safe as input lines: a line that starts with `.` or `'` would
 * be read as a request, so it starts with the zero-width `\&` instead.
 */
export function guardLines(source: string): string {
  return source
    .split('\n')
    .map((line) => (/^[.']/.test(line) ? `\\&${line}` : line))
    .join('\n')
}

/** Plain text as lines of a filled paragraph (line breaks in it become spaces when filled). */
export function text(plain: string): string {
  // A line that starts with a space, or an empty one, would break the paragraph there.
  const lines = plain.split('\n').map((line) => line.trim()).filter((line) => line !== '')
  return guardLines(escape(lines.join('\n')))
}

export const bold = (plain: string): string => `\\fB${escape(plain)}\\fR`
export const italic = (plain: string): string => `\\fI${escape(plain)}\\fR`

/**
 * A request with its arguments quoted. Inside a quoted argument a `"` ends it, so it is
 * written as the named glyph instead.
 */
export function request(name: string, ...args: string[]): string {
  return [`.${name}`, ...args.map((a) => `"${escape(a).replace(/"/g, '\\(dq')}"`)].join(' ')
}

/**
 * A command line or option term with its placeholders (`<dir>`, `[command]`) in italics and
 * the rest in bold, as man pages set what is typed literally and what is to be replaced.
 */
export function term(plain: string): string {
  return plain
    .split(/(<[^>]*>|\[[^\]]*\])/)
    .filter((part) => part !== '')
    .map((part) => {
      if (/^[<[]/.test(part)) return `${escape(part[0] as string)}${italic(part.slice(1, -1))}${escape(part.slice(-1))}`
      return part.trim() === '' ? escape(part) : bold(part)
    })
    .join('')
}

/**
 * Lines shown as they are (examples, a folder tree): no filling, no adjusting, indented.
 * .nf/.fi rather than .EX/.EE: groff's .EE turns hyphenation back on for the rest of the page.
 */
export function example(lines: readonly string[]): string {
  return ['.RS 4', '.nf', guardLines(lines.map(escape).join('\n')), '.fi', '.RE'].join('\n')
}

/**
 * A tagged item: `head` as the tag, `body` indented under it (beside it when the tag is
 * narrower than the indent), both roff source (the body may hold requests such as .br).
 */
export function item(head: string, body: string): string {
  return ['.TP', head, body].join('\n')
}

/**
 * Roff source from a template: its literal text escaped, the values put in as they are
 * (roff source already, such as `bold(...)`).
 */
export function roff(strings: TemplateStringsArray, ...values: string[]): string {
  return guardLines(strings.reduce((out, literal, i) => out + escape(literal) + (values[i] ?? ''), ''))
}

/** A paragraph of lines of roff source. */
export function paragraph(...lines: string[]): string {
  return ['.PP', ...lines.map(guardLines)].join('\n')
}

/** A reference to another manual page: its name in bold, its section after it. */
export const page = (name: string, section: number | string): string => `${bold(name)}(${section})`
