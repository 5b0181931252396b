// A scratch user whose Hermes home uses the bundled Honcho provider against
// a Honcho test server: $HOME/.hermes/honcho.json (the key, the server as
// the `hermes` host's baseUrl, peer `alice`) and config.yaml (memory.provider
// honcho; by default the server's host granted under
// memory.permissions.honcho.net). Removed on dispose.
import { join } from "node:path";

/** The scratch user. */
export interface HonchoUser extends AsyncDisposable {
  /** `HOME`. */
  userHome: string;
  /** `$HOME/.hermes`. */
  home: string;
}

/**
 * Creates the user.
 *
 * @param url The Honcho server's URL.
 * @param key Its API key.
 * @param config The config.yaml text (default: provider honcho, the
 * server's host granted).
 */
export async function honchoUser(
  url: string,
  key: string,
  config?: string,
): Promise<HonchoUser> {
  const userHome = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "hermes-user-" }),
  );
  const home = join(userHome, ".hermes");
  await Deno.mkdir(home, { recursive: true });
  await Deno.writeTextFile(
    join(home, "honcho.json"),
    JSON.stringify({
      apiKey: key,
      hosts: { hermes: { baseUrl: url, peerName: "alice" } },
    }),
  );
  await Deno.writeTextFile(
    join(home, "config.yaml"),
    config ??
      `memory:\n  provider: honcho\n  permissions:\n    honcho:\n      net: [${
        new URL(url).host
      }]\n`,
  );
  return {
    userHome,
    home,
    async [Symbol.asyncDispose]() {
      await Deno.remove(userHome, { recursive: true });
    },
  };
}
