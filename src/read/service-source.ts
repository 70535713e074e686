// The read path's RangeSource over the Transfer Service client: ranges stream from the
// file's download URL as the service returned it, range hashes from that URL's file
// server. Retrying is the read path's job (it verifies, counts tries and gives up with
// EIO in bounded time), so the client given here should be built with one download try
// (see cli/compose.ts): two nested retry loops would multiply the time a dead service
// keeps a reader waiting.
import type { TransferClient } from '../api/client.js'
import type { RangeSource, RemoteFile } from './source.js'

export class ServiceRangeSource implements RangeSource {
  constructor(private readonly client: TransferClient) {}

  fetchRange(file: RemoteFile, start: number, end: number, signal?: AbortSignal): Promise<Buffer> {
    return this.client.download.fetchRangeOnce(file.downloadUrl, start, end, signal)
  }

  streamRange(file: RemoteFile, start: number, end: number, signal?: AbortSignal): AsyncIterable<Buffer> {
    return this.client.download.streamRange(file.downloadUrl, start, end, { signal })
  }

  rangeHash(file: RemoteFile, position: number, length: number, signal?: AbortSignal): Promise<string> {
    return this.client.download.rangeHash({
      downloadUrl: file.downloadUrl,
      transferId: file.transferId,
      fileName: file.fileName,
      position,
      length,
      signal,
    })
  }
}
