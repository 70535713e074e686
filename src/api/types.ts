// Wire types of the Transfer Service's published interface (version 2.0).
// This is the one module the client (src/api) and the local service (src/emulator) share:
// field names and types exactly as the interface publishes them.

/** ServiceStatusEnum, in the interface's order: `errorcode` is the zero-based position here. */
export const SERVICE_STATUSES = [
  'OK', 'UnknownError', 'InvalidParameter', 'InputParameterMissing', 'InvalidEmail', 'NotFound',
  'CantRemoveLastCorpAdmin', 'CantRemoveYourself', 'CantRemoveAdminRoleForYourself', 'ServiceInterruption',
  'ImageThumbTooExpensive', 'MissingApikey', 'InvalidApikey', 'ApiKeyQuotaExceeded', 'RateLimitExceeded',
  'WrongUsernamePassword', 'PasswordTooWeak', 'InvalidOrExpiredLoginToken', 'AccountExpired',
  'CaptchaRequiredForNextLogin', 'LDAPUnableToCreateUser', 'LDAPWrongUsernamePassword', 'AccessDenied',
  'CorpAuthenticationRequired', 'InvalidRequest', 'UseSsoLink', 'SsoSessionExpired',
  'SsoCompanyDoesNotUseAdLogin', 'SsoGroupIdNotSupported', 'SsoSignatureInvalid', 'TwoFactorTokenNotFound',
  'TwoFactorUserNotFound', 'TwoFactorPinNotValid', 'PasswordResetRequired', 'SsoUserDisabled',
  'SsoLoginGeneralError', 'SsoMissingAuthCode', 'RefreshTokenExpired', 'RefreshTokenAlreadyUsed',
  'SsoResetPasswordBlocked', 'AuthorizationFailure', 'CorpAuthorizationFailed',
  'BusinessAccountExistsRegistrationRequired', 'UserAccountExistsLoginRequired', 'Blocked',
  'AllFileserversBusy', 'FreeLimitReached', 'AccountExpiredAndOutOfTransferCredits', 'EmailNotVerified',
  'FeatureAvailableForRegisteredUsers', 'FileSizeBlockSender', 'FileSizeBlockRecipient', 'TooManyRecipients',
  'InvalidTransferState', 'TransferExpired', 'PasswordRequired', 'UploadNotComplete', 'FileIsDeleted',
  'UploadRecentlyUpdated', 'FileIsInfected', 'SubscriptionNotFound', 'EmailAlreadyRegistered',
  'SignupFormNotAccepted', 'SessionPasswordNotFound', 'SessionCustRefNotFound', 'AllUserLicencesesInUse',
  'RegistrationRequired', 'PaymentMethodNotAccepted', 'SubscriptionCancellationFailed',
  'InvalidSubscriptionState', 'PaymentFailed', 'ReceiptVerificationError', 'ReceiptAlreadyUsedForActivation',
  'SubscriptionNotPaid', 'SubscriptionAlreadyActivated', 'SubscriptionPurchaseAckFailed', 'InvoiceFailure',
  'InvalidDowngrade', 'InvalidDataState', 'InvalidMembership', 'ContactsLimitReached', 'StorageCapReached',
  'ContactsFileParseError', 'RecoveryNotPossible', 'ImageFileError', 'ContactDuplicate', 'ChunkDownloadError',
  'FileOperationError', 'IncomingPageBlockedInOverdue', 'NotAVideo', 'OperationCancelled', 'VideoFileError',
  'FileRequestRecipientLimitTrial', 'FileRequestRecipientLimitBasic', 'FileRequestShareLimitTrial',
  'FileRequestShareLimitBasic', 'FileRequestBlock', 'FileRequestShareLimitTimeframe',
] as const

export type ServiceStatus = (typeof SERVICE_STATUSES)[number]

/** errorcode of a responsestatus: its zero-based position in the enumeration (docs/design.md). */
export function errorCodeOf(status: ServiceStatus): number {
  return SERVICE_STATUSES.indexOf(status)
}

export function isServiceStatus(value: unknown): value is ServiceStatus {
  return typeof value === 'string' && (SERVICE_STATUSES as readonly string[]).includes(value)
}

export const TRANSFER_STATES = ['STATUS_STARTED', 'STATUS_COMPLETE', 'STATUS_CANCELLED', 'STATUS_DELETED'] as const
export type TransferState = (typeof TRANSFER_STATES)[number]

export interface ValidationError {
  propertyName: string
  errorCode: ServiceStatus
  errorMessage: string | null
}

/** The envelope of every JSON operation on {base_url}. */
export interface Envelope<T> {
  responsestatus: ServiceStatus
  errorid: string | null
  errormessage: string | null
  data: T | null
  errorcode: number | null
  validationerrors?: ValidationError[] | null
}

export interface TransferRecipient {
  email: string | null
  downloadlink: string | null
  delivered: boolean
  deliveryerror: string | null
}

export interface Video {
  size: number
  resolution: number
  downloadUrl: string | null
}

export type DownloadType = 'SingleFile' | 'MultipleFiles' | 'EntireTransfer'

/** A download tracking record. */
export interface Download {
  downloaddate: number
  ip: string
  email: string
  location: string
  locationurl: string
  locationflag: string | null
  kBps: number | null
  filename: string | null
  filesize: number | null
  downloadtype: DownloadType
}

export interface FileDto {
  filename: string | null
  filesize: number | null
  downloadurl: string
  fileid: string | null
  thumbid: string
  previewurl: string | null
  smallpreview: string | null
  mediumpreview: string | null
  largepreview: string | null
  hascustompreview: boolean | null
  hascustomthumbnail: boolean | null
  videopreview: Record<string, Video> | null
  downloads: Download[] | null
  filetype: string | null
  filetypedescription: string | null
  category: string
  transferid: string
  md5: string | null
  suspecteddamage: boolean | null
}

export interface CustomField {
  customfieldid: string
  defaultvalue: string
  description: string
  label: string
  listitems: string
  type: string
  placeholder: string
  value: string
  barcodeimage: string
  customLabel: string | null
  required: boolean | null
  visible: boolean | null
  rendertype: number
  sortorder: number | null
  length: number | null
  startValue: number | null
  removable: boolean
  editableType: boolean
  editableRequired: boolean
}

export interface FilesDbExplorerItem {
  uploadItemId: string
  type: string
  name: string
  status: string | null
  downloadurl: string | null
  smallpreview: string | null
  md5: string | null
  filesize: number | null
}

export interface FilesDbExplorerView {
  filesToken: string | null
  parentItemId: string | null
  offset: number
  limit: number
  total: number
  itemsLeft: number
  hasMore: boolean
  items: FilesDbExplorerItem[]
}

export interface Transfer {
  to: string[]
  recipients: TransferRecipient[]
  failedRecipients: number
  from: string | null
  subject: string
  message: string
  expiredate: number
  extendedexpiredate?: number
  sentdate: number
  notify: boolean | null
  status: TransferState
  id: string
  trackid: string | null
  url: string
  size: number | null
  customlogourl: string | null
  compressedfileurl: string
  compressedfilestatus: string
  compressedfileformat: string
  torrentstatus: string
  torrenturl: string
  days: number
  isexpired: boolean
  source: string | null
  key: string | null
  fileserver: string
  fileserverurl: string
  fileserverurl_main: string
  footertext: string
  containsmorefiles: number | null
  customfields?: CustomField[]
  files: FileDto[]
  filesdb: boolean
  hasfilesonotherfileserver: boolean
  fileExplorer: FilesDbExplorerView
  numberoffiles: number
  numberofdownloads: number
  downloads: Download[]
  antivirusscanstatus: string
  passwordprotected: boolean
  iconcolor: string
  iconletter: string
  ftphost: string
  region: string | null
  protocol: string | null
  e2ee: boolean | null
  kind: string | null
  ftpcorppasswordrequired: boolean
  udpthreshold: number
  permanent: boolean
  maxdays: number
  allowediting: boolean
  allowforwarding?: boolean
  alloweditingexpiredate: boolean
  blockdownloads: boolean | null
  infected: boolean
  infected_deleted: string[]
}

export type SignInStatus = 'Success' | 'TwoFactorRequired' | 'NotAuthorized'

export interface LoginResult {
  logintoken: string
  logintokenExpireDate: number
  refreshtoken: string
  twoFactorToken: string
  signInStatus: SignInStatus | string
}

export interface RefreshResult {
  logintoken: string
  logintokenExpireDate: number
  refreshtoken: string
}

export interface InitializeResult {
  transferid: string
  transferkey: string
  transferurl: string
  region: string
  alternate_urls: string[]
  transferip: string
  udpport: number
  udpthreshold: number
  customfields: Record<string, string>
  filesdb: { enabled: boolean; uploadurl: string; ackurl: string }
}

/** Body of POST /transfer/initialize; whether each field is required is not shown. */
export interface InitializeRequest {
  to?: string[]
  subject?: string
  message?: string
  password?: string
  confirmation?: boolean
  notify?: boolean
  days?: number
  transfersize?: number
  filesdb?: boolean
  sourcedetails?: string
  companyid?: string
  fileRequestId?: string
  fileRequestShareId?: string
  incomingpageid?: string
  incomingpassword?: string
  customfields?: Array<{ id: string; value: string }>
}

export interface CapabilityState {
  state: string
  reason: string
  link: string
}

export interface Subscription {
  active: boolean
  showExVatLabelOnPrices: boolean
  allowMultipleUsers: boolean
  isTrial: boolean
  expireDate: number
  licenseCount: number
  licensePrice: number
  pricePerTBPerUser: number
  subscriptionPrice_Users: number
  subscriptionPrice_Storage: number
  subscriptionPrice_Total: number
  licensesInUse: number
  nextPaymentDate: number
  storageBytesInUse: number
  storageBytesLimit: number
  storageBytesIncludedInMembership: number
  storageBytesAdditional: number
  currency: string
  interval: string
  membershipname: string
  changeSubscriptionMobileAppLink: string
  paymentGateway: string
  canChangePlan: CapabilityState
  canUpdatePaymentMethod: CapabilityState
  canChangeInterval: CapabilityState
  canManageLicenses: CapabilityState
  canChangeLicenseCount: CapabilityState
  canCancel: CapabilityState
  canUpgrade: CapabilityState
  paymentMethod: {
    paymentMethod: string
    creditCardBrand: string
    creditCardLast4: string
    creditCardName: string
    creditCardExpireYear: number
    creditCardExpireMonth: number
    walletEmail: string
    paymentMethodTextInfo: string
  }
}

export interface ContactGroup {
  numberofcontacts: number
  contactgroupid: string
  contactgroupname: string
  corp_shared: boolean
  allow_edit: boolean
  contacts: ContactGroup[]
}

/** The inbox owner's account, as GET /transfer/inbox returns it. */
export interface InboxOwner {
  maxdownloads: number
  maxdays: number
  maxtransfersize: number
  defaultdays: number
  defaultdownloads: number
  role: number
  created: number
  storageinuse: number
  storagelimit: number
  passwordMinLength: number
  maxrecipients: number
  maxrecipientsaftertrial: number
  membershipname: string
  id: string
  name: string
  chathash: string
  email: string
  mobilephone: string
  signature: string
  defaultsubject: string
  country: string
  startpage: string
  ssoPlatform: string
  companyname: string
  companyid: string
  buttonscolor: string
  buttonstextcolor: string
  companylogo: string
  loglevel: string
  istrial: boolean
  defaultnotify: boolean
  defaultconfirmation: boolean
  newsletter: boolean
  allowCommunicationEmails: boolean
  cansend: boolean
  expired: boolean
  emailverifiedforsending: boolean
  freelimitreached: boolean
  admin: boolean
  forcepasswordonincoming: boolean
  canreceivefiles: boolean
  showallrecipients: boolean
  canstorefilesforever: boolean
  enforcepasswordpolicy: boolean
  udpenabled: boolean
  allowunlimiteddays: boolean
  allow3months: boolean
  canAccessOthersFiles: boolean
  twoFactorEnabled: boolean
  allowautodownloads: boolean
  allowpasswordprotection: boolean
  allowdownloadtracking: boolean
  allowe2ee: boolean
  allowPortals: boolean
  allowMultiplePortals: boolean
  canManageSubscription: boolean
  requireE2EEwhenSending: boolean
  requireE2EEwhenReceiving: boolean
  subscription: Subscription
  contactgroups: ContactGroup[]
}

export interface InboxResult {
  transfers: Transfer[]
  portal: { portalId: string; friendlyName: string; uploadCount: number; isDefault: boolean }
  inboxOwner: InboxOwner
}

/** The first line a running local service prints on stdout (`transferfs serve`). */
export interface ServiceAnnouncement {
  baseUrl: string
  uploadUrl: string
  ca: string
  apiKey: string
  user: { email: string; password: string }
  controls?: boolean
}
