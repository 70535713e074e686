// The apt source of transferfs's own repository, one definition for every place that
// writes it: the package ships it (a conffile) with the repository's key, so that an
// installed transferfs is upgraded by `apt upgrade`; the repository publishes the same
// bytes at its root, for the first-time steps. The same bytes matter: a file the user
// wrote that differs from the package's conffile makes dpkg stop and ask at install.
import { PACKAGE } from './metadata.mjs'

/** The keyring's name, at the repository's root and in /usr/share/keyrings. */
export const KEYRING_NAME = `${PACKAGE}-archive-keyring.gpg`
/** Where the package installs the repository's public key (binary OpenPGP), managed by dpkg. */
export const KEYRING_PATH = `usr/share/keyrings/${KEYRING_NAME}`
/** The source's name, at the repository's root and in /etc/apt/sources.list.d. */
export const SOURCES_NAME = `${PACKAGE}.sources`
export const SOURCES_PATH = `etc/apt/sources.list.d/${SOURCES_NAME}`
/** The one suite and component the repository has. */
export const SUITE = 'stable'
export const COMPONENT = 'main'

/** The repository's URL as apt wants it: http(s), ending in one slash. */
export function repositoryUrl(url) {
  let parsed
  try {
    parsed = new URL(url)
  } catch {
    throw new Error(`--repo-url ${url}: not a URL (e.g. https://example.org/transferfs/)`)
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new Error(`--repo-url ${url}: apt fetches over https: or http:, not ${parsed.protocol}`)
  if (parsed.search || parsed.hash || parsed.username || parsed.password) throw new Error(`--repo-url ${url}: a repository's URL has no query, fragment or credentials`)
  return parsed.href.endsWith('/') ? parsed.href : `${parsed.href}/`
}

/** The deb822 source (sources.list(5)) naming the repository at url, checked by its own key. */
export function sourcesFile(url) {
  return [
    `# ${PACKAGE}'s own repository: \`apt upgrade\` brings its new versions.`,
    'Types: deb',
    `URIs: ${repositoryUrl(url)}`,
    `Suites: ${SUITE}`,
    `Components: ${COMPONENT}`,
    `Signed-By: /${KEYRING_PATH}`,
    '',
  ].join('\n')
}

/**
 * The lintian override a package with the source carries, with its reason. Debian's own
 * packages must not add apt sources; a vendor's package that updates itself through its own
 * repository does, and ships it as a conffile a user may edit or empty, not from a script.
 */
export const LINTIAN_OVERRIDE = `# The source of transferfs's own repository, so that apt upgrade brings its new versions: a
# conffile (no maintainer script writes apt configuration); docs/packaging.md.
${PACKAGE}: package-installs-apt-sources [${SOURCES_PATH}]
`
