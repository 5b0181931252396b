import assert from "node:assert/strict";
import {
  REDACTED,
  redactForEgress,
  redactText,
} from "../../src/core/redact.ts";

const OPENAI = "sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e";
const GITHUB = "ghp_16C7e42F292c6912E7710c838347Ae178B4a";
const SLACK = "xoxb-2048-1024-abcdefghijklmnop";
const AWS = "AKIAIOSFODNN7EXAMPLE";
const JWT =
  "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";

Deno.test("redactText() masks vendor-shaped API keys", () => {
  for (
    const key of [
      OPENAI,
      GITHUB,
      SLACK,
      AWS,
      JWT,
      "github_pat_11ABCDEFG0123456789_abcdefXYZ",
    ]
  ) {
    const out = redactText(`use ${key} now`);
    assert.equal(out, `use ${REDACTED} now`, key);
  }
});

Deno.test("redactText() leaves prose and look-alike words alone", () => {
  const prose =
    "The task-management-system logs disk-usage; I prefer tabs. Token limits and max_tokens: 4096 matter. Sort key: name.";
  assert.equal(redactText(prose), prose);
  assert.equal(
    redactText("Token: the model used many tokens"),
    "Token: the model used many tokens",
  );
});

Deno.test("redactText() masks bearer tokens and Authorization headers", () => {
  assert.equal(
    redactText("Authorization: Bearer abc123.def456-ghi"),
    `Authorization: Bearer ${REDACTED}`,
  );
  assert.equal(
    redactText("authorization: Basic dXNlcjpwYXNzd29yZA=="),
    `authorization: Basic ${REDACTED}`,
  );
  assert.equal(
    redactText("send Bearer Zm9vYmFyYmF6cXV4 along"),
    `send Bearer ${REDACTED} along`,
  );
  assert.equal(redactText("The bearer instrument."), "The bearer instrument.");
});

Deno.test("redactText() masks KEY=value for secret-looking names only", () => {
  assert.equal(
    redactText(
      "OPENAI_API_KEY=abc123xyz DB_PASSWORD=hunter22 KEYBOARD=us LANG=en_US",
    ),
    `OPENAI_API_KEY=${REDACTED} DB_PASSWORD=${REDACTED} KEYBOARD=us LANG=en_US`,
  );
  assert.equal(
    redactText('export GITHUB_TOKEN="abc def"'),
    `export GITHUB_TOKEN="${REDACTED}"`,
  );
  assert.equal(
    redactText("HONCHO_API_KEY = 'k-123456'"),
    `HONCHO_API_KEY = '${REDACTED}'`,
  );
  assert.equal(
    redactText("API_KEY=$OPENAI_API_KEY"),
    "API_KEY=$OPENAI_API_KEY",
  );
});

Deno.test("redactText() masks long hex and base64 values after key names", () => {
  const json =
    '{"api_key": "3f9a2b7c9d1e4f6a8b0c", "max_tokens": 4096, "token_type": "bearer"}';
  assert.equal(
    redactText(json),
    `{"api_key": "${REDACTED}", "max_tokens": 4096, "token_type": "bearer"}`,
  );
  assert.equal(
    redactText("signing_key: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b"),
    `signing_key: ${REDACTED}`,
  );
  assert.equal(
    redactText("key=c2VjcmV0LXZhbHVlLWhlcmUtMTIz and key=short"),
    `key=${REDACTED} and key=short`,
  );
  assert.equal(
    redactText("apiKey: 'xyz987654321abc'"),
    `apiKey: '${REDACTED}'`,
  );
});

Deno.test("redactText() masks URL credentials and secret query parameters", () => {
  assert.equal(
    redactText("git clone https://bob:s3cr3t-pw@git.example.com/repo.git"),
    `git clone https://bob:${REDACTED}@git.example.com/repo.git`,
  );
  assert.equal(
    redactText(
      "GET https://api.example.com/x?access_token=abcdef123456&page=2",
    ),
    `GET https://api.example.com/x?access_token=${REDACTED}&page=2`,
  );
  const plain = "see https://example.com:8080/path and mail me@example.com";
  assert.equal(redactText(plain), plain);
});

Deno.test("redactText() masks PEM private keys", () => {
  const pem =
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nAAAA\n-----END RSA PRIVATE KEY-----";
  assert.equal(redactText(`key:\n${pem}\nthanks`), `key:\n${REDACTED}\nthanks`);
});

Deno.test("redactText() masks a learned secret everywhere in the text", () => {
  assert.equal(
    redactText("DB_PASSWORD=hunter22 and later I typed hunter22 again"),
    `DB_PASSWORD=${REDACTED} and later I typed ${REDACTED} again`,
  );
});

Deno.test("redactForEgress() masks a token found in one value everywhere in the hand-off", () => {
  const secret = "Tr0ub4dor&3x";
  const messages = [
    { role: "tool", content: `DB_PASSWORD=${secret}` },
    { role: "assistant", content: `Your password is ${secret}.` },
  ];
  const [user, out] = redactForEgress([`repeat ${secret}`, messages]);
  assert.equal(user, `repeat ${REDACTED}`);
  assert.deepEqual(out, [
    { role: "tool", content: `DB_PASSWORD=${REDACTED}` },
    { role: "assistant", content: `Your password is ${REDACTED}.` },
  ]);
});

Deno.test("redactForEgress() never mutates the caller's objects", () => {
  const args = { query: `find ${OPENAI}`, nested: { list: [GITHUB, 3, null] } };
  const before = structuredClone(args);
  const out = redactForEgress(args);
  assert.deepEqual(args, before);
  assert.notEqual(out, args);
  assert.notEqual(out.nested, args.nested);
  assert.deepEqual(out, {
    query: `find ${REDACTED}`,
    nested: { list: [REDACTED, 3, null] },
  });
});

Deno.test("redactForEgress() walks nested tool calls and multimodal parts", () => {
  const message = {
    role: "assistant",
    content: [{ type: "text", text: `token ${SLACK}` }],
    tool_calls: [{
      function: { name: "x", arguments: `{"api_key": "${OPENAI}"}` },
    }],
  };
  const out = redactForEgress(message);
  assert.equal(out.content[0]!.text, `token ${REDACTED}`);
  assert.equal(
    out.tool_calls[0]!.function.arguments,
    `{"api_key": "${REDACTED}"}`,
  );
});

Deno.test("redactForEgress() leaves data: URLs alone", () => {
  const image = `data:image/png;base64,${btoa(OPENAI)}${OPENAI}`;
  assert.equal(redactForEgress(image), image);
  const parts = [
    { type: "image_url", image_url: { url: image } },
    `key ${OPENAI}`,
  ];
  const out = redactForEgress(parts);
  assert.equal((out[0] as { image_url: { url: string } }).image_url.url, image);
  assert.equal(out[1], `key ${REDACTED}`);
  const inline = `![x](data:text/plain;base64,${OPENAI}) and ${OPENAI}`;
  assert.equal(
    redactText(inline),
    `![x](data:text/plain;base64,${OPENAI}) and ${REDACTED}`,
  );
});

Deno.test("redactForEgress() keeps cycles, shared references and non-plain objects", () => {
  const shared = { text: `k ${GITHUB}` };
  const root: Record<string, unknown> = {
    a: shared,
    b: shared,
    when: new Date(0),
  };
  root.self = root;
  const out = redactForEgress(root);
  assert.equal(out.a, out.b);
  assert.equal(out.self, out);
  assert.equal(out.when, root.when);
  assert.deepEqual(out.a, { text: `k ${REDACTED}` });
});

Deno.test("redactForEgress() passes non-string scalars through", () => {
  assert.equal(redactForEgress(42), 42);
  assert.equal(redactForEgress(null), null);
  assert.equal(redactForEgress(undefined), undefined);
  assert.equal(redactForEgress(true), true);
});

Deno.test("redactForEgress() is idempotent on already redacted text", () => {
  const inputs = [
    `my key is ${OPENAI}`,
    `OPENAI_API_KEY=${OPENAI}`,
    `Authorization: Bearer ${OPENAI}`,
    `https://bob:${OPENAI}@example.com`,
    `{"password": "${OPENAI}"}`,
  ];
  const once = redactForEgress(inputs);
  assert.deepEqual(redactForEgress(once), once);
  assert.deepEqual(once, [
    `my key is ${REDACTED}`,
    `OPENAI_API_KEY=${REDACTED}`,
    `Authorization: Bearer ${REDACTED}`,
    `https://bob:${REDACTED}@example.com`,
    `{"password": "${REDACTED}"}`,
  ]);
});

Deno.test("redactText() masks what its pre-check must not wave through", () => {
  // Shapes at the edges of the cheap pre-check (case, blanks, quotes, a key
  // word inside a longer key, a prefix after "." or "-", a line break).
  const cases: [string, string][] = [
    [
      "PROXY-AUTHORIZATION  :\n  c3VwZXJzZWNyZXQ=",
      "PROXY-AUTHORIZATION  :\n  ",
    ],
    ['"dbPassword"  = "hunter2hunter2"', '"dbPassword"  = "'],
    ["SESSION_COOKIE=0123456789abcdef0123456789abcdef", "SESSION_COOKIE="],
    [`see config.${GITHUB}`, "see config."],
    [`x-${OPENAI}`, "x-"],
    ["BEARER\tabcdefgh12345678", "BEARER\t"],
    ["postgres://admin:s3cr3t-pw@db:5432/x", "postgres://admin:"],
    ["-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE", ""],
  ];
  for (const [text, kept] of cases) {
    const out = redactText(text);
    assert.ok(out.startsWith(kept + REDACTED), `${text} -> ${out}`);
  }
});
