// The command line's flags come from the settings table: every setting has its flag on
// `mount`, the fixed names are there, and what the background mount passes on to its
// daemon parses back to the same values, the secrets through its environment.
import { Command } from 'commander'
import { describe, expect, it } from 'vitest'
import { addSettingFlags, CONNECTION_KEYS, settingArgs, settingEnv } from '../../src/cli/compose.js'
import { register as registerMount } from '../../src/cli/mount.js'
import { flagName, resolveSettings, SETTINGS } from '../../src/config/index.js'

function parse(args: string[]): Record<string, unknown> {
  let seen: Record<string, unknown> = {}
  const program = new Command().exitOverride()
  addSettingFlags(program.command('x').argument('<dir>')).action((_dir: string, opts: Record<string, unknown>) => {
    seen = opts
  })
  program.parse(['x', '/m', ...args], { from: 'user' })
  return seen
}

describe('setting flags', () => {
  it('mount --help lists a flag for every setting, including the fixed names', () => {
    const program = new Command()
    registerMount(program)
    const help = program.commands.find((c) => c.name() === 'mount')!.helpInformation()
    for (const s of SETTINGS) expect(help).toContain(flagName(s.key))
    for (const fixed of ['--api-url', '--api-key', '--ca', '--cache-dir', '--config-dir', '--data-dir', '--allow-other', '--chunk-size', '--listing-ttl-ms', '-f, --foreground']) expect(help).toContain(fixed)
  })

  it('login and logout take only the connection settings (and the folders, like every command)', () => {
    const cmd = addSettingFlags(new Command('login'), CONNECTION_KEYS)
    expect(cmd.options.map((o) => o.long).sort()).toEqual(['--api-key', '--api-url', '--ca', '--cache-dir', '--config-dir', '--data-dir', '--proxy'])
  })

  it('flags resolve like the environment, and settingArgs passes them on unchanged', () => {
    const opts = parse(['--api-url', 'https://x/api', '--allow-other', '--chunk-size', '8M', '--listing-ttl-ms', '5s', '--notify', 'no'])
    const resolved = resolveSettings({ flags: opts }).settings
    expect(resolved).toMatchObject({ apiUrl: 'https://x/api', allowOther: true, chunkSize: 8 * 1024 * 1024, listingTtlMs: 5000, notify: false })
    expect(parse(settingArgs(opts))).toEqual(opts)
    // A switch that is off is not passed at all.
    expect(settingArgs(parse([]))).toEqual([])
  })

  it('settings holding secrets reach the background mount through its environment, never its command line (which every user can read)', () => {
    const opts = parse(['--api-key', 'k-1', '--proxy', 'http://ann:pw@proxy:3128', '--password', 'tr-pw', '--chunk-size', '8M'])
    expect(settingArgs(opts)).toEqual(['--chunk-size', '8M'])
    expect(settingEnv(opts)).toEqual({ TRANSFERFS_API_KEY: 'k-1', TRANSFERFS_PROXY: 'http://ann:pw@proxy:3128', TRANSFERFS_PASSWORD: 'tr-pw' })
    expect(resolveSettings({ flags: parse(settingArgs(opts)), env: settingEnv(opts) }).settings).toMatchObject(resolveSettings({ flags: opts }).settings)
  })
})
