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

export const CONFIG_FILE_NAME = 'config.json'
export const TOKEN_FILE_NAME = 'tokens.json'
/** The token file holds secrets: owner read/write only. */
export const TOKEN_FILE_MODE = 0o600

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
