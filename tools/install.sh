#!/usr/bin/env bash
# Installs the `hermes` command from this checkout, for the current user:
#   1. the pinned Deno, through tools/deno (from the npm registry on first use);
#   2. the locked npm packages into the Deno cache (deno install --frozen);
#   3. `hermes` (deno install -g of src/launcher/main.ts) and a `deno` link to
#      the pinned Deno, side by side in $DENO_INSTALL_ROOT/bin (~/.deno/bin):
#      the `hermes` that deno install -g writes runs the `deno` on the PATH.
# A `deno` that is already there and is not a link (Deno's own installer puts
# one there) is left alone. Run it again after moving the checkout.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
root="${DENO_INSTALL_ROOT:-$HOME/.deno}"
bin="$root/bin"

deno="$("$repo/tools/deno" eval --quiet 'console.log(Deno.execPath())')"
(cd "$repo" && "$deno" install --quiet --frozen)

mkdir -p "$bin"
if [ -e "$bin/deno" ] && [ ! -L "$bin/deno" ]; then
  echo "tools/install.sh: keeping the deno already in $bin ($("$bin/deno" --version | head -n 1)); hermes runs with it" >&2
else
  ln -sfn "$deno" "$bin/deno"
fi

# A global install ignores the checkout's deno.lock: hand it a copy (the install
# adds a "links" entry that `deno install --frozen` in the checkout would refuse)
# so the locked npm versions resolve from the cache.
lock="$(mktemp)"
trap 'rm -f "$lock"' EXIT
cp "$repo/deno.lock" "$lock"
"$deno" install -g -f --quiet --root "$root" --name hermes \
  --no-prompt --cached-only --allow-read --allow-write --allow-env --allow-run --allow-ffi \
  --lock="$lock" --config "$repo/deno.json" "$repo/src/launcher/main.ts"

echo "Installed hermes and deno $("$deno" --version | head -n 1 | cut -d' ' -f2) in $bin"
case ":$PATH:" in
  *":$bin:"*) ;;
  *) echo "Add it to your PATH (e.g. in ~/.profile): export PATH=\"$bin:\$PATH\"" ;;
esac
