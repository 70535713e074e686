// contrib/macos/local.transferfs.plist, the launchd agent that mounts at login: read by
// python3's plistlib (the format launchd reads), and its ProgramArguments run as launchd would
// run them (its environment, a HOME), with a stand-in `transferfs` on PATH that records what it
// is asked. This is not a Mac: launchd itself is not involved.
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { execFile } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { buildProgram } from '../../src/cli/program.js'
import { python, REPO } from '../support/mount.js'

const PLIST = path.join(REPO, 'contrib/macos/local.transferfs.plist')

interface Agent {
  Label: string
  ProgramArguments: string[]
  EnvironmentVariables: Record<string, string>
  RunAtLoad: boolean
  KeepAlive: { SuccessfulExit: boolean }
}

async function agent(): Promise<Agent> {
  const r = await python('import json, plistlib, sys; print(json.dumps(plistlib.load(open(sys.argv[1], "rb"))))', PLIST)
  expect(r.code, r.stderr).toBe(0)
  return JSON.parse(r.stdout) as Agent
}

describe('the launchd agent', () => {
  it('is a plist launchd can read, named by its label, started at login and again only after a failure', async () => {
    const a = await agent()
    expect(`${a.Label}.plist`).toBe(path.basename(PLIST))
    expect(a.RunAtLoad).toBe(true)
    expect(a.KeepAlive).toEqual({ SuccessfulExit: false })
    // Where npm's global bin is with Homebrew's Node (Apple silicon, Intel) and with nodejs.org's installer.
    expect((a.EnvironmentVariables.PATH ?? '').split(':')).toEqual(expect.arrayContaining(['/opt/homebrew/bin', '/usr/local/bin', '/usr/bin', '/bin']))
  })

  it('runs an existing program that makes ~/Transfers and runs `transferfs mount ~/Transfers --foreground` there', async () => {
    const a = await agent()
    const [program, ...args] = a.ProgramArguments
    expect(path.isAbsolute(program!)).toBe(true)
    expect(((await stat(program!)).mode & 0o111) !== 0).toBe(true)

    const home = await mkdtemp(path.join(os.tmpdir(), 'transferfs-test-launchd-'))
    await mkdir(path.join(home, 'Library', 'Logs'), { recursive: true })
    const bin = path.join(home, 'bin')
    await mkdir(bin)
    await writeFile(path.join(bin, 'transferfs'), `#!/bin/sh\nprintf '%s\\n' "$@" > "${home}/asked"\n`, { mode: 0o755 })
    const env = { ...a.EnvironmentVariables, HOME: home, PATH: `${bin}:${a.EnvironmentVariables.PATH}` }
    try {
      await new Promise<void>((resolve, reject) => execFile(program!, args, { env, timeout: 10_000 }, (err) => (err ? reject(err) : resolve())))
      expect((await stat(path.join(home, 'Transfers'))).isDirectory()).toBe(true)
      expect((await readFile(path.join(home, 'asked'), 'utf8')).split('\n').filter(Boolean)).toEqual(['mount', path.join(home, 'Transfers'), '--foreground'])
    } finally {
      await rm(home, { recursive: true, force: true })
    }

    // ...which is a command of this transferfs, with that option.
    const mount = buildProgram().commands.find((c) => c.name() === 'mount')
    expect(mount?.options.map((o) => o.long)).toContain('--foreground')
  })
})
