// The send core: the writable outbox, staging, settle, journal, upload engine, status.
export { OutboxFs, type OutboxFsConfig, STAGING_DIR, JOURNAL_DIR, SENT_FILE } from './outbox-fs.js'
export type { Sender, SentLog, SentRecord, Clock, CancelTimer, InitializeAnswer, UploadFileRequest } from './ports.js'
export { systemClock, ManualClock } from './clock.js'
export { DEFAULT_SEND_OPTIONS, resolveSendOptions, type SendOptions, type SendSettings } from './options.js'
export { FileSentLog } from './sent-log.js'
export { isTemporaryName, recipientsOf, isEmailAddress } from './names.js'
export { buildStatus, renderStatusText, renderStatusJson, type SendStatus, type SendStatusEntry, type SendState } from './status.js'
export { isRefusal, describeError } from './engine.js'
