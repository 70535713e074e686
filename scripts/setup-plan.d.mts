// Types of setup-plan.mjs, which stays plain JavaScript: it runs before npm ci and tsc.

/** The machine, as the bootstrap finds it. */
export interface Facts {
  mode: 'start' | 'test'
  /** Those of SONAMES the dynamic loader finds. */
  libraries: string[]
  /** Each mount helper found (fusermount3, fusermount), by real path, once. */
  helpers: { path: string; setuid: boolean }[]
  /** FUSE3_HEADER exists. */
  fuse3Headers: boolean
  /** Those of the commands in BUILD_TOOLS, PKG_CONFIG and TEST_TOOLS found on PATH. */
  commands: string[]
  /** Those of the modules in TEST_TOOLS the system's Python imports. */
  pythonModules: string[]
  /** Those of the paths in TEST_TOOLS that exist. */
  paths: string[]
  /** Those of the GObject typelibs in TEST_TOOLS ("Gtk-4.0") the system's Python loads. */
  typelibs: string[]
  /** The architectures besides its own that dpkg knows (`dpkg --print-foreign-architectures`). */
  foreignArchitectures: string[]
  /** Those of APT_NAMES apt has a candidate for. */
  candidates: string[]
  apt: boolean
  root: boolean
  sudo: boolean
}

/** Something to install when missing: found as a command, a Python module, a path (a folder or a header a package installs) or a GObject typelib. */
export interface Need {
  command?: string
  module?: string
  path?: string
  /** A GObject introspection library as name-version ("Gtk-4.0"), loaded through PyGObject: its file's path depends on the architecture. */
  typelib?: string
  /** apt's names for it, preferred first. */
  apt: string[]
  dnf: string
  why: string
}

export interface Plan {
  /** The packages missing (apt's names, or dnf's where there is no apt), each with why. */
  install: { name: string; why: string }[]
  /** To print first, in order. */
  messages: string[]
  /** To run before `update` (`dpkg --add-architecture`, for the packages named "name:arch"); null when none. */
  addArchitectures: string[][] | null
  /** To run before `command` (fresh lists may name the packages differently: plan again after it). */
  update: string[] | null
  /** The apt-get install to run; null when there is nothing to run. */
  command: string[] | null
  /** Non-zero: stop after the messages; what is left only the user can do. */
  exitCode: number
}

export const SONAMES: string[]
export const HELPERS: string[]
export const FUSE3_HEADER: string
export const APT_NAMES: string[]
export const BUILD_TOOLS: Need[]
export const PKG_CONFIG: Need
export const TEST_TOOLS: Need[]
export const ARM64_TOOLS: Need[]
export function planSetup(facts: Facts): Plan
export function librariesIn(ldconfigOutput: string): string[]
export function candidatesIn(aptCachePolicyOutput: string): string[]
