// The read path's public face: the lead wires `ReadPath.create(rangeSource, options)`
// into the filesystem core as its FileContent.
export { ReadPath } from './content.js'
export { DEFAULT_READ_OPTIONS, resolveReadOptions, type ReadOptions } from './options.js'
export type { FetchStats } from './fetcher.js'
export type { ContentHandle, FileContent, RangeSource, RemoteFile } from './source.js'
