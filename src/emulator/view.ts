// Stored transfers as the wire types show them to a given caller (docs/design.md, Visibility).
import type { ContactGroup, Download, FileDto, InboxOwner, Transfer } from '../api/types.js'
import { downloadToken, type ServiceContext } from './context.js'
import { SETTINGS } from './settings.js'
import { hasThumbnail } from './thumbnails.js'
import type { StoredFile, StoredTransfer, User } from './store.js'

export interface ViewOptions {
  /** The caller sees key, recipients and download tracking. */
  full: boolean
  /** The recipient's trackid when the transfer was reached through it (download URLs then carry it). */
  trackid: string | null
  /** The password was given: download URLs carry a signed token. */
  unlocked: boolean
  withDetails: boolean
  excludeFiles: boolean
  excludeDownloads: boolean
  /** Files to include; -1 = all. */
  filesLimit: number
  /** FileDto property names to keep; null = all. */
  fileProperties: string[] | null
}

export const DEFAULT_VIEW: ViewOptions = {
  full: false, trackid: null, unlocked: false, withDetails: true, excludeFiles: false,
  excludeDownloads: false, filesLimit: -1, fileProperties: null,
}

export const FILE_PROPERTIES: ReadonlyArray<keyof FileDto> = ['filename', 'filesize', 'downloadurl', 'fileid', 'thumbid',
  'previewurl', 'smallpreview', 'mediumpreview', 'largepreview', 'hascustompreview', 'hascustomthumbnail',
  'videopreview', 'downloads', 'filetype', 'filetypedescription', 'category', 'transferid', 'md5', 'suspecteddamage']

const CATEGORIES: Record<string, string> = {
  jpg: 'image', jpeg: 'image', png: 'image', gif: 'image', webp: 'image', svg: 'image', heic: 'image',
  mp4: 'video', mov: 'video', mkv: 'video', avi: 'video', webm: 'video',
  mp3: 'audio', wav: 'audio', flac: 'audio', ogg: 'audio', m4a: 'audio',
  zip: 'archive', gz: 'archive', tar: 'archive', '7z': 'archive', rar: 'archive',
  pdf: 'document', doc: 'document', docx: 'document', txt: 'document', md: 'document', csv: 'document',
  xls: 'document', xlsx: 'document', ppt: 'document', pptx: 'document', json: 'document',
}

function extensionOf(name: string): string {
  const base = name.split('/').pop() ?? name
  const dot = base.lastIndexOf('.')
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : ''
}

function urlParams(ctx: ServiceContext, transfer: StoredTransfer, opts: ViewOptions): string {
  const params = new URLSearchParams()
  if (opts.trackid) params.set('trackid', opts.trackid)
  if (transfer.password !== null && opts.unlocked) params.set('token', downloadToken(ctx, transfer))
  const text = params.toString()
  return text ? `?${text}` : ''
}

export function fileUrl(ctx: ServiceContext, transfer: StoredTransfer, file: StoredFile, opts: ViewOptions): string {
  return `${ctx.fileOrigin}/download/${transfer.id}/${file.fileid}${urlParams(ctx, transfer, opts)}`
}

/** The file's thumbnail on the file server, null when it has none (thumbnails.ts). */
function previewUrl(ctx: ServiceContext, transfer: StoredTransfer, file: StoredFile, opts: ViewOptions): string | null {
  if (!hasThumbnail(file)) return null
  return `${ctx.fileOrigin}/preview/${transfer.id}/${file.fileid}${urlParams(ctx, transfer, opts)}`
}

export function fileView(ctx: ServiceContext, transfer: StoredTransfer, file: StoredFile, opts: ViewOptions): Partial<FileDto> {
  const ext = extensionOf(file.name)
  const preview = previewUrl(ctx, transfer, file, opts)
  const dto: FileDto = {
    filename: file.name,
    filesize: file.size,
    downloadurl: fileUrl(ctx, transfer, file, opts),
    fileid: file.fileid,
    thumbid: file.fileid,
    previewurl: preview,
    smallpreview: preview,
    mediumpreview: preview,
    largepreview: preview,
    hascustompreview: false,
    hascustomthumbnail: false,
    videopreview: null,
    downloads: opts.full && !opts.excludeDownloads ? file.downloads.map((d) => ({ ...d })) : null,
    filetype: ext || null,
    filetypedescription: ext ? `${ext.toUpperCase()} file` : 'File',
    category: CATEGORIES[ext] ?? 'other',
    transferid: transfer.id,
    md5: file.md5,
    suspecteddamage: false,
  }
  if (!opts.fileProperties) return dto
  const picked: Partial<FileDto> = {}
  for (const name of opts.fileProperties) (picked as Record<string, unknown>)[name] = dto[name as keyof FileDto]
  return picked
}

export function allDownloads(transfer: StoredTransfer): Download[] {
  return [...transfer.files.flatMap((f) => f.downloads), ...transfer.transferDownloads]
    .sort((a, b) => a.downloaddate - b.downloaddate)
}

export function transferView(ctx: ServiceContext, transfer: StoredTransfer, opts: ViewOptions): Transfer {
  const now = ctx.clock.now()
  const gone = transfer.status === 'STATUS_CANCELLED' || transfer.status === 'STATUS_DELETED'
  const locked = transfer.password !== null && !opts.unlocked
  const showFiles = opts.withDetails && !opts.excludeFiles && !gone && !locked
  const showDownloads = opts.full && opts.withDetails && !opts.excludeDownloads
  const limit = opts.filesLimit < 0 ? transfer.files.length : opts.filesLimit
  const files = showFiles ? transfer.files.slice(0, limit) : []
  const downloads = allDownloads(transfer)
  const size = transfer.files.length > 0 ? transfer.files.reduce((n, f) => n + f.size, 0) : (transfer.transfersize ?? 0)
  const letterSource = transfer.from ?? transfer.subject ?? ''
  const params = urlParams(ctx, transfer, opts)
  const view: Transfer = {
    to: opts.full ? transfer.recipients.map((r) => r.email) : [],
    recipients: opts.full && opts.withDetails ? transfer.recipients.map((r) => ({
      email: r.email,
      downloadlink: recipientLink(ctx, transfer.id, r.trackid),
      delivered: r.delivered,
      deliveryerror: null,
    })) : [],
    failedRecipients: 0,
    from: transfer.from,
    subject: transfer.subject,
    message: transfer.message,
    expiredate: transfer.permanent ? 0 : transfer.expiredate,
    sentdate: transfer.sentdate,
    notify: transfer.notify,
    status: transfer.status,
    id: transfer.id,
    trackid: opts.trackid,
    url: `${ctx.fileOrigin}/d/${transfer.id}${params}`,
    size,
    customlogourl: null,
    compressedfileurl: `${ctx.fileOrigin}/zip/${transfer.id}${params}`,
    compressedfilestatus: 'ready',
    compressedfileformat: 'zip',
    torrentstatus: 'none',
    torrenturl: '',
    days: transfer.days,
    isexpired: !transfer.permanent && transfer.expiredate <= now,
    source: transfer.source,
    key: opts.full ? transfer.key : null,
    fileserver: new URL(ctx.fileOrigin).host,
    fileserverurl: ctx.fileOrigin,
    fileserverurl_main: ctx.fileOrigin,
    footertext: '',
    containsmorefiles: showFiles ? Math.max(0, transfer.files.length - files.length) : 0,
    files: files.map((f) => fileView(ctx, transfer, f, { ...opts, excludeDownloads: !showDownloads }) as FileDto),
    filesdb: false,
    hasfilesonotherfileserver: false,
    fileExplorer: { filesToken: null, parentItemId: null, offset: 0, limit: 0, total: 0, itemsLeft: 0, hasMore: false, items: [] },
    numberoffiles: gone ? 0 : transfer.files.length,
    numberofdownloads: downloads.length,
    downloads: showDownloads ? downloads.map((d) => ({ ...d })) : [],
    antivirusscanstatus: 'clean',
    passwordprotected: transfer.password !== null,
    iconcolor: iconColor(transfer.id),
    iconletter: (letterSource.trim()[0] ?? '?').toUpperCase(),
    ftphost: '',
    region: 'local',
    protocol: 'https',
    e2ee: false,
    kind: transfer.companyid ? 'incoming' : 'regular',
    ftpcorppasswordrequired: false,
    udpthreshold: 0,
    permanent: transfer.permanent,
    maxdays: SETTINGS.defaultMaxDays,
    allowediting: false,
    allowforwarding: transfer.allowforwarding,
    alloweditingexpiredate: false,
    blockdownloads: false,
    infected: false,
    infected_deleted: [],
  }
  if (transfer.companyid) view.customfields = transfer.customfields.map((f, i) => customField(f, i))
  return view
}

export function recipientLink(ctx: ServiceContext, transferid: string, trackid: string): string {
  return `${ctx.fileOrigin}/d/${transferid}?trackid=${trackid}`
}

function iconColor(id: string): string {
  const palette = ['#1e88e5', '#43a047', '#e53935', '#8e24aa', '#fb8c00', '#00897b']
  return palette[parseInt(id.slice(0, 2), 16) % palette.length]!
}

function customField(f: { id: string; value: string }, index: number): NonNullable<Transfer['customfields']>[number] {
  return {
    customfieldid: f.id, defaultvalue: '', description: '', label: f.id, listitems: '', type: 'text',
    placeholder: '', value: f.value, barcodeimage: '', customLabel: null, required: false, visible: true,
    rendertype: 0, sortorder: index, length: null, startValue: null, removable: false, editableType: false,
    editableRequired: false,
  }
}

function contactGroups(user: User): ContactGroup[] {
  return user.contactgroups.map((g) => ({
    numberofcontacts: g.emails.length, contactgroupid: g.id, contactgroupname: g.name, corp_shared: false, allow_edit: true,
    contacts: g.emails.map((email) => ({
      numberofcontacts: 0, contactgroupid: email, contactgroupname: email, corp_shared: false, allow_edit: true, contacts: [],
    })),
  }))
}

export function inboxOwner(user: User, storageinuse: number): InboxOwner {
  const capability = { state: 'active', reason: '', link: '' }
  return {
    maxdownloads: 0, maxdays: user.maxdays, maxtransfersize: 0, defaultdays: user.defaultdays, defaultdownloads: 0,
    role: user.admin ? 1 : 0, created: user.created, storageinuse, storagelimit: user.storagelimit, passwordMinLength: 8,
    maxrecipients: user.maxrecipients, maxrecipientsaftertrial: user.maxrecipients,
    membershipname: 'Local', id: user.id, name: user.name, chathash: '', email: user.email, mobilephone: '',
    signature: '', defaultsubject: '', country: '', startpage: 'inbox', ssoPlatform: '', companyname: user.companyid,
    companyid: user.companyid, buttonscolor: '', buttonstextcolor: '', companylogo: '', loglevel: 'info',
    istrial: false, defaultnotify: false, defaultconfirmation: false, newsletter: false, allowCommunicationEmails: false,
    cansend: true, expired: false, emailverifiedforsending: true, freelimitreached: false, admin: user.admin,
    forcepasswordonincoming: false, canreceivefiles: true, showallrecipients: true,
    canstorefilesforever: user.canstorefilesforever, enforcepasswordpolicy: false, udpenabled: false,
    allowunlimiteddays: user.canstorefilesforever, allow3months: true, canAccessOthersFiles: user.admin,
    twoFactorEnabled: user.twoFactor, allowautodownloads: false, allowpasswordprotection: true,
    allowdownloadtracking: true, allowe2ee: false, allowPortals: true, allowMultiplePortals: true,
    canManageSubscription: false, requireE2EEwhenSending: false, requireE2EEwhenReceiving: false,
    subscription: {
      active: true, showExVatLabelOnPrices: false, allowMultipleUsers: true, isTrial: false, expireDate: 0,
      licenseCount: 1, licensePrice: 0, pricePerTBPerUser: 0, subscriptionPrice_Users: 0, subscriptionPrice_Storage: 0,
      subscriptionPrice_Total: 0, licensesInUse: 1, nextPaymentDate: 0, storageBytesInUse: storageinuse,
      storageBytesLimit: user.storagelimit, storageBytesIncludedInMembership: user.storagelimit, storageBytesAdditional: 0,
      currency: 'EUR', interval: 'year', membershipname: 'Local', changeSubscriptionMobileAppLink: '',
      paymentGateway: 'none', canChangePlan: capability, canUpdatePaymentMethod: capability,
      canChangeInterval: capability, canManageLicenses: capability, canChangeLicenseCount: capability,
      canCancel: capability, canUpgrade: capability,
      paymentMethod: {
        paymentMethod: 'none', creditCardBrand: '', creditCardLast4: '', creditCardName: '', creditCardExpireYear: 0,
        creditCardExpireMonth: 0, walletEmail: '', paymentMethodTextInfo: '',
      },
    },
    contactgroups: contactGroups(user),
  }
}
