/**
 * The `hermes` command (`deno task hermes`, `deno install -g
 * jsr:@hermes/memory/launcher`): starts the CLI with exactly the permissions
 * the profile's configuration needs. It writes only its own cache, runs only
 * Deno and never imports provider code.
 *
 * ```sh
 * deno run --no-prompt --cached-only --allow-read --allow-write --allow-env --allow-run src/launcher/main.ts memory status
 * ```
 *
 * @module
 */

import { launch } from "./launch.ts";

if (import.meta.main) {
  Deno.exit(await launch(Deno.args));
}
