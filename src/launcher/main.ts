/**
 * The `hermes` command (`deno task hermes`, `deno install -g
 * jsr:@hermes/memory/launcher`): starts the CLI with exactly the permissions
 * the profile's configuration needs. It writes only its own cache, runs only
 * Deno and never imports provider code.
 *
 * Who imports it: nobody; `deno install -g … jsr:@hermes/memory/launcher`
 * installs it as the `hermes` command, and `deno task hermes` runs it.
 *
 * ```sh
 * deno run --no-prompt --cached-only --allow-read --allow-write --allow-env --allow-run --allow-ffi src/launcher/main.ts memory status
 * ```
 *
 * @module
 */

import { launch } from "./launch.ts";

if (import.meta.main) {
  Deno.exit(await launch(Deno.args, { exec: true }));
}
