// Preloaded (node --require, through NODE_OPTIONS) into the commands a test runs as macOS: the
// FUSE addon must never be loaded there. Any lookup of fuse-native fails, and is recorded as
// $MACOS_TOOLS_STATE/fuse-native-loaded, so that a caller that swallows the failure is caught too.
const Module = require('node:module')
const fs = require('node:fs')
const path = require('node:path')

const resolve = Module._resolveFilename
Module._resolveFilename = function (request, ...rest) {
  if (request === 'fuse-native' || request.startsWith('fuse-native/')) {
    const state = process.env.MACOS_TOOLS_STATE
    if (state) fs.appendFileSync(path.join(state, 'fuse-native-loaded'), `${process.pid} ${request}\n`)
    throw new Error(`fuse-native was looked up (${request}) by a process acting as macOS`)
  }
  return resolve.call(this, request, ...rest)
}
