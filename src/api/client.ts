// The Transfer Service client: one object the mount and the commands hold, composing
// the transport, the session and the operations, configured by one options object
// (defaults in options.ts).
import { ApiCaller } from './api-call.js'
import type { Connectivity } from './connectivity.js'
import { Session } from './auth.js'
import { DownloadApi } from './download.js'
import { Transport } from './http.js'
import { resolveOptions } from './options.js'
import type { ClientOptions, ClientOptionsInput } from './options.js'
import { TokenStore } from './tokens.js'
import { TransferApi } from './transfers.js'
import { UploadApi } from './upload.js'

export class TransferClient {
  readonly options: ClientOptions
  readonly auth: Session
  readonly transfers: TransferApi
  readonly download: DownloadApi
  readonly upload: UploadApi
  private readonly transport: Transport

  constructor(input: ClientOptionsInput) {
    this.options = resolveOptions(input)
    const o = this.options
    this.transport = new Transport(o)
    const api = new ApiCaller(this.transport, o.apiUrl, o.apiKey, o.retry)
    this.auth = new Session(api, new TokenStore(o.tokenFile))
    this.transfers = new TransferApi(api, this.auth)
    this.download = new DownloadApi(this.transport, o.apiKey, o.retry, o.download)
    this.upload = new UploadApi(this.transport, o.retry, o.upload)
  }

  /** Whether the service can be reached at all (learnt from every request). */
  get connectivity(): Connectivity {
    return this.transport.connectivity
  }

  /** Close every connection; the client cannot be used afterwards. */
  close(): Promise<void> {
    return this.transport.close()
  }
}
