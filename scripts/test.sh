#!/usr/bin/env bash
# `npm test`: provisions what the suite needs (scripts/toolchain.sh: Node.js 24, nats-server,
# FerretDB, Chromium), then runs vitest on that Node.js with the arguments given
# (`npm test -- test/foo.test.ts`, `--mode quick`).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ ! -f node_modules/vitest/vitest.mjs ]; then
  printf '[test] ERROR: node_modules has no vitest: run npm ci first\n' >&2
  exit 1
fi
TOOLCHAIN_QUIET="${TOOLCHAIN_QUIET:-1}"
# shellcheck source=scripts/toolchain.sh
. scripts/toolchain.sh
exec node node_modules/vitest/vitest.mjs run "$@"
