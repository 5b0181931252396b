import assert from "node:assert/strict";
import { join } from "node:path";
import { parse } from "yaml";
import { parseSimpleYaml } from "../../src/plugins/_simple_yaml.ts";
import { FIXTURES } from "../helpers/plugin_fixtures.ts";

const INSIDE = [
  "",
  "name: honcho\ndescription: Honcho memory\n",
  "name: a\r\ndescription: 'single quoted: fine'\r\n",
  'description: "double quoted"\nhooks: [on_session_end, on_pre_compress]\n',
  "hooks:\n  - on_session_end\n  - on_memory_write\n",
  "permissions:\n  read: [~/.honcho/config.json, /etc/x]\n  env: [A_KEY, B]\n  net: [api.example.com, h:8000]\n  npm: true\n",
  "permissions:\n    npm: false\n    env: []\n",
  "# a comment line\nname: x\n\n# another\n",
  "url: https://example.com/x\n",
  "description: Uses a:b and c-d without spaces after colons\n",
];

const OUTSIDE = [
  "version: 1.0\n",
  "version: 1.2.0\n",
  "name: ~\n",
  "name: null\n",
  "flag: yes\n",
  "name: x # trailing comment\n",
  "name: x\nname: y\n",
  "name:\n",
  "permissions:\n  read:\n    - /a\n",
  "external_dependencies:\n  - {name: x}\n",
  "description: >\n  folded\n",
  "description: first line\n  continued\n",
  "---\nname: x\n",
  "name: 'it''s'\n",
  'name: "esc\\"aped"\n',
  "name: &a x\n",
  "value: .inf\n",
  "hooks: [a, [b]]\n",
  "name:\tx\n",
];

Deno.test("parseSimpleYaml() agrees with the YAML library on the plugin.yaml subset", () => {
  for (const text of INSIDE) {
    const fast = parseSimpleYaml(text);
    assert.notEqual(fast, undefined, text);
    assert.deepEqual(fast, parse(text) ?? {}, text);
  }
});

Deno.test("parseSimpleYaml() hands anything else to the YAML library", () => {
  for (const text of OUTSIDE) {
    assert.equal(parseSimpleYaml(text), undefined, text);
  }
});

Deno.test("parseSimpleYaml() agrees with the YAML library on every fixture plugin.yaml", async () => {
  for await (const entry of Deno.readDir(FIXTURES)) {
    let text: string;
    try {
      text = await Deno.readTextFile(join(FIXTURES, entry.name, "plugin.yaml"));
    } catch {
      continue;
    }
    const fast = parseSimpleYaml(text);
    if (fast !== undefined) {
      assert.deepEqual(fast, parse(text) ?? {}, entry.name);
    }
  }
});
