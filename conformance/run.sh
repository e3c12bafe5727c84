#!/usr/bin/env bash
# Run the official MCP conformance suite against a live `gno-trio serve`.
#
# The runner is HTTP-only and needs a server that is already listening, so this
# script builds a throwaway index in a temp dir, starts the resident gateway on
# an ephemeral loopback port, runs `--suite all` once per protocol era against
# the same URL, and always stops the server again. Known failures (scenarios
# that need the suite's fixture tools, resources and prompts, or capabilities
# gno does not offer) are listed per era in expected-failures-<era>.yml; the
# runner fails on anything else failing and on entries that started passing.
#
# Environment: PYTHON (default python3), CONFORMANCE_KEEP=1 keeps the temp dir
# (index, server log, per-check results) for inspection.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
python="${PYTHON:-python3}"
eras=(2025-11-25 2026-07-28)

log() { printf 'conformance: %s\n' "$*" >&2; }

# -- the runner and the Node 22 it needs (both pinned in package-lock.json) ------------

pinned_runner_version() {
    "$python" -c 'import json, sys; print(json.load(open(sys.argv[1]))["dependencies"]["@modelcontextprotocol/conformance"])' \
        "$here/package.json"
}

installed_runner_version() {
    local manifest="$here/node_modules/@modelcontextprotocol/conformance/package.json"
    [ -f "$manifest" ] || return 0
    "$python" -c 'import json, sys; print(json.load(open(sys.argv[1]))["version"])' "$manifest"
}

if [ ! -x "$here/node_modules/node/bin/node" ] ||
    [ "$(installed_runner_version)" != "$(pinned_runner_version)" ]; then
    log "installing the pinned runner with npm ci"
    (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
fi
export PATH="$here/node_modules/node/bin:$PATH"
runner="$here/node_modules/.bin/conformance"
log "runner $("$runner" --version), node $(node --version)"

# -- a throwaway index and the gateway over it -----------------------------------------

work="$(mktemp -d "${TMPDIR:-/tmp}/gno-conformance.XXXXXX")"
server_pid=""

stop_server() {
    if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
        kill -TERM "$server_pid" 2>/dev/null || true
        for _ in $(seq 1 50); do
            kill -0 "$server_pid" 2>/dev/null || break
            sleep 0.2
        done
        if kill -0 "$server_pid" 2>/dev/null; then
            log "server did not drain in 10 s; killing it"
            kill -KILL "$server_pid" 2>/dev/null || true
        fi
        wait "$server_pid" 2>/dev/null || true
    fi
    server_pid=""
}

cleanup() {
    stop_server
    if [ "${CONFORMANCE_KEEP:-0}" = "1" ]; then
        log "kept $work"
    else
        rm -rf "$work"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

export GNO_CONFIG_DIR="$work/config" GNO_DATA_DIR="$work/data" GNO_CACHE_DIR="$work/cache"
mkdir -p "$GNO_CONFIG_DIR"
# The suite opens one legacy session per scenario without ever deleting it and
# sends a few hundred requests within seconds, from one peer; gno's defaults
# (32 sessions, 16 of them per caller, 120 requests/minute) would answer 429
# half-way through.
cat >"$GNO_CONFIG_DIR/index.yml" <<'YAML'
version: '1.0'
gateway:
  limits:
    maxRequestsPerMinute: 100000
    maxSessions: 1000
    maxSessionsPerIdentity: 1000
YAML

corpus="$repo/../shared/fixtures/gno-evals/corpus"
if [ ! -d "$corpus" ]; then
    corpus="$work/corpus"
    mkdir -p "$corpus/notes"
    printf '# Conformance\n\nA note indexed for the MCP conformance run.\n' >"$corpus/notes/conformance.md"
    printf '# Second note\n\nTrio, SQLite and full-text search.\n' >"$corpus/notes/second.md"
fi
(cd "$repo" && "$python" -m gno_trio init "$corpus" --name conformance >/dev/null)
(cd "$repo" && "$python" -m gno_trio update >/dev/null)

(cd "$repo" && exec "$python" -m gno_trio serve --port 0 --json >"$work/serve.json" 2>"$work/serve.log") &
server_pid=$!

read_endpoint() {
    "$python" - "$work/serve.json" <<'PY'
import json
import sys

with open(sys.argv[1], encoding="utf-8") as handle:
    first = handle.readline()
if first.strip():
    endpoint = json.loads(first)
    print(endpoint["url"], endpoint["statusUrl"])
PY
}

endpoint=""
for _ in $(seq 1 150); do
    endpoint="$(read_endpoint 2>/dev/null || true)"
    [ -n "$endpoint" ] && break
    if ! kill -0 "$server_pid" 2>/dev/null; then
        log "the gateway exited before it printed its URL:"
        cat "$work/serve.log" >&2
        exit 1
    fi
    sleep 0.2
done
if [ -z "$endpoint" ]; then
    log "the gateway printed no URL within 30 s"
    cat "$work/serve.log" >&2
    exit 1
fi
read -r url status_url <<<"$endpoint"
case "$url" in
http://127.0.0.1:* | http://localhost:* | "http://[::1]:"*) ;;
*)
    log "gateway URL $url is not loopback; dns-rebinding-protection needs localhost"
    exit 1
    ;;
esac

"$python" - "$status_url" <<'PY'
import sys
import time
import urllib.request

deadline = time.monotonic() + 30
while True:
    try:
        with urllib.request.urlopen(sys.argv[1], timeout=2) as response:
            if response.status == 200:
                break
    except OSError:
        pass
    if time.monotonic() > deadline:
        sys.exit("conformance: the gateway never answered its status endpoint")
    time.sleep(0.2)
PY
log "gateway ready at $url"

# -- one run per era -------------------------------------------------------------------

declare -A outcome
failed=0
for era in "${eras[@]}"; do
    output="$work/runner-$era.log"
    set +e
    "$runner" server --url "$url" --suite all --spec-version "$era" \
        --expected-failures "$here/expected-failures-$era.yml" \
        -o "$work/results-$era" >"$output" 2>&1
    rc=$?
    set -e
    if [ "$rc" -eq 0 ]; then
        outcome[$era]="ok"
    else
        outcome[$era]="FAILED (exit $rc)"
        failed=1
        printf '\n==== full runner output, %s ====\n' "$era"
        cat "$output"
    fi
done

stop_server

# The runner's baseline verdict, ANSI colours stripped: how many failures the
# expected-failures file covered, and by name whatever was stale or unexpected.
baseline_verdict() {
    sed 's/\x1b\[[0-9;]*m//g' "$1" | awk '
        /^Expected failures \(in baseline\)/ { section = "expected"; next }
        /^Stale baseline entries/ { section = "stale"; next }
        /^Unexpected failures \(not in baseline\)/ { section = "unexpected"; next }
        /^$/ { section = "" }
        section != "" && NF == 2 {
            if (section == "expected") expected++
            else printf "    %s: %s\n", section, $2
        }
        END { printf "    expected failures (listed in the baseline): %d\n", expected }'
}

printf '\n==== MCP conformance summary ====\n'
for era in "${eras[@]}"; do
    output="$work/runner-$era.log"
    total="$(grep -E '^Total: ' "$output" | tail -n 1 || true)"
    printf '%s: %s  [%s]\n' "$era" "${total:-no totals printed}" "${outcome[$era]}"
    baseline_verdict "$output"
done
if [ "$failed" -ne 0 ]; then
    printf '\n==== gateway log (last 40 lines) ====\n'
    tail -n 40 "$work/serve.log" || true
    log "conformance failed (unexpected failures or stale expected-failures entries above)"
    exit 1
fi
