// A library host's world: a user's home with `~/.hermes`, and the host's own
// deno.json whose import map names the framework by absolute path (and
// nothing else: no "unstable", as a JSR consumer's project has).
import { join } from "node:path";
import { REPO } from "./plugin_fixtures.ts";

/** A user's home with `~/.hermes`, and the host's own deno.json. */
export interface LibraryWorld extends AsyncDisposable {
  root: string;
  userHome: string;
  home: string;
  config: string;
}

/** Writes `<root>/deno.json`: the framework's import map, `./` targets resolved under `framework`. */
export async function hostConfig(
  root: string,
  framework: string = REPO,
): Promise<string> {
  const { imports } = JSON.parse(
    await Deno.readTextFile(join(REPO, "deno.json")),
  ) as { imports: Record<string, string> };
  const absolute: Record<string, string> = {};
  for (const [key, value] of Object.entries(imports)) {
    absolute[key] = value.startsWith("./") ? join(framework, value) : value;
  }
  const config = join(root, "deno.json");
  await Deno.writeTextFile(
    config,
    JSON.stringify({ imports: absolute, nodeModulesDir: "none" }),
  );
  return config;
}

/** Creates the world (removed on dispose); `configYaml`, when given, is `~/.hermes/config.yaml`. */
export async function libraryWorld(
  configYaml?: string,
  prefix = "hermes-libhost-",
): Promise<LibraryWorld> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix }));
  const userHome = join(root, "user");
  const home = join(userHome, ".hermes");
  await Deno.mkdir(join(home, "plugins"), { recursive: true });
  if (configYaml !== undefined) {
    await Deno.writeTextFile(join(home, "config.yaml"), configYaml);
  }
  return {
    root,
    userHome,
    home,
    config: await hostConfig(root),
    async [Symbol.asyncDispose]() {
      await Deno.remove(root, { recursive: true });
    },
  };
}
