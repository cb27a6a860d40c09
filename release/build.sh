#!/usr/bin/env bash
# release/build.sh - every file a release attaches, in one directory (docs/release.md).
#
#   release/build.sh [--out DIR] [--no-build] [--check-tag] [--print-config]
#
# In DIR (default target/release-artifacts), for VERSION from Cargo.toml:
#   lsm-VERSION-x86_64-linux         the Linux binary (checked: needs libc and libgcc_s only)
#   lsm-VERSION-x86_64-windows.exe   the Windows binary (x86_64-pc-windows-gnu)
#   lsm_VERSION_amd64.deb            /usr/bin/lsm, README, CHANGELOG, licences, and the worker's
#                                    user unit /usr/lib/systemd/user/lsm-worker.service
#   lsm-VERSION.mcpb                 MCP bundle (MCPB): manifest.json and both binaries
#   manifest.json                    the bundle's manifest, as inside the bundle
#   server.json                      MCP registry entry: the bundle's URL and SHA-256, the other
#                                    files' URLs and SHA-256 in its publisher-provided _meta
#   SHA256SUMS                       `sha256sum -c SHA256SUMS` in DIR checks every file above
#
#   --no-build      use the binaries as they are (CI: the build step made the Linux one, the wine
#                   step lsm.exe); without it `cargo build --release` makes both first (the
#                   Windows target needs `tests/bed/wine.sh install`: the rust target and MinGW)
#   --check-tag     refuse unless HEAD is tagged vVERSION and the work tree is clean (a release)
#   --print-config  print the settings below as resolved, build nothing
#
# Settings (environment). What a maintainer fills in; unset, each is a placeholder that says so
# (the project has no public download location or registry namespace yet):
#   LSM_RELEASE_BASE_URL     URL of the directory the files will be downloaded from, e.g. the
#                            release's download URL (placeholder: https://releases.invalid/...)
#   LSM_RELEASE_SERVER_NAME  MCP registry name: reverse DNS of a namespace you can prove you own,
#                            e.g. io.github.OWNER/lsm (placeholder: invalid.placeholder/lsm)
#   LSM_RELEASE_MAINTAINER   the .deb's Maintainer, "Name <email>"
#   LSM_RELEASE_AUTHOR       the bundle's author name (default: lsm contributors)
#   LSM_RELEASE_LINUX_BIN    default ${CARGO_TARGET_DIR:-target}/release/lsm
#   LSM_RELEASE_WINDOWS_EXE  default ${CARGO_TARGET_DIR:-target}/x86_64-pc-windows-gnu/release/lsm.exe
# Needs: bash, python3 (3.11+), dpkg-deb and dpkg-shlibdeps (dpkg-dev), readelf (binutils), git.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
WIN_TARGET=x86_64-pc-windows-gnu
OUT=$ROOT/target/release-artifacts
BUILD=1
CHECK_TAG=0
PRINT_CONFIG=0

say() { printf '[release %s] %s\n' "$(date +%T)" "$*" >&2; }
die() { say "ERROR: $*"; exit 1; }

while (($#)); do
  case $1 in
    --out) OUT=${2:?--out needs a directory}; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    --check-tag) CHECK_TAG=1; shift ;;
    --print-config) PRINT_CONFIG=1; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
done

VERSION=$(python3 -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["workspace"]["package"]["version"])' \
  "$ROOT/Cargo.toml") || die "no [workspace.package] version in Cargo.toml"
COMMIT=$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)
PLACEHOLDERS=()
setting() { # setting NAME DEFAULT: the variable's value, or DEFAULT noted as a placeholder
  if [[ -n ${!1:-} ]]; then printf '%s' "${!1}"; else printf '%s' "$2"; fi
}
BASE_URL=$(setting LSM_RELEASE_BASE_URL "https://releases.invalid/PLACEHOLDER-set-LSM_RELEASE_BASE_URL/v$VERSION")
BASE_URL=${BASE_URL%/}
SERVER_NAME=$(setting LSM_RELEASE_SERVER_NAME "invalid.placeholder/lsm")
MAINTAINER=$(setting LSM_RELEASE_MAINTAINER "PLACEHOLDER set LSM_RELEASE_MAINTAINER <maintainer@releases.invalid>")
AUTHOR=$(setting LSM_RELEASE_AUTHOR "lsm contributors")
for v in LSM_RELEASE_BASE_URL LSM_RELEASE_SERVER_NAME LSM_RELEASE_MAINTAINER; do
  [[ -n ${!v:-} ]] || PLACEHOLDERS+=("$v")
done
LINUX_BIN=${LSM_RELEASE_LINUX_BIN:-$TARGET_DIR/release/lsm}
WINDOWS_EXE=${LSM_RELEASE_WINDOWS_EXE:-$TARGET_DIR/$WIN_TARGET/release/lsm.exe}

if ((PRINT_CONFIG)); then
  printf '%s=%s\n' version "$VERSION" commit "$COMMIT" base_url "$BASE_URL" server_name "$SERVER_NAME" \
    maintainer "$MAINTAINER" author "$AUTHOR" linux_bin "$LINUX_BIN" windows_exe "$WINDOWS_EXE" out "$OUT" \
    placeholders "${PLACEHOLDERS[*]}"
  exit 0
fi

T0=$SECONDS
if ((CHECK_TAG)); then
  tags=$(git -C "$ROOT" tag --points-at HEAD)
  grep -qx "v$VERSION" <<<"$tags" || die "HEAD is not tagged v$VERSION (tags here: ${tags:-none}); see docs/release.md"
  [[ -z $(git -C "$ROOT" status --porcelain) ]] || die "the work tree has changes: a release is built from the tagged commit"
  ((${#PLACEHOLDERS[@]} == 0)) || die "a release needs ${PLACEHOLDERS[*]} (placeholders otherwise)"
fi

if ((BUILD)); then
  say "cargo build --release (Linux, then $WIN_TARGET)"
  (cd "$ROOT" && cargo build --release --locked -p lsm) || die "cargo build (Linux)"
  (cd "$ROOT" && cargo build --release --locked -p lsm --target "$WIN_TARGET") ||
    die "cargo build ($WIN_TARGET): run tests/bed/wine.sh install first (rust target, MinGW)"
fi
[[ -x $LINUX_BIN ]] || die "no Linux binary at $LINUX_BIN (cargo build --release, or LSM_RELEASE_LINUX_BIN)"
[[ -f $WINDOWS_EXE ]] || die "no lsm.exe at $WINDOWS_EXE (tests/bed/wine.sh build, or LSM_RELEASE_WINDOWS_EXE)"

# The Linux binary: the version of this Cargo.toml (not a stale build), and libc-only: a release
# must start on a machine without any GUI library (those are reached over D-Bus/X11 sockets).
reported=$("$LINUX_BIN" --version) || die "$LINUX_BIN --version failed"
[[ $reported == "lsm $VERSION "* ]] || die "$LINUX_BIN says '$reported', Cargo.toml says $VERSION: rebuild"
[[ $reported == *"(${COMMIT:0:12})"* ]] || {
  ((CHECK_TAG == 0)) || die "$LINUX_BIN was built from another commit ('$reported', HEAD ${COMMIT:0:12})"
  say "note: $LINUX_BIN says '$reported', HEAD is ${COMMIT:0:12}"
}
needed=$(readelf -d "$LINUX_BIN" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
for lib in $needed; do
  case $lib in
    libc.so.6 | libm.so.6 | libgcc_s.so.1 | ld-linux-x86-64.so.2 | libpthread.so.0 | libdl.so.2 | librt.so.1) ;;
    *) die "the Linux binary needs $lib (only libc and libgcc_s are allowed: $needed)" ;;
  esac
done
say "$reported; the Linux binary needs: $needed"

# Only an empty directory or the output of an earlier run is replaced.
if [[ -d $OUT && -n $(ls -A "$OUT") && ! -f $OUT/SHA256SUMS ]]; then
  die "$OUT is not empty and holds no earlier release output (SHA256SUMS): pick another --out"
fi
rm -rf "$OUT"
mkdir -p "$OUT"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
# Reproducible timestamps (dpkg-deb and the bundle's zip read it): the commit's time.
SOURCE_DATE_EPOCH=$(git -C "$ROOT" log -1 --format=%ct 2>/dev/null || date +%s)
export SOURCE_DATE_EPOCH

LINUX_OUT=lsm-$VERSION-x86_64-linux
WINDOWS_OUT=lsm-$VERSION-x86_64-windows.exe
install -m 0755 "$LINUX_BIN" "$OUT/$LINUX_OUT"
install -m 0644 "$WINDOWS_EXE" "$OUT/$WINDOWS_OUT"

# ------------------------------------------------------------------ the .deb
DEB_OUT=lsm_${VERSION}_amd64.deb
PKG=$WORK/deb
install -D -m 0755 "$LINUX_BIN" "$PKG/usr/bin/lsm"
install -D -m 0644 "$HERE/lsm-worker.service" "$PKG/usr/lib/systemd/user/lsm-worker.service"
DOC=$PKG/usr/share/doc/lsm
install -D -m 0644 "$HERE/worker.env" "$DOC/examples/worker.env"
install -m 0644 "$ROOT/README.md" "$ROOT/LICENSE-MIT" "$ROOT/LICENSE-APACHE" "$DOC/"
gzip -9n <"$ROOT/CHANGELOG.md" >"$DOC/changelog.gz"
python3 "$HERE/fill.py" copyright "$HERE/copyright.in" "$ROOT/LICENSE-MIT" >"$DOC/copyright"
mkdir -p "$WORK/shlibs/debian"
printf 'Source: lsm\n\nPackage: lsm\nArchitecture: amd64\n' >"$WORK/shlibs/debian/control"
depends=$(cd "$WORK/shlibs" && dpkg-shlibdeps -O "$PKG/usr/bin/lsm" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[[ -n $depends ]] || die "dpkg-shlibdeps found no dependencies of the binary"
mkdir -p "$PKG/DEBIAN"
LSM_VERSION=$VERSION LSM_DEPENDS=$depends LSM_MAINTAINER=$MAINTAINER \
  LSM_INSTALLED_SIZE=$(du -sk --apparent-size "$PKG/usr" | cut -f1) \
  python3 "$HERE/fill.py" control "$HERE/deb-control.in" >"$PKG/DEBIAN/control"
find "$PKG" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
dpkg-deb --root-owner-group -Zxz -z6 --build "$PKG" "$OUT/$DEB_OUT" >/dev/null || die "dpkg-deb failed"
say "$DEB_OUT: Depends: $depends"

# ------------------------------------------------------------------ bundle, its manifest, server.json
python3 "$HERE/fill.py" bundle --out "$OUT" --version "$VERSION" --commit "$COMMIT" --author "$AUTHOR" \
  --server-name "$SERVER_NAME" --base-url "$BASE_URL" --linux "$OUT/$LINUX_OUT" --windows "$OUT/$WINDOWS_OUT" \
  --deb "$OUT/$DEB_OUT" --licences "$ROOT/LICENSE-MIT" "$ROOT/LICENSE-APACHE" --templates "$HERE" ||
  die "making the bundle, manifest.json and server.json failed"

# ------------------------------------------------------------------ checksums
(cd "$OUT" && find . -maxdepth 1 -type f ! -name SHA256SUMS -printf '%f\n' | LC_ALL=C sort |
  xargs sha256sum >SHA256SUMS) || die "sha256sum failed"
(cd "$OUT" && sha256sum --quiet -c SHA256SUMS) || die "SHA256SUMS does not verify"

say "in $OUT ($((SECONDS - T0)) s):"
(cd "$OUT" && ls -l --time-style=+ | tail -n +2 | awk '{printf "  %10s  %s\n", $5, $NF}') >&2
if ((${#PLACEHOLDERS[@]})); then
  say "PLACEHOLDERS (not a publishable release): ${PLACEHOLDERS[*]} unset; see docs/release.md"
fi
