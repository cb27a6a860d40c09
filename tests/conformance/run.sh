#!/usr/bin/env bash
# tests/conformance/run.sh - MCP conformance scenarios against lsm (called by tests/run-all.sh).
#
# STUB: the server engineer fills this in. The plan:
#   - start "$LSM_BIN" with its streamable-HTTP transport on a free loopback port,
#   - run `conformance server --url http://127.0.0.1:PORT/mcp` (suite "active"), with a
#     baseline of expected failures (--expected-failures tests/conformance/expected-failures.yml)
#     for scenarios lsm deliberately does not support (resources, prompts, sampling...),
#   - stop the server, exit non-zero on any unexpected failure.
# Node 22 and the conformance tool come from ./node_modules (tests/setup.sh installs them).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export PATH="$HERE/node_modules/.bin:$PATH"
LSM_BIN=${LSM_BIN:-$HERE/../../target/release/lsm}

echo "conformance: node $(node --version), tool $(conformance --version 2>/dev/null || echo '?')"
echo "conformance: lsm binary: $LSM_BIN"
echo "conformance: would run: conformance server --url http://127.0.0.1:<port>/mcp --suite active"
echo "conformance: server scenarios available:"
conformance list 2>/dev/null | sed -n '/^Server scenarios/,/^$/p' | sed 's/^/  /'
echo "conformance: stub, nothing run yet"
