import assert from "node:assert/strict";
import { maskSecret } from "../../src/core/mask.ts";

Deno.test("maskSecret() shows only the last four characters of a long secret", () => {
  assert.equal(maskSecret("sk-live-1234567890abcd"), "...abcd");
  assert.equal(maskSecret("12345"), "...2345");
});

Deno.test("maskSecret() says 'set' for a secret of four characters or fewer", () => {
  assert.equal(maskSecret("abcd"), "set");
  assert.equal(maskSecret("a"), "set");
});

Deno.test("maskSecret() returns an empty string for an empty secret", () => {
  assert.equal(maskSecret(""), "");
});

Deno.test("maskSecret() never splits a non-ASCII character", () => {
  assert.equal(maskSecret("key-😀😀😀😀x"), "...😀😀😀x");
});
