// Loads the settings the way every command needs them: folders, config file, env, flags.
import { readFile } from 'node:fs/promises'
import { configFilePath, resolveFolders, tokenFilePath, type Folders } from './paths.js'
import { resolveSettings, SettingsError, type ResolvedSettings } from './settings.js'

export * from './settings.js'
export * from './paths.js'

export interface LoadedSettings extends ResolvedSettings {
  folders: Folders
  configFile: string
  tokenFile: string
}

/** Reads the config file (absent = empty) and resolves flags > env > file > defaults. */
export async function loadSettings(
  flags: Partial<Record<string, unknown>> = {},
  env: NodeJS.ProcessEnv = process.env,
): Promise<LoadedSettings> {
  const folders = resolveFolders(env)
  const configFile = configFilePath(folders)
  let file: unknown
  try {
    file = JSON.parse(await readFile(configFile, 'utf8'))
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code !== 'ENOENT') {
      throw new SettingsError(`${configFile}: ${err instanceof SyntaxError ? 'not valid JSON: ' : ''}${(err as Error).message}`)
    }
  }
  const resolved = resolveSettings({ flags, env, file, fileName: configFile })
  return { ...resolved, folders, configFile, tokenFile: tokenFilePath(folders) }
}
