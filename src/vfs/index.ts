// The filesystem model's public face: the core the FUSE adapter drives and the ports the mount wires.
export { TransferFileSystem, type TransferFileSystemOptions } from './filesystem.js'
export type { Account, DetailsOptions, SentRef, StatusSource, TransferCatalog } from './catalog.js'
export { VFS_DEFAULTS, systemClock, vfsSettings, type Clock, type VfsSettings } from './settings.js'
export * from './core.js'
