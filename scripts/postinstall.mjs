#!/usr/bin/env node
// After `npm install` of the package: apply our fuse-native patch, and build its addon where
// no prebuilt one fits this machine's FUSE library (see build-fuse-addon.mjs). A machine
// without a compiler must still get a working install of everything else, so a failure here
// says what to run later and does not fail the install; `transferfs mount` says the same.
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'build-fuse-addon.mjs')
const r = spawnSync(process.execPath, [script], { stdio: 'inherit' })
if (r.status !== 0) process.stderr.write(`transferfs: mounting needs the FUSE addon set up: run \`node ${script}\` once it can\n`)
