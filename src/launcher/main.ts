/**
 * The `hermes` command: the launcher that starts the CLI with exactly the
 * permissions the profile's configuration needs. This is what
 * `deno task hermes`, the `hermes` command installed with
 * `deno install -g`, and the `jsr:@hermes/memory/launcher` entry run:
 *
 * ```sh
 * deno run --no-prompt --cached-only --allow-read --allow-write --allow-env --allow-run src/launcher/main.ts memory status
 * ```
 *
 * The launcher itself reads the profile's configuration (and what the
 * active provider's grant depends on), writes only its own cache and runs
 * only Deno; it never imports provider code.
 *
 * Who imports it: nobody; `deno install -g … jsr:@hermes/memory/launcher`
 * installs it as the `hermes` command, and `deno task hermes` runs it.
 *
 * @module
 */

import { launch } from "./launch.ts";

if (import.meta.main) {
  Deno.exit(await launch(Deno.args));
}
