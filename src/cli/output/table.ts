// Plain text tables the way gh and rclone print them: a header, columns padded with
// two spaces, no borders, so `grep`, `awk` and `cut` still work on the rows. A column
// marked `shrink` is cut (with "…") when the table is wider than the terminal.
import { plainText } from '../../base/shown-text.js'
import { visibleLength, type Style } from './style.js'

export interface Column<Row> {
  header: string
  value(row: Row): string
  align?: 'left' | 'right'
  /** May be shortened to fit the terminal width. */
  shrink?: boolean
  color?: (text: string, row: Row) => string
}

function cut(text: string, width: number): string {
  if (visibleLength(text) <= width) return text
  let out = ''
  for (const ch of text) {
    if (visibleLength(out + ch) > width - 1) break
    out += ch
  }
  return out + '…'
}

function pad(text: string, width: number, align: 'left' | 'right'): string {
  const room = Math.max(0, width - visibleLength(text))
  return align === 'right' ? ' '.repeat(room) + text : text + ' '.repeat(room)
}

const GAP = '  '
/** Narrowest a shrinking column gets. */
const MIN_SHRUNK = 8

/**
 * The table of `rows`. Every cell is the service's or a sender's text as plain text
 * (base/shown-text.ts): a control character in it must not move the cursor or end a row.
 */
export function renderTable<Row>(columns: readonly Column<Row>[], rows: readonly Row[], style: Style, maxWidth?: number): string {
  const cells = rows.map((r) => columns.map((c) => plainText(c.value(r))))
  const widths = columns.map((c, i) => Math.max(visibleLength(c.header), ...cells.map((row) => visibleLength(row[i]!))))
  if (maxWidth && maxWidth > 0) {
    let total = widths.reduce((s, w) => s + w, 0) + GAP.length * (columns.length - 1)
    for (let i = 0; i < columns.length && total > maxWidth; i++) {
      if (!columns[i]!.shrink) continue
      const target = Math.max(MIN_SHRUNK, widths[i]! - (total - maxWidth))
      total -= widths[i]! - target
      widths[i] = target
    }
  }
  const lines: string[] = []
  lines.push(columns.map((c, i) => style.bold(pad(c.header, widths[i]!, c.align ?? 'left'))).join(GAP).trimEnd())
  cells.forEach((row, r) => {
    const line = columns.map((c, i) => {
      const text = cut(row[i]!, widths[i]!)
      const padded = pad(text, widths[i]!, c.align ?? 'left')
      return c.color ? c.color(padded, rows[r]!) : padded
    })
    lines.push(line.join(GAP).trimEnd())
  })
  return lines.join('\n') + '\n'
}

/** "Key: value" lines with the keys aligned; each value as plain text, as a table's cells. */
export function renderFields(fields: ReadonlyArray<[string, string]>, style: Style): string {
  const width = Math.max(0, ...fields.map(([k]) => visibleLength(k)))
  return fields.map(([k, v]) => `${style.bold(pad(k + ':', width + 1, 'left'))} ${plainText(v)}`).join('\n') + '\n'
}
