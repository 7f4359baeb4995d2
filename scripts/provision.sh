#!/usr/bin/env bash
# Provisions what local runs and the test suite need besides Node:
#   - nats-server on PATH (Debian's `nats-server` package), unless NATS_URL is set;
#   - the FerretDB wrapper built into .carecircle/bin/ferretdb (MongoDB wire protocol over
#     SQLite, from scripts/ferretdb), unless MONGO_URL is set or a `mongod` is on PATH.
# Idempotent: a second run only checks. Progress goes to stderr; exits non-zero if something
# could not be provisioned, saying what to install.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="$ROOT/scripts/ferretdb"
BIN_DIR="$ROOT/.carecircle/bin"
FERRETDB="$BIN_DIR/ferretdb"

step() { printf '[provision] %s\n' "$*" >&2; }
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

# --- nats-server ---------------------------------------------------------------------------
step "checking nats-server"
if [ -n "${NATS_URL:-}" ]; then
  step "NATS_URL is set: not provisioning nats-server"
elif command -v nats-server >/dev/null 2>&1; then
  step "nats-server present: $(command -v nats-server)"
elif can_apt; then
  apt_install nats-server
  command -v nats-server >/dev/null 2>&1 || problem "apt-get installed nats-server but it is not on PATH"
else
  problem "nats-server is missing and this is not root with apt-get: install it (Debian: 'sudo apt-get install nats-server'; else a v2.9+ release of nats-server on PATH), or set NATS_URL"
fi

# --- FerretDB wrapper --------------------------------------------------------------------------
go_need="$(sed -n 's/^go[[:space:]]\{1,\}\([0-9]\{1,\}\.[0-9]\{1,\}\).*/\1/p' "$SRC/go.mod" | head -n1)"
go_need="${go_need:-1.24}"

# major.minor of "go1.26.8" / "1.24" as a comparable number: 1*1000+26.
ver_num() { local v="${1#go}"; local maj="${v%%.*}"; local rest="${v#*.}"; local min="${rest%%[!0-9]*}"; echo $((maj * 1000 + ${min:-0})); }

go_ok() { # prints the go binary if one new enough is on PATH
  local go
  go="$(command -v go 2>/dev/null)" || return 1
  local v
  v="$("$go" env GOVERSION 2>/dev/null)" || return 1
  [ "$(ver_num "$v")" -ge "$(ver_num "$go_need")" ] || { step "$go is $v; the FerretDB wrapper needs Go >= $go_need"; return 1; }
  echo "$go"
}

source_hash() { cat "$SRC/go.mod" "$SRC/go.sum" "$SRC/main.go" | sha256sum | cut -d' ' -f1; }

ferretdb_state() {
  [ -x "$FERRETDB" ] || { echo missing; return; }
  if [ -f "$FERRETDB.sha256" ]; then
    if [ "$(tr -d '[:space:]' <"$FERRETDB.sha256")" = "$(source_hash)" ]; then echo fresh; else echo stale; fi
  elif [ "$FERRETDB" -nt "$SRC/go.sum" ] && [ "$FERRETDB" -nt "$SRC/main.go" ] && [ "$FERRETDB" -nt "$SRC/go.mod" ]; then
    echo fresh
  else
    echo stale
  fi
}

step "checking FerretDB wrapper ($FERRETDB)"
if [ -n "${MONGO_URL:-}" ]; then
  step "MONGO_URL is set: not provisioning FerretDB"
else
  state="$(ferretdb_state)"
  if [ "$state" = fresh ]; then
    step "FerretDB wrapper is up to date"
  else
    go_bin="$(go_ok || true)"
    if [ -z "$go_bin" ] && can_apt; then
      apt_update_once
      cand="$(apt-cache policy golang-go 2>/dev/null | sed -n 's/^[[:space:]]*Candidate:[[:space:]]*//p' | head -n1)"
      cand_ver="$(printf '%s' "$cand" | sed -n 's/^\([0-9]*:\)\{0,1\}\([0-9]\{1,\}\.[0-9]\{1,\}\).*/\2/p')"
      if [ -n "$cand_ver" ] && [ "$(ver_num "$cand_ver")" -ge "$(ver_num "$go_need")" ]; then
        apt_install golang-go
        go_bin="$(go_ok || true)"
      else
        step "Debian's golang-go is ${cand_ver:-not available}, older than the Go >= $go_need the wrapper needs: not installing it"
      fi
    fi
    if [ -n "$go_bin" ]; then
      if [ "$state" = missing ]; then
        step "building FerretDB wrapper with $go_bin ($("$go_bin" env GOVERSION)) (first run only, about a minute)…"
      else
        step "rebuilding FerretDB wrapper (its sources changed)…"
      fi
      mkdir -p "$BIN_DIR"
      tmp="$FERRETDB.tmp-$$"
      t0=$SECONDS
      if (cd "$SRC" && CGO_ENABLED=0 "$go_bin" build -buildvcs=false -o "$tmp" .) >&2; then
        mv -f "$tmp" "$FERRETDB"
        source_hash >"$FERRETDB.sha256.tmp-$$" && mv -f "$FERRETDB.sha256.tmp-$$" "$FERRETDB.sha256"
        step "built FerretDB wrapper in $((SECONDS - t0)) s"
      else
        rm -f "$tmp"
        problem "go build of the FerretDB wrapper failed (see above)"
      fi
    elif [ "$state" = stale ]; then
      step "WARNING: FerretDB wrapper is older than its sources but there is no Go >= $go_need to rebuild it; keeping it"
    elif command -v mongod >/dev/null 2>&1; then
      step "no Go >= $go_need to build FerretDB, but mongod is on PATH ($(command -v mongod)): npm start uses it"
    else
      problem "cannot build the FerretDB wrapper: no Go >= $go_need. Install Go >= $go_need from https://go.dev/dl/ (Debian bookworm's golang-go is 1.19, too old) so 'go' is on PATH, then run this again; or set MONGO_URL to a running MongoDB"
    fi
  fi
fi

# --- where everything is -------------------------------------------------------------------------
step "tools:"
if command -v nats-server >/dev/null 2>&1; then
  step "  nats-server  $(command -v nats-server) ($(nats-server --version 2>&1 | head -n1))"
else
  step "  nats-server  (missing)"
fi
if [ -x "$FERRETDB" ]; then
  step "  ferretdb     $FERRETDB (FerretDB $(sed -n 's/^require github.com\/FerretDB\/FerretDB \(v[^ ]*\).*/\1/p' "$SRC/go.mod"))"
else
  step "  ferretdb     (missing)"
fi
if command -v go >/dev/null 2>&1; then step "  go           $(command -v go) ($(go env GOVERSION 2>/dev/null || echo '?'))"; fi
if command -v mongod >/dev/null 2>&1; then step "  mongod       $(command -v mongod)"; fi

exit "$fail"
