#!/usr/bin/env bash
# Type-checks and lints lsm for Windows and macOS, which cannot run here (docs/testing.md "What CI runs").
#
# - Platform-free and backend crates (no TLS, no C built by build scripts): for every target,
#   x86_64-pc-windows-msvc, x86_64-pc-windows-gnu, aarch64-apple-darwin and x86_64-apple-darwin
#   (lsm-macos's Accessibility and CoreGraphics code is compiled only for the darwin targets).
# - The whole workspace (TLS through ring, which builds C) through x86_64-pc-windows-gnu with
#   Debian's MinGW cross compiler, and through both darwin targets with zig's C compiler (the
#   `ziglang` package of tests/requirements.txt) standing in for Apple's clang: ring's C is
#   compiled for the check only. ring cannot be built for msvc from Linux.
# lsm-linux is Linux-only and left out of the foreign targets.
set -euo pipefail
cd "$(dirname "$0")/.."

targets=(x86_64-pc-windows-msvc x86_64-pc-windows-gnu aarch64-apple-darwin x86_64-apple-darwin)
installed=$(rustup target list --installed)
for t in "${targets[@]}"; do
  grep -qx "$t" <<<"$installed" || rustup target add "$t"
done
if ! command -v x86_64-w64-mingw32-gcc >/dev/null; then
  echo "cross: installing gcc-mingw-w64-x86-64 (ring's C for windows-gnu)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q --no-install-recommends gcc-mingw-w64-x86-64 >/dev/null ||
    { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends gcc-mingw-w64-x86-64 >/dev/null; }
fi

# Crates that must build for every platform without a C toolchain for it.
portable=(-p lsm-core -p lsm-windows -p lsm-macos)
for t in x86_64-pc-windows-msvc aarch64-apple-darwin x86_64-apple-darwin; do
  echo "== clippy ${portable[*]} --target $t"
  cargo clippy "${portable[@]}" --all-targets --target "$t" --release --locked -- -D warnings
done
echo "== clippy --workspace --exclude lsm-linux --target x86_64-pc-windows-gnu"
cargo clippy --workspace --exclude lsm-linux --all-targets --target x86_64-pc-windows-gnu --release --locked \
  -- -D warnings
# ring's C for darwin through zig's C compiler (cc-rs speaks clang's target spelling, zig its own).
zig_py="$PWD/.venv/bin/python"
"$zig_py" -m ziglang version >/dev/null 2>&1 || "$zig_py" -m pip install -q -r tests/requirements.txt
wrap=$(mktemp -d)
trap 'rm -rf "$wrap"' EXIT
printf '#!/usr/bin/env bash\nexec "%s" -m ziglang ar "$@"\n' "$zig_py" >"$wrap/ar"
for arch in aarch64 x86_64; do
  {
    echo '#!/usr/bin/env bash'
    echo 'args=()'
    echo 'for a in "$@"; do case "$a" in --target=*|-mmacosx-version-min=*) ;; *) args+=("$a") ;; esac; done'
    echo "exec \"$zig_py\" -m ziglang cc -target $arch-macos \"\${args[@]}\""
  } >"$wrap/cc-$arch"
  chmod +x "$wrap/cc-$arch" "$wrap/ar"
  t=$arch-apple-darwin
  echo "== clippy --workspace --exclude lsm-linux --target $t (ring's C through zig cc)"
  env "CC_${arch}_apple_darwin=$wrap/cc-$arch" "AR_${arch}_apple_darwin=$wrap/ar" \
    cargo clippy --workspace --exclude lsm-linux --all-targets --target "$t" --release --locked -- -D warnings
done
echo "cross: Windows (msvc, gnu) and macOS (aarch64, x86_64; the whole workspace) type-check and lint clean"
