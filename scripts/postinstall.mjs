#!/usr/bin/env node
// After `npm install` of the package: apply our fuse-native patch, and build its addon where
// no prebuilt one fits this machine's FUSE library (see build-fuse-addon.mjs). A machine
// without a compiler must still get a working install of everything else, so a failure here
// says what to run later and does not fail the install; `transferfs mount` says the same.
//
// fuse-native is an optional dependency: macOS mounts through its own NFS client and needs no
// FUSE addon (nothing is done there), and where fuse-native's own build failed npm leaves it
// out, and the install goes on without it.
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

// TRANSFERFS_PLATFORM: the tests act as macOS on Linux with it (src/cli/fronts/front.ts).
const platform = process.env.TRANSFERFS_PLATFORM || process.platform
if (platform === 'darwin') process.exit(0)

const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'build-fuse-addon.mjs')
try {
  createRequire(import.meta.url).resolve('fuse-native/package.json')
} catch {
  process.stderr.write('transferfs: the FUSE addon (fuse-native) did not install, so `transferfs mount` cannot mount here; every other command works. ' +
    'Its build needs make, g++ and python3 (Debian/Ubuntu: `sudo apt install build-essential python3`): install them, then install transferfs again\n')
  process.exit(0)
}
const r = spawnSync(process.execPath, [script], { stdio: 'inherit' })
if (r.status !== 0) process.stderr.write(`transferfs: mounting needs the FUSE addon set up: run \`node ${script}\` once it can\n`)
