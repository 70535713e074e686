// Text that came from someone else (a sender's subject, a file name, a socket's answer) shown
// to a person: in a terminal, a log line or a notification. A control character there is an
// instruction, not text: a newline forges a row or a log line, an escape sequence retitles the
// terminal or hides what follows. So every interpolated value goes through one of these. JSON
// output needs none: JSON.stringify escapes control characters itself, and stays exact.

/**
 * `text` with every control character written as an escape a reader can see: `\n`, `\r`,
 * `\t` and `\\` as in C, any other C0, DEL or C1 character as `\xNN`, and the line and
 * paragraph separators (U+2028, U+2029) and bidirectional overrides, which reorder what a
 * terminal shows, as `\u{NNNN}`. Everything else, any language's letters included, stays.
 */
export function plainText(text: string): string {
  let out = ''
  for (const ch of text) {
    const cp = ch.codePointAt(0)!
    if (ch === '\\') out += '\\\\'
    else if (ch === '\n') out += '\\n'
    else if (ch === '\r') out += '\\r'
    else if (ch === '\t') out += '\\t'
    else if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) out += `\\x${cp.toString(16).padStart(2, '0')}`
    else if (cp === 0x2028 || cp === 0x2029 || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069)) {
      out += `\\u{${cp.toString(16)}}`
    } else out += ch
  }
  return out
}

/**
 * `text` for a notification body: plain as above, then `&`, `<` and `>` as entities, because
 * the freedesktop notification spec lets a daemon read the body as markup (many do).
 */
export function markupText(text: string): string {
  return plainText(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}
