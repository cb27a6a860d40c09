# tests/bed/apt.sh - sourced by the bed scripts: install_packages PKG... installs the Debian
# packages that are missing (apt only then), saying what through the caller's `say`.
install_packages() {
  local need=() p
  for p in "$@"; do
    [[ $(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null) == installed ]] || need+=("$p")
  done
  if ((${#need[@]} == 0)); then say "Debian packages: all $# present"; return 0; fi
  say "installing ${#need[@]} Debian packages: ${need[*]}"
  local t0=$SECONDS
  DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    -o DPkg::Lock::Timeout=600 "${need[@]}" >&2 || return 1
  say "installed in $((SECONDS - t0))s"
}
