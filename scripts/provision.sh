#!/usr/bin/env bash
# Provisions what local runs and the test suite need besides Node:
#   - nats-server built into .carecircle/bin/nats-server from the Go module pinned in
#     scripts/nats-server, unless NATS_URL is set; without a new enough Go, a nats-server on PATH
#     (Debian's `nats-server` package, installed here when root) is the fallback;
#   - the FerretDB wrapper built into .carecircle/bin/ferretdb (MongoDB wire protocol over
#     SQLite, from scripts/ferretdb), unless MONGO_URL is set or a `mongod` is on PATH.
# Idempotent: a binary is rebuilt only when the hash of its sources (stored beside it as
# <binary>.sha256) changed. Progress goes to stderr (PROVISION_QUIET=1: only what it does, not
# what it found in place); exits non-zero if something could not be provisioned, saying what to install.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN_DIR="$ROOT/.carecircle/bin"
NATS_SRC="$ROOT/scripts/nats-server"
NATS_BIN="$BIN_DIR/nats-server"
FERRETDB_SRC="$ROOT/scripts/ferretdb"
FERRETDB="$BIN_DIR/ferretdb"

step() { printf '[provision] %s\n' "$*" >&2; }
# What was found in place: left out under PROVISION_QUIET=1 (npm test's routine check).
note() { [ "${PROVISION_QUIET:-0}" = 1 ] || step "$@"; }
fail=0
problem() { printf '[provision] ERROR: %s\n' "$*" >&2; fail=1; }

# Debian installs daemons in /usr/sbin, which a non-root PATH may lack.
for d in /usr/local/go/bin /usr/sbin /usr/local/sbin; do
  case ":$PATH:" in *":$d:"*) ;; *) [ -d "$d" ] && PATH="$PATH:$d" ;; esac
done
export PATH
# Go needs a cache and module directory; give it one inside the repo if there is no HOME.
if [ -z "${HOME:-}" ]; then
  export GOCACHE="${GOCACHE:-$ROOT/.carecircle/go/cache}" GOPATH="${GOPATH:-$ROOT/.carecircle/go}"
fi

can_apt() { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; }
apt_updated=0
apt_update_once() {
  if [ "$apt_updated" = 0 ]; then
    step "apt-get update"
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 update -qq >&2
    apt_updated=1
  fi
}
apt_install() {
  apt_update_once
  step "apt-get install -y $*"
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq "$@" >&2
}

# --- Go builds -------------------------------------------------------------------------------

# major.minor of "go1.26.8" / "1.24" as a comparable number: 1*1000+26.
ver_num() { local v="${1#go}"; local maj="${v%%.*}"; local rest="${v#*.}"; local min="${rest%%[!0-9]*}"; echo $((maj * 1000 + ${min:-0})); }

# The Go major.minor a source directory's go.mod asks for.
go_need() { sed -n 's/^go[[:space:]]\{1,\}\([0-9]\{1,\}\.[0-9]\{1,\}\).*/\1/p' "$1/go.mod" | head -n1; }

go_ok() { # $1 = needed version, $2 = what for; prints the go binary if one new enough is on PATH
  local go v
  go="$(command -v go 2>/dev/null)" || return 1
  v="$("$go" env GOVERSION 2>/dev/null)" || return 1
  [ "$(ver_num "$v")" -ge "$(ver_num "$1")" ] || { step "$go is $v; $2 needs Go >= $1"; return 1; }
  echo "$go"
}

# A Go >= $1 on PATH, installing Debian's golang-go when it is new enough (bookworm's 1.19 and
# trixie's 1.24 are older than some of our modules need).
find_go() {
  local go_bin cand cand_ver
  go_bin="$(go_ok "$1" "$2" || true)"
  if [ -z "$go_bin" ] && can_apt; then
    apt_update_once
    cand="$(apt-cache policy golang-go 2>/dev/null | sed -n 's/^[[:space:]]*Candidate:[[:space:]]*//p' | head -n1)"
    cand_ver="$(printf '%s' "$cand" | sed -n 's/^\([0-9]*:\)\{0,1\}\([0-9]\{1,\}\.[0-9]\{1,\}\).*/\2/p')"
    if [ -n "$cand_ver" ] && [ "$(ver_num "$cand_ver")" -ge "$(ver_num "$1")" ]; then
      apt_install golang-go
      go_bin="$(go_ok "$1" "$2" || true)"
    else
      step "Debian's golang-go is ${cand_ver:-not available}, older than the Go >= $1 $2 needs: not installing it"
    fi
  fi
  echo "$go_bin"
}

# The files whose content decides whether a binary is current (main.go only where there is one).
SOURCE_FILES="go.mod go.sum main.go"
source_hash() { local f; for f in $SOURCE_FILES; do if [ -f "$1/$f" ]; then cat "$1/$f"; fi; done | sha256sum | cut -d' ' -f1; }

binary_state() { # $1 = binary, $2 = source dir: missing, stale or fresh
  [ -x "$1" ] || { echo missing; return; }
  if [ -f "$1.sha256" ]; then
    if [ "$(tr -d '[:space:]' <"$1.sha256")" = "$(source_hash "$2")" ]; then echo fresh; else echo stale; fi
    return
  fi
  local f
  for f in $SOURCE_FILES; do
    if [ -f "$2/$f" ] && ! [ "$1" -nt "$2/$f" ]; then echo stale; return; fi
  done
  echo fresh
}

# Builds package $4 of the module in $2 into $3 with Go $1 (a temporary file renamed into place,
# then the source hash stamp); $5 names it in messages.
go_build() {
  local go_bin="$1" src="$2" bin="$3" pkg="$4" label="$5" t0=$SECONDS
  local tmp="$bin.tmp-$$"
  mkdir -p "$BIN_DIR"
  if (cd "$src" && CGO_ENABLED=0 "$go_bin" build -buildvcs=false -o "$tmp" "$pkg") >&2; then
    mv -f "$tmp" "$bin"
    source_hash "$src" >"$bin.sha256.tmp-$$" && mv -f "$bin.sha256.tmp-$$" "$bin.sha256"
    step "built $label in $((SECONDS - t0)) s"
  else
    rm -f "$tmp"
    problem "go build of $label failed (see above)"
  fi
}

# The version of module $2 that go.mod in $1 pins.
pinned_version() { awk -v m="$2" '$1 == m { print $2; exit } $1 == "require" && $2 == m { print $3; exit }' "$1/go.mod"; }

# --- nats-server -----------------------------------------------------------------------------
NATS_MODULE=github.com/nats-io/nats-server/v2
note "checking nats-server ($NATS_BIN)"
if [ -n "${NATS_URL:-}" ]; then
  note "NATS_URL is set: not provisioning nats-server"
else
  state="$(binary_state "$NATS_BIN" "$NATS_SRC")"
  need="$(go_need "$NATS_SRC")"
  want="$(pinned_version "$NATS_SRC" "$NATS_MODULE")"
  if [ "$state" = fresh ]; then
    note "nats-server $want is up to date"
  else
    go_bin="$(find_go "$need" "nats-server $want")"
    if [ -n "$go_bin" ]; then
      step "$([ "$state" = missing ] && echo building || echo rebuilding) nats-server $want with $go_bin ($("$go_bin" env GOVERSION)) (about a minute)…"
      go_build "$go_bin" "$NATS_SRC" "$NATS_BIN" "$NATS_MODULE" "nats-server $want"
    elif [ "$state" = stale ]; then
      step "WARNING: $NATS_BIN is older than scripts/nats-server but there is no Go >= $need to rebuild it; keeping it"
    elif command -v nats-server >/dev/null 2>&1; then
      step "WARNING: no Go >= $need to build nats-server $want; using $(command -v nats-server) ($(nats-server --version 2>&1 | head -n1))"
    elif can_apt; then
      step "WARNING: no Go >= $need to build nats-server $want; falling back to Debian's nats-server"
      apt_install nats-server
      command -v nats-server >/dev/null 2>&1 || problem "apt-get installed nats-server but it is not on PATH"
    else
      problem "no nats-server: install Go >= $need (https://go.dev/dl/) so 'go' is on PATH and run this again, or put a nats-server v2.9+ on PATH (Debian: 'sudo apt-get install nats-server'), or set NATS_URL"
    fi
  fi
fi

# --- FerretDB wrapper --------------------------------------------------------------------------
note "checking FerretDB wrapper ($FERRETDB)"
if [ -n "${MONGO_URL:-}" ]; then
  note "MONGO_URL is set: not provisioning FerretDB"
else
  state="$(binary_state "$FERRETDB" "$FERRETDB_SRC")"
  need="$(go_need "$FERRETDB_SRC")"
  need="${need:-1.24}"
  if [ "$state" = fresh ]; then
    note "FerretDB wrapper is up to date"
  else
    go_bin="$(find_go "$need" "the FerretDB wrapper")"
    if [ -n "$go_bin" ]; then
      if [ "$state" = missing ]; then
        step "building FerretDB wrapper with $go_bin ($("$go_bin" env GOVERSION)) (first run only, about a minute)…"
      else
        step "rebuilding FerretDB wrapper (its sources changed)…"
      fi
      go_build "$go_bin" "$FERRETDB_SRC" "$FERRETDB" . "the FerretDB wrapper"
    elif [ "$state" = stale ]; then
      step "WARNING: FerretDB wrapper is older than its sources but there is no Go >= $need to rebuild it; keeping it"
    elif command -v mongod >/dev/null 2>&1; then
      step "no Go >= $need to build FerretDB, but mongod is on PATH ($(command -v mongod)): npm start uses it"
    else
      problem "cannot build the FerretDB wrapper: no Go >= $need. Install Go >= $need from https://go.dev/dl/ (Debian bookworm's golang-go is 1.19, too old) so 'go' is on PATH, then run this again; or set MONGO_URL to a running MongoDB"
    fi
  fi
fi

# --- where everything is -------------------------------------------------------------------------
note "tools:"
# The test harness and benchmarks take the built nats-server first, then one on PATH.
if [ -x "$NATS_BIN" ]; then
  note "  nats-server  $NATS_BIN ($("$NATS_BIN" --version 2>&1 | head -n1))"
elif command -v nats-server >/dev/null 2>&1; then
  note "  nats-server  $(command -v nats-server) ($(nats-server --version 2>&1 | head -n1))"
else
  note "  nats-server  (missing)"
fi
if [ -x "$FERRETDB" ]; then
  note "  ferretdb     $FERRETDB (FerretDB $(pinned_version "$FERRETDB_SRC" github.com/FerretDB/FerretDB))"
else
  note "  ferretdb     (missing)"
fi
if command -v go >/dev/null 2>&1; then note "  go           $(command -v go) ($(go env GOVERSION 2>/dev/null || echo '?'))"; fi
if command -v mongod >/dev/null 2>&1; then note "  mongod       $(command -v mongod)"; fi

exit "$fail"
