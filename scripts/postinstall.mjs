#!/usr/bin/env node
// After `npm install` of the package: patch and rebuild the fuse-native addon (see
// patch-fuse-native.mjs). A machine without a compiler must still get a working install
// of everything else, so a failure here says what to run later and does not fail the
// install; `transferfs mount` says the same until it is done.
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'patch-fuse-native.mjs')
const r = spawnSync(process.execPath, [script], { stdio: 'inherit' })
if (r.status !== 0) {
  process.stderr.write(`transferfs: the FUSE addon could not be patched now; mounting needs it: run \`node ${script}\` ` +
    '(with make, g++ and the headers of this Node installed)\n')
}
