// user.mime_type of a file, from its extension. A small table of what transfers mostly
// carry; anything else is application/octet-stream.

const TYPES: Record<string, string> = {
  txt: 'text/plain', md: 'text/markdown', csv: 'text/csv', tsv: 'text/tab-separated-values',
  html: 'text/html', htm: 'text/html', css: 'text/css', js: 'text/javascript', json: 'application/json',
  xml: 'application/xml', yaml: 'application/yaml', yml: 'application/yaml', ics: 'text/calendar',
  vcf: 'text/vcard', rtf: 'application/rtf', log: 'text/plain',
  pdf: 'application/pdf', doc: 'application/msword', xls: 'application/vnd.ms-excel',
  ppt: 'application/vnd.ms-powerpoint',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  odt: 'application/vnd.oasis.opendocument.text', ods: 'application/vnd.oasis.opendocument.spreadsheet',
  odp: 'application/vnd.oasis.opendocument.presentation', epub: 'application/epub+zip',
  jpg: 'image/jpeg', jpeg: 'image/jpeg', png: 'image/png', gif: 'image/gif', webp: 'image/webp',
  svg: 'image/svg+xml', bmp: 'image/bmp', tif: 'image/tiff', tiff: 'image/tiff', heic: 'image/heic',
  ico: 'image/vnd.microsoft.icon', psd: 'image/vnd.adobe.photoshop',
  mp3: 'audio/mpeg', wav: 'audio/wav', flac: 'audio/flac', ogg: 'audio/ogg', m4a: 'audio/mp4', aac: 'audio/aac',
  mp4: 'video/mp4', m4v: 'video/mp4', mov: 'video/quicktime', mkv: 'video/x-matroska', webm: 'video/webm',
  avi: 'video/x-msvideo', wmv: 'video/x-ms-wmv',
  zip: 'application/zip', gz: 'application/gzip', tgz: 'application/gzip', tar: 'application/x-tar',
  bz2: 'application/x-bzip2', xz: 'application/x-xz', '7z': 'application/x-7z-compressed',
  rar: 'application/vnd.rar', iso: 'application/x-iso9660-image', dmg: 'application/x-apple-diskimage',
  exe: 'application/vnd.microsoft.portable-executable', msi: 'application/x-msi',
  apk: 'application/vnd.android.package-archive', sqlite: 'application/vnd.sqlite3', db: 'application/vnd.sqlite3',
}

export const DEFAULT_MIME_TYPE = 'application/octet-stream'

export function mimeTypeOf(fileName: string): string {
  const base = fileName.slice(fileName.lastIndexOf('/') + 1)
  const dot = base.lastIndexOf('.')
  if (dot <= 0) return DEFAULT_MIME_TYPE
  return TYPES[base.slice(dot + 1).toLowerCase()] ?? DEFAULT_MIME_TYPE
}
