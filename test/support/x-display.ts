// A command run on a virtual X display of its own (test/desktop/fixtures/x_display.py: Xvfb
// without resets, on a number drawn at random and proven to answer), in place of `xvfb-run -a`,
// whose display can refuse the command's first connection (why: in x_display.py).
import path from 'node:path'
import { REPO } from './mount.js'

const LAUNCHER = path.join(REPO, 'test/desktop/fixtures/x_display.py')

/** The argv that runs `argv` on a display of `screen` (WxHxD): [command, ...args]. */
export function onXDisplay(argv: string[], screen = '1280x1024x24'): [string, string[]] {
  return ['/usr/bin/python3', [LAUNCHER, '--screen', screen, '--', ...argv]]
}
