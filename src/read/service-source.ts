// The read path's RangeSource over the Transfer Service client: ranges stream from the
// file's download URL as the service returned it, range hashes from that URL's file
// server, one try each: retrying is the read path's job (it verifies, retries under the
// one failure policy until the read's deadline, and resumes after the last verified
// piece), so a retry loop here would only multiply the time a dead service keeps a
// reader waiting.
import type { TransferClient } from '../api/client.js'
import type { BodySink } from '../api/range-sockets.js'
import type { RangeSource, Reachability, RemoteFile } from './source.js'

export class ServiceRangeSource implements RangeSource {
  constructor(private readonly client: TransferClient) {}

  get reachability(): Reachability {
    return this.client.connectivity
  }

  prepare(file: RemoteFile): void {
    this.client.download.preconnect(file.downloadUrl)
  }

  streamRange(file: RemoteFile, start: number, end: number, sink: BodySink, signal?: AbortSignal): Promise<void> {
    return this.client.download.pumpRange(file.downloadUrl, start, end, sink, signal)
  }

  rangeHash(file: RemoteFile, position: number, length: number, signal?: AbortSignal): Promise<string> {
    return this.client.download.rangeHashOnce({
      downloadUrl: file.downloadUrl,
      transferId: file.transferId,
      fileName: file.fileName,
      position,
      length,
      signal,
    })
  }
}
