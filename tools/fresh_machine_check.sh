#!/usr/bin/env bash
# Checks the README's promise on a fresh machine, as far as one can be made
# here: a fresh clone of this checkout's HEAD, an empty HOME (so an empty
# Deno cache, npm cache and no pinned Deno yet), no HERMES_HOME, DENO_DIR or
# XDG_CACHE_HOME, and a PATH of only /usr/bin, /bin and the folders of node
# and npm. It then runs, as the README says:
#
#   1. ./tools/deno task hermes memory status   (counts the Download lines)
#   2. ./tools/deno task test                    (the first run: online)
#   3. the same test command again with the network cut
#      (unshare -n, loopback only; `unshare -rn` when not root)
#
# and fails unless all three pass and the clone is left unchanged (no lock
# rewritten). Logs go to the work folder it prints; --keep keeps it.
# It takes a while: the suite runs twice, after npm and Deno download.
#
#   tools/fresh_machine_check.sh [--keep]
set -euo pipefail
keep=0
[ "${1:-}" = "--keep" ] && keep=1
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/hermes-fresh-machine-XXXXXX")"
cleanup() { [ "$keep" = 1 ] || rm -rf "$work"; }
trap cleanup EXIT
echo "fresh_machine_check: work folder $work (logs: $work/*.log)"

git clone --quiet "$repo" "$work/repo"
mkdir -p "$work/home"
tools_path="$(dirname "$(command -v npm)"):$(dirname "$(command -v node)"):/usr/bin:/bin"
fresh=(env -u DENO_DIR -u XDG_CACHE_HOME -u HERMES_HOME -u HERMES_DENO_PREFIX
  -u NPM_CONFIG_PREFIX -u npm_config_prefix
  "HOME=$work/home" "PATH=$tools_path" "DENO_NO_UPDATE_CHECK=1")
if [ "$(id -u)" = 0 ]; then offline=(unshare -n); else offline=(unshare -rn); fi

step() { # NAME COMMAND…: runs it in the clone, logs to NAME.log, prints the time
  local name="$1" start code
  shift
  start=$(date +%s)
  set +e
  (cd "$work/repo" && "${fresh[@]}" "$@") >"$work/$name.log" 2>&1
  code=$?
  set -e
  echo "  $name: exit $code after $(($(date +%s) - start)) s"
  return $code
}
summary() { # the test runner's closing line
  sed 's/\x1b\[[0-9;]*m//g' "$work/$1.log" | grep -E '^(ok|FAILED) \|' | tail -1 || true
}

failed=0
step status ./tools/deno task hermes memory status || failed=1
downloads=$(grep -c '^Download' <(sed 's/\x1b\[[0-9;]*m//g' "$work/status.log") || true)
echo "  status: $downloads Download lines (the first hermes run's packages)"
step test-online ./tools/deno task test || failed=1
echo "  test-online: $(summary test-online)"
# Package versions in the Deno cache that no lock of the repository pins:
# what the first run fetched past the locks (none expected: every task
# installs --frozen from a lock, and the tests that resolve without one do
# so through tests/helpers/locked_npm_cache.ts).
unpinned=$(node -e '
  const fs = require("fs"), path = require("path");
  const [root, ...locks] = process.argv.slice(1);
  const pinned = new Set(locks.flatMap((l) => Object.keys(JSON.parse(fs.readFileSync(l, "utf8")).npm)
    .map((k) => k.split("_")[0])));
  const out = [];
  const walk = (dir, name) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (!e.isDirectory()) continue;
      if (name === undefined && e.name.startsWith("@")) walk(path.join(dir, e.name), e.name + "/");
      else if (name === undefined || name.endsWith("/")) walk(path.join(dir, e.name), (name ?? "") + e.name);
      else if (!pinned.has(name + "@" + e.name)) out.push(name + "@" + e.name);
    }
  };
  walk(root);
  console.log(out.sort().join(" "));
' "$work/home/.cache/deno/npm/registry.npmjs.org" "$work/repo/deno.lock" "$work/repo/tests/deno.lock" \
  "$work/repo/tests/fixtures/npm_fixtures.lock")
echo "  test-online: cached packages no lock pins: ${unpinned:-none}"
[ -z "$unpinned" ] || failed=1
step test-offline "${offline[@]}" bash -c 'ip link set lo up && exec ./tools/deno task test' || failed=1
echo "  test-offline: $(summary test-offline)"
if [ -n "$(git -C "$work/repo" status --porcelain)" ]; then
  echo "  the runs changed the clone:"
  git -C "$work/repo" status --porcelain | sed 's/^/    /'
  failed=1
fi
if [ "$failed" = 0 ]; then
  echo "fresh_machine_check: passed"
else
  keep=1
  echo "fresh_machine_check: FAILED (logs kept in $work)"
fi
exit $failed
