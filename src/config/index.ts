// Loads the settings the way every command needs them: folders, config file, env, flags.
import { readStateFile, StateFileError } from '../base/state-file.js'
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
    file = await readStateFile(configFile)
  } catch (err) {
    // A StateFileError names the file, line and column, and quotes nothing (the file holds the API key).
    throw new SettingsError(err instanceof StateFileError ? err.message : `${configFile}: ${(err as Error).message}`)
  }
  const resolved = resolveSettings({ flags, env, file, fileName: configFile })
  return { ...resolved, folders, configFile, tokenFile: tokenFilePath(folders) }
}
