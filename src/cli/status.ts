// `transferfs status [--json] [--once]`: what the running mount is sending and keeping
// offline (pins: src/pin), how far, what failed and why, and the disk cache's use. The mount keeps its status in the data folder (status.json, rewritten
// within a second of a change, src/status/status-file.ts); this command reads that file, so
// it needs no connection to the mount process. On a terminal it shows live progress bars
// (bytes, rate, ETA, state, last error per entry) until nothing is queued, sending or being fetched for a pin, or
// Ctrl-C; `--once` or a pipe prints the `.status` text once; `--json` the status as JSON.
import cliProgress from 'cli-progress'
import type { Command } from 'commander'
import { loadSettings } from '../config/index.js'
import { addSettingFlags } from './compose.js'
import { openControlPlace } from './control-place.js'
import { notOnMount, placesOf } from './mount-of-path.js'
import { writeJson } from './output/json.js'
import { isLive, readStatusFile, STATUS_WRITE_INTERVAL_MS, type StatusFileContent } from '../status/status-file.js'
import { formatBytes } from '../base/format-bytes.js'
import { plainText } from '../base/shown-text.js'
import type { PinStatusEntry } from '../pin/status.js'
import { renderStatusText, serviceLine, type SendStatusEntry } from '../status/mount-status.js'

interface StatusOptions extends Record<string, unknown> {
  json?: boolean
  once?: boolean
}

/** What the command says when no running mount wrote a status. */
function headline(s: StatusFileContent | null): string | null {
  if (!s) return 'no mount has run with this data folder'
  if (!isLive(s)) return 'transferfs is not mounted (the last status it left follows)'
  return null
}

/** What one bar shows: a send, or a pin (its name then starts with "pin "). */
type BarEntry = Pick<SendStatusEntry, 'name' | 'bytesSent' | 'bytesTotal' | 'rate' | 'eta' | 'note' | 'lastError'> & { state: string }

function pinBar(k: PinStatusEntry): BarEntry {
  return { name: `pin ${k.name}`, state: k.state, bytesSent: k.bytesCached, bytesTotal: k.bytesTotal, rate: k.rate, eta: k.eta, note: k.note, lastError: null }
}

/** A bar's fields; the name, the note and the error as plain text, so a bar stays one line. */
function barLabel(e: BarEntry): Record<string, string> {
  const rate = e.rate !== null ? `${formatBytes(Math.round(e.rate))}/s` : '-'
  const eta = e.eta !== null ? `${e.eta} s` : '-'
  const note = plainText(e.lastError ? `error: ${e.lastError}` : (e.note ?? ''))
  const name = plainText(e.name)
  return {
    name: name.length > 40 ? `…${name.slice(-39)}` : name.padEnd(40),
    state: e.state.padEnd(8),
    sent: formatBytes(e.bytesSent),
    size: formatBytes(e.bytesTotal),
    rate,
    eta2: eta,
    note,
  }
}

async function watch(dataDir: string): Promise<void> {
  const multi = new cliProgress.MultiBar({
    format: '{state} {name} [{bar}] {sent} / {size}  {rate}  ETA {eta2}  {note}',
    hideCursor: true,
    clearOnComplete: false,
    stopOnComplete: false,
    barsize: 24,
  }, cliProgress.Presets.shades_classic)
  const bars = new Map<string, cliProgress.SingleBar>()
  let stop = false
  process.once('SIGINT', () => { stop = true })
  try {
    while (!stop) {
      const s = await readStatusFile(dataDir)
      const live = s !== null && isLive(s)
      for (const e of [...(s?.entries ?? []), ...(s?.pins?.entries ?? []).map(pinBar)]) {
        let bar = bars.get(e.name)
        if (!bar) {
          bar = multi.create(Math.max(1, e.bytesTotal), e.bytesSent, barLabel(e))
          bars.set(e.name, bar)
        }
        bar.setTotal(Math.max(1, e.bytesTotal))
        bar.update(e.bytesSent, barLabel(e))
      }
      const busy = (s?.entries ?? []).some((e) => e.state === 'sending' || e.state === 'queued' || e.state === 'settling') ||
        (s?.pins?.entries ?? []).some((k) => k.state === 'fetching' || k.state === 'waiting')
      if (!live || !busy) break
      await new Promise((r) => setTimeout(r, STATUS_WRITE_INTERVAL_MS))
    }
  } finally {
    multi.stop()
  }
}

/**
 * The data folder whose status is shown: that of the transferfs mount `where` is on (by
 * default the folder this command runs in), checked to be this user's like its control
 * socket's; else the configured one, said when a path given is on no transferfs mount. Run
 * inside another user's mount (shared with allowOther) without a path, it is the configured one.
 * A `--data-dir` given on this command line is the user's choice and wins over the folder the
 * command runs in (a path given still names its own mount).
 */
async function statusFolder(where: string | undefined, configured: string, chosen: boolean): Promise<string> {
  if (where === undefined && chosen) return configured
  const [place] = await placesOf([where ?? process.cwd()])
  if (place?.dataDir) {
    const checked = openControlPlace(place.dataDir).then((folder) => folder.close())
    if (where === undefined) return (await checked.then(() => true, () => false)) ? place.dataDir : configured
    await checked
    return place.dataDir
  }
  if (where !== undefined && !place?.mountPoint) process.stderr.write(`transferfs: ${plainText(notOnMount(place?.path ?? where, configured))}\n`)
  return configured
}

export function register(program: Command): void {
  const cmd = program
    .command('status')
    .description('Show what the mount is sending and keeping offline: progress, rate, ETA, state and last error per entry, and the cache\'s use')
    .option('--json', 'print the status as JSON (for scripts) and exit')
    .option('--once', 'print the status once, without live progress bars')
  // No connection setting: only the folders (the data folder holds the status).
  cmd.argument('[path]', 'a path on the mount to report (default: the mount this command runs inside, else the data folder\'s)')
  addSettingFlags(cmd, []).action(async (where: string | undefined, opts: StatusOptions) => {
    const { folders } = await loadSettings(opts)
    const dataDir = await statusFolder(where, folders.data, typeof opts.dataDir === 'string' && opts.dataDir !== '')
    const s = await readStatusFile(dataDir)
    if (opts.json) {
      writeJson({ mounted: s !== null && isLive(s), ...(s ?? { entries: [] }) })
      return
    }
    const head = headline(s)
    if (head) process.stdout.write(head + '\n')
    if (!s) return
    if (opts.once || !process.stdout.isTTY || head) {
      process.stdout.write(renderStatusText(s))
      return
    }
    const service = serviceLine(s.service)
    if (service) process.stdout.write(plainText(service) + '\n')
    if (s.pins) {
      const { pinnedBytes, otherBytes, budgetBytes } = s.pins.cache
      process.stdout.write(`cache: ${formatBytes(pinnedBytes)} pinned, ${formatBytes(otherBytes)} other, budget ${formatBytes(budgetBytes)}\n`)
    }
    await watch(dataDir)
  })
}
