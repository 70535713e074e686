// `transferfs config [show|set KEY VALUE|unset KEY|path]`: every setting, its value and
// where the value came from (flag > TRANSFERFS_* environment > config file > default);
// set and unset edit the config file (atomically, owner-only: it may hold the API key).
// Secrets are never printed.
import type { Command } from 'commander'
import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import {
  configFilePath, displayValue, envName, flagName, loadSettings, resolveFolders, parseSettingValue, SETTINGS, type LoadedSettings, type SettingSpec,
} from '../config/index.js'
import { writeFileDurably } from '../base/durable-file.js'
import { readStateFile, StateFileError } from '../base/state-file.js'
import { commonFlags, readStdinValue, terminalWidth, type CommonOptions } from './output/command.js'
import { action } from './output/errors.js'
import { UsageError } from './output/exit-codes.js'
import { formatBytes } from '../base/format-bytes.js'
import { writeJson } from './output/json.js'
import { styleFor } from './output/style.js'
import { renderFields, renderTable } from './output/table.js'
import { createOwnerOnly } from '../config/owner-only.js'

/** A setting by its key ("apiUrl"), flag name ("api-url", "--api-url") or variable (TRANSFERFS_API_URL). */
export function findSetting(name: string): SettingSpec {
  const n = name.trim()
  const found = SETTINGS.find((s) => s.key === n || flagName(s.key) === n || flagName(s.key) === `--${n}` || envName(s.key) === n)
    ?? SETTINGS.find((s) => s.key.toLowerCase() === n.toLowerCase().replace(/[-_]/g, ''))
  if (!found) throw new UsageError(`no setting called ${JSON.stringify(name)}`, '`transferfs config` lists them all')
  return found
}

/** A value as the file keeps it: numbers and booleans as JSON, sizes and durations as written ("50M", "30s"). */
export function fileValue(s: SettingSpec, raw: string): unknown {
  const parsed = parseSettingValue(s, raw, `config set ${s.key}`)
  if (s.kind === 'bytes' || s.kind === 'ms') return /^\s*\d+\s*$/.test(raw) ? parsed : raw.trim()
  return parsed
}

function shown(s: SettingSpec, value: unknown): string {
  if (value === null || value === undefined || s.secret || s.redact) return displayValue(s.key, value)
  if (s.kind === 'bytes' && typeof value === 'number') return `${formatBytes(value)}`
  if (s.kind === 'ms' && typeof value === 'number') return value % 1000 === 0 ? `${value / 1000}s` : `${value}ms`
  if (s.unit && s.unit !== 'count' && s.kind === 'int') return `${String(value)} ${s.unit}`
  return String(value)
}

function sourceOf(loaded: LoadedSettings, s: SettingSpec): string {
  const src = loaded.sources[s.key]
  return src === 'env' ? `env ${envName(s.key)}` : src
}

async function readConfigObject(file: string): Promise<Record<string, unknown>> {
  let parsed: unknown
  try {
    parsed = await readStateFile(file)
  } catch (err) {
    if (err instanceof StateFileError) throw new UsageError(err.message, 'fix or remove the file, then try again')
    throw err
  }
  if (parsed === undefined) return {}
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new UsageError(`${file}: expected a JSON object`)
  return parsed as Record<string, unknown>
}

/** Replaces the config file whole: a crash leaves the old file or the new one, never half of one. */
async function writeConfigObject(file: string, obj: Record<string, unknown>): Promise<void> {
  createOwnerOnly()
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 })
  await writeFileDurably(file, `${JSON.stringify(obj, null, 2)}\n`)
}

async function show(opts: CommonOptions): Promise<void> {
  const loaded = await loadSettings({})
  const rows = SETTINGS.map((s) => ({ s, value: loaded.settings[s.key] }))
  if (opts.json) {
    writeJson({
      configFile: loaded.configFile, tokenFile: loaded.tokenFile, folders: loaded.folders,
      settings: Object.fromEntries(rows.map(({ s, value }) => [s.key, {
        value: value !== null && (s.secret || s.redact) ? displayValue(s.key, value) : value, source: loaded.sources[s.key], flag: flagName(s.key), env: envName(s.key),
        default: s.secret ? null : s.default, unit: s.unit || null, description: s.description,
      }])),
    })
    return
  }
  const style = styleFor(process.stdout)
  process.stdout.write(renderFields([
    ['Config file', loaded.configFile],
    ['Session', loaded.tokenFile],
    ['Cache', loaded.folders.cache],
    ['Data', loaded.folders.data],
  ], style))
  process.stdout.write('\n')
  process.stdout.write(renderTable<(typeof rows)[number]>([
    { header: 'SETTING', value: ({ s }) => s.key },
    { header: 'VALUE', value: ({ s, value }) => shown(s, value), shrink: true },
    { header: 'SOURCE', value: ({ s }) => sourceOf(loaded, s), color: (text, { s }) => (loaded.sources[s.key] === 'default' ? style.dim(text) : text) },
    { header: 'DESCRIPTION', value: ({ s }) => s.description, shrink: true },
  ], rows, style, terminalWidth()))
}

export function register(program: Command): void {
  const config = program
    .command('config')
    .description('Show the settings and where each comes from; set or unset them in the config file')
  commonFlags(config, {
    keys: [],
    examples: [
      'transferfs config',
      'transferfs config set api-url https://transfer.example.com/api',
      'printf %s "$KEY" | transferfs config set api-key -     # a secret from stdin, not the shell history',
      'transferfs config set chunk-size 16M',
      'transferfs config unset days',
      'transferfs config --json | jq .settings.apiUrl',
    ],
  }).action(action(show))

  config.command('show').description('Show every setting, its value and where it came from (the default)')
    .option('--json', 'print JSON for scripts').action(action(show))

  config.command('set')
    .description('Write a setting to the config file (VALUE "-" reads it from standard input)')
    .argument('<key>', 'the setting: apiUrl, api-url or TRANSFERFS_API_URL')
    .argument('<value>', 'its value: sizes take units (50M, 1G), durations too (30s, 5m)')
    .action(action(async (key: string, value: string) => {
      const s = findSetting(key)
      const raw = value === '-' ? await readStdinValue() : value
      const file = configFilePath(resolveFolders())
      const stored = fileValue(s, raw)
      const obj = await readConfigObject(file)
      obj[s.key] = stored
      await writeConfigObject(file, obj)
      process.stdout.write(`${s.key} = ${s.secret ? '********' : JSON.stringify(s.redact ? displayValue(s.key, stored) : stored)} in ${file}\n`)
      if (process.env[envName(s.key)]) process.stderr.write(`note: ${envName(s.key)} is set in the environment and takes precedence over the file\n`)
    }))

  config.command('unset')
    .description('Remove a setting from the config file (its default applies again)')
    .argument('<key>', 'the setting: apiUrl, api-url or TRANSFERFS_API_URL')
    .action(action(async (key: string) => {
      const s = findSetting(key)
      // The file itself may be what is wrong (a typo'd key): unset must work even then.
      const file = configFilePath(resolveFolders())
      const obj = await readConfigObject(file)
      if (!Object.hasOwn(obj, s.key)) {
        process.stderr.write(`${s.key} is not set in ${file}\n`)
        return
      }
      delete obj[s.key]
      await writeConfigObject(file, obj)
      process.stdout.write(`${s.key} removed from ${file}\n`)
    }))

  config.command('path').description('Print where the config file is').action(action(async () => {
    process.stdout.write(`${configFilePath(resolveFolders())}\n`)
  }))
}
