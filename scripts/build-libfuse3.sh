#!/usr/bin/env bash
# Builds libfuse 3.17 (soname libfuse3.so.4, the one Debian 13 ships) from Debian's own source
# package into a prefix of its own, and prints that prefix on the last line of stdout (all else
# goes to stderr). The addon for libfuse3.so.4 is built against it
# (`node scripts/build-fuse-addon.mjs --libfuse3.so.4`, and `--prebuilds`), and the vitest
# project `libfuse3.17` mounts with it, on a machine whose own libfuse 3 is older.
#
# The source comes from trixie through apt, never from anywhere else: apt checks it against the
# archive's signed index, dpkg-source against the .dsc. apt runs with a configuration of its
# own (a sources list naming only trixie's deb-src, lists and cache in our folder), so the
# system's apt setup is neither read for sources nor changed. Only the library is built: the
# mount helper stays the system's setuid fusermount3 (a helper built here could not be setuid,
# and libfuse would try it first).
#
# Everything lives in ${XDG_CACHE_HOME:-~/.cache}/transferfs-build/libfuse-<version>/ (apt's
# lists and downloads, the unpacked source, the build, the prefix); once the prefix is complete
# a run does nothing else. Missing tools are installed with apt (--no-remove), as the bootstrap
# does, through sudo when not root; without either the command to run is printed.
# --cached: print the prefix if it is complete, else exit 1; never builds, installs or downloads.
# --arch arm64: cross-builds it for that architecture (the arm64 package's libfuse3.so.4 addon is
# built against it) into prefix-arm64/, with Debian's cross compiler (crossbuild-essential-arm64)
# and a meson cross file; the source is the one already unpacked for this machine's build when
# there is one (nothing is fetched then), else fetched the same way.
set -euo pipefail

# The upstream release, which fixes the soname and the ABI; the newest Debian revision of it
# that trixie has is built (a stable release only takes fixes as new revisions).
UPSTREAM=3.17.2
SUITE=trixie
MIRROR=http://deb.debian.org/debian

usage() { echo "usage: bash scripts/build-libfuse3.sh [--cached] [--arch arm64]" >&2; exit 2; }
cached= arch=
while [ $# -gt 0 ]; do
  case "$1" in
    --cached) cached=1 ;;
    --arch) [ $# -ge 2 ] || usage; arch=$2; shift ;;
    *) usage ;;
  esac
  shift
done
# Another architecture than this machine's: Debian's name → the GNU triplet of its cross
# toolchain and meson's CPU family.
triplet= cpu=
if [ -n "$arch" ] && [ "$arch" != "$(dpkg --print-architecture 2>/dev/null)" ]; then
  case "$arch" in
    arm64) triplet=aarch64-linux-gnu cpu=aarch64 ;;
    *) echo "build-libfuse3: cross-builds for arm64 only, not $arch" >&2; exit 2 ;;
  esac
fi

dir=${XDG_CACHE_HOME:-$HOME/.cache}/transferfs-build/libfuse-$UPSTREAM
prefix=$dir/prefix${triplet:+-$arch}
build=$dir/build${triplet:+-$arch}
stamp=$prefix/.complete

# The prefix counts once everything was installed: the stamp is written last.
complete() { [ -f "$stamp" ] && [ -e "$prefix/lib/libfuse3.so.4" ] && [ -f "$prefix/lib/pkgconfig/fuse3.pc" ]; }

if [ -n "$cached" ]; then
  complete && { echo "$prefix"; exit 0; }
  exit 1
fi
if complete; then
  echo "$prefix"
  exit 0
fi

# stdout is for the prefix alone: everything the tools say goes to stderr.
exec 3>&1 1>&2
say() { echo "build-libfuse3: $*" >&2; }

# One build at a time (two bootstraps, or a pack in a copy of the checkout): the second waits,
# then finds the prefix complete.
mkdir -p "$dir"
exec 9>"$dir/.lock"
flock 9
if complete; then
  echo "$prefix" >&3
  exit 0
fi

# command → the Debian package that has it.
declare -A tools=([apt-get]=apt [dpkg-source]=dpkg-dev [xz]=xz-utils [meson]=meson [ninja]=ninja-build [cc]=gcc [pkg-config]=pkgconf)
[ -z "$triplet" ] || tools[$triplet-gcc]=crossbuild-essential-$arch
missing=()
for tool in "${!tools[@]}"; do command -v "$tool" >/dev/null || missing+=("${tools[$tool]}"); done
if [ ${#missing[@]} -gt 0 ]; then
  if ! command -v apt-get >/dev/null; then
    say "building libfuse $UPSTREAM needs Debian's apt (its source comes from Debian's archive) and ${missing[*]}"
    exit 1
  fi
  install=(apt-get install -y --no-remove "${missing[@]}")
  if [ "$(id -u)" -eq 0 ]; then sudo=()
  elif command -v sudo >/dev/null; then sudo=(sudo)
  else
    say "building libfuse $UPSTREAM needs ${missing[*]}; installing needs root: run \`su -c '${install[*]}'\`, then run this again"
    exit 1
  fi
  say "installing ${missing[*]}, to build libfuse $UPSTREAM"
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive "${install[@]}"
fi

started=$SECONDS
# The source, unpacked into src/, and src/.unpacked naming its version once it is complete.
unpacked=$dir/src/.unpacked
fetch_source() {
  mkdir -p "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial" "$dir/apt/sources.list.d"
  echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $MIRROR $SUITE main" > "$dir/apt/sources.list"
  # Given on the command line, these override anything in the system's apt.conf.d.
  apt=(
    -o "Dir::Etc::SourceList=$dir/apt/sources.list"
    -o "Dir::Etc::SourceParts=$dir/apt/sources.list.d"
    -o "Dir::State::Lists=$dir/apt/lists"
    -o "Dir::Cache=$dir/apt/cache"
  )
  # As root, apt downloads as the user _apt, who cannot enter a home folder's cache (apt would fall
  # back to root itself, with a warning).
  [ "$(id -u)" -ne 0 ] || apt+=(-o APT::Sandbox::User=root)

  say "fetching $SUITE's source index"
  if ! apt-get "${apt[@]}" -q update; then
    # A Debian 12 whose debian-archive-keyring predates trixie cannot check trixie's index.
    say "apt could not fetch $SUITE's source index (above); if it names a missing key (NO_PUBKEY), upgrade debian-archive-keyring"
    exit 1
  fi
  version=
  for v in $(apt-cache "${apt[@]}" showsrc fuse3 | sed -n 's/^Version: //p'); do
    case "$v" in "$UPSTREAM"-*) ;; *) continue ;; esac
    if [ -z "$version" ] || dpkg --compare-versions "$v" gt "$version"; then version=$v; fi
  done
  if [ -z "$version" ]; then
    say "$SUITE has no fuse3 $UPSTREAM any more (it has: $(apt-cache "${apt[@]}" showsrc fuse3 | sed -n 's/^Version: //p' | tr '\n' ' ')); change UPSTREAM in $0"
    exit 1
  fi

  say "downloading fuse3 $version"
  rm -rf "$dir/src"
  mkdir -p "$dir/src"
  (cd "$dir/src" && apt-get "${apt[@]}" -q source --download-only "fuse3=$version")
  # apt checked each file against the archive's signed index; dpkg-source checks them against
  # the .dsc. It also looks for the uploader's key to check the .dsc's own signature, which only
  # the debian-keyring package holds: its "cannot verify inline signature" warning is expected.
  (cd "$dir/src" && dpkg-source -x "fuse3_${version#*:}.dsc" libfuse)
  echo "fuse3 $version from $SUITE" > "$unpacked"
}
# This machine's build fetches the newest revision afresh; a cross build takes the source that
# is unpacked already, as it is (one this machine's prefix was built from counts too).
if [ -n "$triplet" ] && [ ! -f "$unpacked" ] && [ -f "$dir/prefix/.complete" ] && [ -d "$dir/src/libfuse" ]; then
  cp "$dir/prefix/.complete" "$unpacked"
fi
if [ -n "$triplet" ] && [ -f "$unpacked" ]; then
  version=$(sed -n 's/^fuse3 \([^ ]*\) .*/\1/p' "$unpacked")
else
  fetch_source
fi

say "building libfuse $UPSTREAM (fuse3 $version) into $prefix"
rm -rf "$build" "$prefix"
cross=()
if [ -n "$triplet" ]; then
  # Debian's cross toolchain, and pkg-config reading that architecture's multiarch folder only.
  cat > "$dir/cross-$arch.ini" <<EOF
[binaries]
c = '$triplet-gcc'
ar = '$triplet-ar'
strip = '$triplet-strip'
pkg-config = 'pkg-config'

[properties]
pkg_config_libdir = '/usr/lib/$triplet/pkgconfig:/usr/share/pkgconfig'

[host_machine]
system = 'linux'
cpu_family = '$cpu'
cpu = '$cpu'
endian = 'little'
EOF
  cross=(--cross-file "$dir/cross-$arch.ini")
fi
# The library alone: no helper (see above), examples or tests. libdir is plain lib/, so the
# prefix looks the same on every distribution.
meson setup "$build" "$dir/src/libfuse" "${cross[@]}" --prefix="$prefix" --libdir=lib --buildtype=release \
  -Dutils=false -Dexamples=false -Dtests=false
ninja -C "$build"
meson install -C "$build" --no-rebuild
echo "fuse3 $version from $SUITE${triplet:+, for $arch}" > "$stamp"
complete || { say "the install left no $prefix/lib/libfuse3.so.4"; exit 1; }
say "built libfuse $UPSTREAM in $((SECONDS - started)) s"
echo "$prefix" >&3
