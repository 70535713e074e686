// Names that file managers, desktops and shells look for in every folder they open.
// Looking them up must cost nothing: unless the folder's listing is already in memory
// (then a real file of that name is found as usual, nothing is hidden), they answer
// ENOENT at once, without a call to the service.

const EXACT = new Set([
  '.DS_Store', '.hidden', '.directory', '.Trash', '.localized', '.xdg-volume-info',
  '.Spotlight-V100', '.fseventsd', '.metadata_never_index', '.git', '.hg', '.svn', '.bzr',
])
const CASE_INSENSITIVE = new Set(['desktop.ini', 'autorun.inf', 'thumbs.db', 'folder.jpg'])

export function isProbeName(name: string): boolean {
  return (
    EXACT.has(name) ||
    name.startsWith('._') ||
    name.startsWith('.Trash-') ||
    CASE_INSENSITIVE.has(name.toLowerCase())
  )
}
