import assert from "node:assert/strict";
import { join } from "node:path";
import { parse } from "yaml";
import {
  BUNDLED_MANIFEST_SOURCES,
  BUNDLED_MANIFESTS,
} from "../../src/plugins/bundled_manifests.ts";
import {
  parsePluginManifest,
  pluginManifestFromValue,
} from "../../src/plugins/plugin_manifest.ts";
import { REPO } from "../helpers/plugin_fixtures.ts";

Deno.test("the embedded bundled manifests are the plugin.yaml files, for a framework loaded from a URL", async () => {
  const dir = join(REPO, "plugins", "memory");
  const names = [...Deno.readDirSync(dir)].filter((e) => e.isDirectory).map((
    e,
  ) => e.name).sort();
  assert.deepEqual(Object.keys(BUNDLED_MANIFESTS).sort(), names);
  for (const name of names) {
    const path = join(dir, name, "plugin.yaml");
    const text = await Deno.readTextFile(path);
    assert.deepEqual(BUNDLED_MANIFESTS[name], parse(text), name);
    assert.deepEqual(
      pluginManifestFromValue(BUNDLED_MANIFESTS[name], path),
      await parsePluginManifest(text, path),
    );
    assert.equal(
      BUNDLED_MANIFEST_SOURCES[name],
      text,
      `BUNDLED_MANIFEST_SOURCES.${name} must be ${path} byte for byte`,
    );
  }
});
