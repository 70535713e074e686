// `transferfs pin PATH...`, `unpin PATH...` and `free PATH...`: keep transfers on this machine
// (src/pin), let them go, or drop the cached bytes of what no pin keeps ("free up space").
// The running mount does the work: the command asks it through its control socket
// (control.ts) and prints one line per path. The same pin is the extended attribute
// `user.transferfs.pin` on the mount, for scripts and file managers. What the mount does
// for each is ../pin/control.ts.
import type { Command } from 'commander'
import { plainText } from '../base/shown-text.js'
import { loadSettings } from '../config/index.js'
import { addSettingFlags } from './compose.js'
import type { ControlOp, ControlResult } from '../pin/control.js'
import { askMount } from './control.js'
import { notOnMount, placesOf } from './mount-of-path.js'
import { addExamples } from './output/examples.js'
import { CliError, EXIT } from './output/exit-codes.js'
import { writeJson } from './output/json.js'

const DESCRIPTIONS: Record<ControlOp, string> = {
  pin: 'Keep files, folders, transfers, inbox/ or a search on this machine: fetched in the background, never evicted, readable offline',
  unpin: 'Stop keeping what `pin` kept: its bytes become ordinary cache again',
  free: 'Drop the cached bytes of what is not pinned (free up space); pinned files stay',
}

const EXAMPLES: Record<ControlOp, string[]> = {
  pin: ['transferfs pin ~/Transfers/inbox/"Photos from Ann"', 'transferfs pin ~/Transfers/inbox', 'setfattr -n user.transferfs.pin -v 1 ~/Transfers/search/invoice'],
  unpin: ['transferfs unpin ~/Transfers/inbox', 'setfattr -x user.transferfs.pin ~/Transfers/inbox'],
  free: ['transferfs free ~/Transfers/inbox/"Old report"'],
}

async function run(op: ControlOp, paths: string[], opts: Record<string, unknown>): Promise<void> {
  const loaded = await loadSettings(opts)
  // Each path goes to the mount it is on (its own data folder's socket); a path on none to
  // the mount of the configured data folder, as before mounts named theirs.
  const places = await placesOf(paths)
  const byMount = new Map<string, number[]>()
  places.forEach((place, i) => {
    if (place.mountPoint === null) process.stderr.write(`transferfs: ${plainText(notOnMount(place.path, loaded.folders.data))}\n`)
    const dataDir = place.dataDir ?? loaded.folders.data
    byMount.set(dataDir, [...(byMount.get(dataDir) ?? []), i])
  })
  const results: ControlResult[] = new Array<ControlResult>(paths.length)
  for (const [dataDir, at] of byMount) {
    const answers = await askMount(dataDir, { op, paths: at.map((i) => places[i]!.path) })
    if (answers.length !== at.length) throw new Error('the mount gave an answer this command does not know')
    answers.forEach((r, k) => { results[at[k]!] = r })
  }
  if (opts.json) writeJson(results)
  else {
    // The mount's words, shown as text: a control character in them is not the terminal's to act on.
    for (const r of results) (r.ok ? process.stdout : process.stderr).write(`${r.ok ? '' : 'transferfs: '}${plainText(r.message)}\n`)
  }
  const failed = results.filter((r) => !r.ok)
  if (failed.length > 0) throw new CliError(`${failed.length} of ${results.length} not done`, failed.every((r) => r.code === 'ENOENT') ? EXIT.notFound : EXIT.error)
}

export function register(program: Command): void {
  for (const op of ['pin', 'unpin', 'free'] as const) {
    const cmd = program
      .command(op)
      .description(DESCRIPTIONS[op])
      .argument('<path...>', 'paths on the mount')
      .option('--json', 'print JSON for scripts (on stdout; messages stay on stderr)')
    addExamples(addSettingFlags(cmd, []), EXAMPLES[op]).action(async (paths: string[], opts: Record<string, unknown>) => run(op, paths, opts))
  }
}
