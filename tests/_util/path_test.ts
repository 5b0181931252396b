// src/_util/path.ts gives Node's answers for the POSIX paths the library
// handles, so replacing `node:path` and `node:url` changed no behaviour.
import assert from "node:assert/strict";
import * as node from "node:path";
import * as url from "node:url";
import * as ours from "../../src/_util/path.ts";

const PATHS = [
  "",
  "/",
  "a",
  "a/",
  "/a/b/",
  "a/../..",
  "./",
  ".",
  "..",
  "../a/./b",
  "/a//b",
  "/a/b/../../..",
  "a/b/c/../d",
  "/x/.hidden",
  "f.tar.gz",
  "a.",
  "/a/b.c/",
  "foo//bar/",
  "../../",
  "/..",
  ".a.b",
  "...",
  "a/.b.",
];

Deno.test("join, resolve, relative, normalize, dirname, basename, extname and isAbsolute match node:path", () => {
  for (const a of PATHS) {
    for (
      const name of [
        "normalize",
        "dirname",
        "extname",
        "isAbsolute",
        "resolve",
      ] as const
    ) {
      assert.equal(
        ours[name](a),
        node[name](a),
        `${name}(${JSON.stringify(a)})`,
      );
    }
    assert.equal(ours.basename(a), node.basename(a), `basename(${a})`);
    assert.equal(
      ours.basename(a, ".c"),
      node.basename(a, ".c"),
      `basename(${a}, .c)`,
    );
    for (const b of PATHS) {
      const both = JSON.stringify([a, b]);
      assert.equal(ours.join(a, b), node.join(a, b), `join${both}`);
      assert.equal(ours.resolve(a, b), node.resolve(a, b), `resolve${both}`);
      assert.equal(ours.relative(a, b), node.relative(a, b), `relative${both}`);
    }
  }
  assert.equal(ours.join(), node.join());
  assert.equal(ours.sep, node.sep);
});

Deno.test("file URLs round-trip as node:url's do, special characters included", () => {
  for (
    const path of [...PATHS, "/a b/c%d/e#f?g\\h\ni\tj\rk", "/tmp/x/", "/ü/日本"]
  ) {
    const expected = url.pathToFileURL(path || ".");
    assert.equal(ours.pathToFileURL(path || ".").href, expected.href, path);
    assert.equal(ours.fileURLToPath(expected), url.fileURLToPath(expected));
    assert.equal(
      ours.fileURLToPath(expected.href),
      url.fileURLToPath(expected),
    );
  }
  assert.throws(() => ours.fileURLToPath("https://example.com/a"), TypeError);
  assert.throws(() => ours.fileURLToPath("file://host/a"), TypeError);
  assert.throws(() => ours.fileURLToPath("file:///a%2Fb"), TypeError);
});
