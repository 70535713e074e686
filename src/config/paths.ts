// The folders transferfs keeps its files in: env-paths('transferfs') unless the
// TRANSFERFS_*_DIR variables say otherwise (tests point them at temporary folders).
import envPaths from 'env-paths'
import path from 'node:path'

export interface Folders {
  /** settings file and tokens. */
  config: string
  /** chunk cache (may be deleted at any time). */
  cache: string
  /** outbox staging and the send journal (must survive restarts). */
  data: string
}

/** The folder flags every command takes, each the same as its variable (the flag wins). */
export const FOLDER_FLAGS = [
  { option: 'configDir', flag: '--config-dir', env: 'TRANSFERFS_CONFIG_DIR', description: 'folder of the settings file and the session' },
  { option: 'cacheDir', flag: '--cache-dir', env: 'TRANSFERFS_CACHE_DIR', description: 'folder of the chunk cache (safe to delete)' },
  { option: 'dataDir', flag: '--data-dir', env: 'TRANSFERFS_DATA_DIR', description: 'folder of outbox staging and the send journal (must survive restarts)' },
] as const

/** Folder flags given on the command line become their variables, so every part (and a background mount) sees them. */
export function applyFolderFlags(opts: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): void {
  for (const f of FOLDER_FLAGS) {
    const v = opts[f.option]
    if (typeof v === 'string' && v !== '') env[f.env] = path.resolve(v)
  }
}

export const CONFIG_FILE_NAME = 'config.json'
export const TOKEN_FILE_NAME = 'tokens.json'

export function resolveFolders(env: NodeJS.ProcessEnv = process.env): Folders {
  const base = envPaths('transferfs', { suffix: '' })
  const pick = (name: string, fallback: string): string => {
    const v = env[name]
    return v ? path.resolve(v) : fallback
  }
  return {
    config: pick('TRANSFERFS_CONFIG_DIR', base.config),
    cache: pick('TRANSFERFS_CACHE_DIR', base.cache),
    data: pick('TRANSFERFS_DATA_DIR', base.data),
  }
}

export function configFilePath(folders: Folders): string {
  return path.join(folders.config, CONFIG_FILE_NAME)
}

export function tokenFilePath(folders: Folders): string {
  return path.join(folders.config, TOKEN_FILE_NAME)
}
