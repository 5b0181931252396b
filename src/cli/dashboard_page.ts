// The page `hermes memory dashboard` serves, style and script inline. Every
// server value goes in with `textContent`, never parsed as HTML; requests
// carry the token in `X-Hermes-Token`; every change is a JSON POST.

const STYLE = `
:root { color-scheme: light dark; --fg:#1d2330; --muted:#5b6472; --bg:#f6f7f9; --card:#fff;
  --line:#dde1e7; --accent:#3056d3; --ok:#1f8a4c; --bad:#c0392b; --warn:#b7791f; }
@media (prefers-color-scheme: dark) { :root { --fg:#e6e9ef; --muted:#9aa3b2; --bg:#14171c;
  --card:#1c2027; --line:#2d333d; --accent:#7b9cff; --ok:#4cc38a; --bad:#ff6b5e; --warn:#e0b050; } }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 system-ui, sans-serif; color:var(--fg); background:var(--bg); }
header { padding:14px 24px; border-bottom:1px solid var(--line); background:var(--card);
  display:flex; gap:16px; align-items:baseline; flex-wrap:wrap; }
header h1 { font-size:18px; margin:0; }
header .home { color:var(--muted); font-family:ui-monospace, monospace; font-size:12px; }
main { display:grid; grid-template-columns:repeat(auto-fit, minmax(420px, 1fr)); gap:16px;
  padding:16px 24px; max-width:1400px; }
main > section { min-width:0; }
td:first-child { overflow-wrap:anywhere; } td:nth-child(2), td:last-child { width:1%; white-space:nowrap; }
section { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:14px 16px; }
section h2 { font-size:15px; margin:0 0 10px; }
table { border-collapse:collapse; width:100%; }
th, td { text-align:left; padding:5px 6px; border-bottom:1px solid var(--line); vertical-align:top; }
th { font-weight:600; color:var(--muted); font-size:12px; }
.badge { display:inline-block; padding:0 6px; border-radius:9px; font-size:11px; border:1px solid var(--line); }
.badge.active { background:var(--accent); color:#fff; border-color:var(--accent); }
.ok { color:var(--ok); } .bad { color:var(--bad); } .warn { color:var(--warn); } .muted { color:var(--muted); }
button { font:inherit; padding:3px 10px; border-radius:5px; border:1px solid var(--line);
  background:var(--bg); color:var(--fg); cursor:pointer; }
button.primary { background:var(--accent); border-color:var(--accent); color:#fff; }
button:disabled { opacity:.5; cursor:default; }
input, select, textarea { font:inherit; padding:4px 6px; border:1px solid var(--line); border-radius:5px;
  background:var(--bg); color:var(--fg); width:100%; }
input[type=checkbox] { width:auto; }
textarea { min-height:52px; resize:vertical; }
label.field { display:block; margin:8px 0; }
label.field span.name { font-weight:600; }
label.field small { display:block; color:var(--muted); }
ol.entries { padding-left:26px; margin:6px 0; }
ol.entries li { padding:4px 0; border-bottom:1px dashed var(--line); white-space:pre-wrap; word-break:break-word; }
ol.entries li .actions { float:right; display:flex; gap:4px; margin-left:8px; }
.bar { height:6px; background:var(--line); border-radius:3px; overflow:hidden; margin:4px 0 6px; }
.bar > div { height:100%; background:var(--accent); }
.bar > div.full { background:var(--bad); }
.result { margin-top:8px; padding:8px; border-radius:5px; border:1px solid var(--line);
  white-space:pre-wrap; font-family:ui-monospace, monospace; font-size:12px; }
.result.ok { border-color:var(--ok); } .result.bad { border-color:var(--bad); }
.finding { padding:5px 0; border-bottom:1px solid var(--line); }
.finding .fix { color:var(--muted); }
.var { font-size:12px; }
details { margin:8px 0; } summary { cursor:pointer; color:var(--accent); }
.row { display:flex; gap:8px; align-items:center; margin-top:6px; }
.row > * { flex:none; width:auto; } .row > .grow { flex:1; }
pre.text { white-space:pre-wrap; font-size:12px; margin:4px 0; }
`;

const SCRIPT = `
"use strict";
const TOKEN = new URLSearchParams(location.search).get("token") || "";
const $ = (id) => document.getElementById(id);
function el(tag, props, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (k === "class") e.className = v;
    else if (k === "width") e.style.width = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat(Infinity)) if (c !== null && c !== undefined) e.append(c instanceof Node ? c : String(c));
  return e;
}
async function api(method, path, body) {
  const init = { method, headers: { "X-Hermes-Token": TOKEN } };
  if (body !== undefined) { init.headers["Content-Type"] = "application/json"; init.body = JSON.stringify(body); }
  const res = await fetch(path, init);
  const data = await res.json().catch(() => ({ error: "HTTP " + res.status }));
  if (!res.ok && !data.error && !data.result) data.error = "HTTP " + res.status;
  return data;
}
function fill(target, ...nodes) {
  target.replaceChildren(...nodes.flat(Infinity).filter((n) => n !== null && n !== undefined));
}
const fmt = (v) => v === null || v === undefined ? "" : typeof v === "object" ? JSON.stringify(v) : String(v);

async function loadProviders() {
  const data = await api("GET", "/api/providers");
  if (data.error) return fill($("providers"), el("p", { class: "bad" }, data.error));
  $("home").textContent = data.hermesHome;
  const rows = data.providers.map((p) => el("tr", { "data-provider": p.name },
    el("td", {}, el("b", {}, p.name), " ", p.active ? el("span", { class: "badge active" }, "active") : null,
      el("div", { class: "muted" }, p.description)),
    el("td", {}, p.source),
    el("td", {}, p.ready === true ? el("span", { class: "ok" }, "ready") :
      p.ready === false ? el("span", { class: "warn" }, "needs setup") : el("span", { class: "muted" }, "unknown"),
      // Required variables, and whichever of the alternatives makes it configured.
      p.variables.filter((v) => v.required || v.set).map((v) => el("div", { class: "var " + (v.set ? "ok" : "muted") }, (v.set ? "\\u2713 " : "\\u2717 ") + v.name)),
      p.file ? el("div", { class: "var ok", title: p.file }, "\\u2713 " + p.file.replace(data.hermesHome + "/", "")) : null,
      p.ready === false && !p.variables.some((v) => !v.required && v.set) && p.variables.some((v) => !v.required)
        ? el("div", { class: "var muted" }, "set one of " + p.variables.filter((v) => !v.required).map((v) => v.name).join(", ")) : null),
    el("td", {}, el("button", { onclick: () => openConfig(p.name) }, "Configure"))));
  fill($("providers"), el("table", {}, el("tr", {}, el("th", {}, "Provider"), el("th", {}, "Source"),
    el("th", {}, "Readiness"), el("th", {})), rows),
    el("p", { class: "muted" }, data.active ? "Active provider: " + data.active + " " : "Active: built-in memory only",
      data.active ? el("button", { id: "use-builtin", onclick: async () => {
        showSetup($("provider-result"), await api("POST", "/api/providers/builtin/setup", { values: {}, request: null }));
        loadProviders(); loadEntries();
      } }, "Use built-in memory only") : null));
  $("honcho-section").hidden = data.active !== "honcho";
  if (data.active === "honcho") loadHoncho();
}

async function openConfig(name) {
  const box = $("config");
  $("config-section").hidden = false;
  fill(box, el("p", { class: "muted" }, "Loading the settings of " + name + "\\u2026"));
  const data = await api("GET", "/api/providers/" + encodeURIComponent(name) + "/schema");
  if (data.error) return fill(box, el("p", { class: "bad" }, data.error));
  const inputs = new Map();
  const fields = data.fields.map((f) => {
    let input;
    const current = fmt(f.current);
    if (f.secret) {
      input = el("input", { type: "password", name: f.key, autocomplete: "off",
        placeholder: f.current ? "set (" + f.current + ") \\u2014 leave blank to keep" : "not set" });
    } else if (f.choices) {
      input = el("select", { name: f.key }, el("option", { value: "" }, "(keep: " + (current || fmt(f.default) || "default") + ")"),
        f.choices.map((c) => el("option", { value: c.value }, c.label)));
    } else if (f.type === "boolean") {
      input = el("select", { name: f.key }, el("option", { value: "" }, "(keep: " + (current || fmt(f.default) || "default") + ")"),
        el("option", { value: "true" }, "true"), el("option", { value: "false" }, "false"));
    } else {
      input = el("input", { type: "text", name: f.key, value: current, placeholder: fmt(f.default) });
    }
    inputs.set(f.key, { input, field: f, initial: f.secret || f.choices || f.type === "boolean" ? "" : current });
    const label = el("label", { class: "field" + (f.applies ? "" : " muted") },
      el("span", { class: "name" }, f.label), f.required ? " *" : "", f.secret ? el("span", { class: "badge" }, "secret \\u2192 .env") : "",
      input, el("small", {}, (f.label.includes(f.description) ? "" : f.description) + (f.source ? " (now from " + f.source + ")" : "") +
        (f.url ? " \\u2014 get one at " + f.url : "")));
    return { label, main: f.required || f.secret || f.current !== null };
  });
  const main = fields.filter((x, i) => x.main || i < 7).map((x) => x.label);
  const more = fields.filter((x, i) => !(x.main || i < 7)).map((x) => x.label);
  const result = el("div");
  const save = el("button", { class: "primary", type: "submit" }, "Save and test connection");
  // What setup would ask to approve, shown before Save; unchecked is setup's default No.
  const approve = el("input", { type: "checkbox", id: "approve-request" });
  const request = data.request ? el("div", { class: "result bad", id: "request" }, el("pre", { class: "text" }, data.request.text),
    data.request.refused.map((m) => el("div", { class: "muted" }, "Never granted (the floor): " + m)),
    el("label", {}, approve, " Approve this for '" + name + "' (unchecked: it runs without it)")) : null;
  const form = el("form", { onsubmit: async (ev) => {
    ev.preventDefault();
    const values = {};
    for (const [key, { input, initial }] of inputs) {
      const v = input.value;
      if (v !== initial && !(v === "" && initial === "")) values[key] = v;
    }
    save.disabled = true;
    fill(result, el("p", { class: "muted" }, "Saving through 'hermes memory setup " + name + "'\\u2026"));
    const r = await api("POST", "/api/providers/" + encodeURIComponent(name) + "/setup",
      { values, request: data.request ? data.request.digest : null, approve: approve.checked });
    save.disabled = false;
    for (const { input, field } of inputs.values()) if (field.secret) input.value = "";
    showSetup(result, r);
    loadProviders(); loadHealth();
  } }, el("h3", {}, "Settings of " + name), main,
    more.length ? el("details", {}, el("summary", {}, "More settings (" + more.length + ")"), more) : null,
    el("p", { class: "muted" }, "Saved through 'hermes memory setup " + name + " --set \\u2026': secrets go to .env, the rest to the provider's own settings."),
    request, el("div", { class: "row" }, save), result);
  fill(box, form);
}

function showSetup(box, r) {
  if (r.error || r.refused) { fill(box, el("div", { class: "result bad", id: "setup-outcome" }, r.error || r.refused)); return box; }
  const ok = r.exitCode === 0;
  // Saved is what changed on disk; the connection test is reported apart.
  const parts = [el("div", { class: r.saved || ok ? "ok" : "bad", id: "setup-outcome" },
    r.saved ? "Saved." : ok ? "Saved (no setting changed)." : "Not saved (exit code " + r.exitCode + ").")];
  if (r.summary) parts.push(el("div", { id: "setup-changes" }, r.summary));
  if (r.connection) {
    const c = r.connection;
    parts.push(el("div", { id: "connection-result", class: c.ok ? "ok" : "bad" },
      c.ok ? "Connection test: OK \\u2014 " + c.url + " answered in " + c.elapsedMs + " ms"
        : "Connection test failed: " + (c.error || "") + (c.fix ? "\\nFix: " + c.fix : "")));
  }
  if (r.messages) parts.push(el("div", { class: "muted" }, r.messages.trim()));
  fill(box, el("div", { class: "result " + (ok && (!r.connection || r.connection.ok) ? "ok" : "bad") }, parts));
  return box;
}

async function loadHealth() {
  fill($("health"), el("p", { class: "muted" }, "Running status and doctor checks\\u2026"));
  const data = await api("GET", "/api/health");
  if (data.error) return fill($("health"), el("p", { class: "bad" }, data.error));
  const problems = data.findings.filter((f) => f.problem);
  const items = data.findings.map((f) => el("div", { class: "finding" },
    el("span", { class: f.problem ? "bad" : "ok" }, f.problem ? "\\u2717 " : "\\u2713 "),
    el("b", {}, f.where), " \\u2014 ", f.message,
    f.fix ? el("div", { class: "fix" }, "Fix: " + f.fix) : null));
  fill($("health"), el("p", { class: problems.length ? "bad" : "ok" },
    problems.length ? problems.length + " problem(s) found" : "No problems found"), items);
}

async function loadEntries() {
  const data = await api("GET", "/api/entries");
  if (data.error) return fill($("entries"), el("p", { class: "bad" }, data.error));
  const inputs = Object.entries(data.settings).map(([key, v]) => typeof v === "boolean"
    ? el("label", { class: "field" }, el("input", { type: "checkbox", name: key, checked: v }), " " + key)
    : el("label", { class: "field" }, el("span", { class: "name" }, key), el("input", { type: "number", name: key, value: v, min: 1 })));
  fill($("builtin-settings"), el("form", { onsubmit: async (ev) => {
    ev.preventDefault();
    const body = {};
    for (const l of inputs) { // Only what changed: a default is not pinned.
      const i = l.querySelector("input"), v = i.type === "checkbox" ? i.checked : Number(i.value);
      if (v !== data.settings[i.name]) body[i.name] = v;
    }
    const r = await api("POST", "/api/builtin", body);
    fill($("builtin-result"), el("div", { class: "result " + (r.error ? "bad" : "ok") }, r.error || r.summary));
    loadEntries();
  } }, el("h3", {}, "Settings (config.yaml memory.*)"), inputs, el("button", { class: "primary", type: "submit" }, "Save settings")));
  fill($("entries"), data.files.map((f) => el("div", { "data-file": f.target },
    el("h3", {}, f.file + " \\u2014 " + (f.target === "user" ? "user profile" : "agent notes")),
    el("div", { class: "muted" }, f.usage + (f.enabled ? "" : " (disabled in config.yaml)")),
    el("div", { class: "bar" }, el("div", { class: f.percent >= 100 ? "full" : "", width: Math.min(100, f.percent) + "%" })),
    f.entries.length === 0 ? el("p", { class: "muted" }, "(no entries)") :
    el("ol", { class: "entries" }, f.entries.map((e) => {
      const li = el("li", { "data-number": e.number });
      const view = () => fill(li, el("span", { class: "actions" },
          el("button", { onclick: edit }, "Edit"),
          el("button", { onclick: () => change({ action: "remove", target: f.target, number: e.number },
            "Remove entry " + e.number + " of " + f.file + "?") }, "Remove")),
        e.text, e.blocked ? el("div", { class: "warn" }, "kept out of the system prompt by the threat scan") : null);
      const edit = () => {
        const area = el("textarea", {}, e.text);
        fill(li, area, el("div", { class: "row" },
          el("button", { class: "primary", onclick: () => change({ action: "replace", target: f.target, number: e.number, content: area.value }) }, "Save"),
          el("button", { onclick: view }, "Cancel")));
      };
      view();
      return li;
    })))));
}

async function change(body, question) {
  if (question && !confirm(question)) return;
  const r = await api("POST", "/api/entries", body);
  const ok = !r.error && r.ok;
  fill($("entry-result"), el("div", { class: "result " + (ok ? "ok" : "bad") },
    ok ? (r.result.message || "Saved.") + (r.result.usage ? " (" + r.result.usage + ")" : "")
      : "Refused: " + (r.error || r.result.error)));
  if (ok) { if (body.action === "add") $("new-entry").value = ""; loadEntries(); }
}

async function loadHoncho() {
  for (const [id, path] of [["peer-card", "/api/honcho/card"], ["ai-rep", "/api/honcho/representation"]]) {
    fill($(id), el("span", { class: "muted" }, "Loading\\u2026"));
    api("GET", path).then((r) => fill($(id), r.error ? failure(r) :
      Array.isArray(r.result) ? el("ul", {}, r.result.map((x) => el("li", {}, x))) : markdown(String(r.result))));
  }
}
const failure = (r) => el("div", { class: "bad" }, r.error, r.cause ? el("div", {}, "Cause: " + r.cause) : null,
  r.fix ? el("div", { class: "fix" }, "Fix: " + r.fix) : null);
// Headings, bullets and bold of a provider's markdown as elements; every text node escaped.
function markdown(text) {
  const out = [];
  let list = null;
  const inline = (line) => line.split(/\\*\\*(.+?)\\*\\*/).map((part, i) => i % 2 ? el("b", {}, part) : part);
  for (const line of text.split("\\n")) {
    const h = /^#{1,6}\\s+(.*)$/.exec(line), li = /^\\s*[-*]\\s+(.*)$/.exec(line);
    if (li) { if (!list) out.push(list = el("ul")); list.append(el("li", {}, inline(li[1]))); continue; }
    list = null;
    if (h) out.push(el("h4", {}, inline(h[1])));
    else if (line.trim()) out.push(el("p", { class: "text" }, inline(line)));
  }
  return el("div", { class: "markdown" }, out);
}

$("add-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  change({ action: "add", target: $("new-target").value, content: $("new-entry").value });
});
$("search-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  fill($("search-result"), el("span", { class: "muted" }, "Searching\\u2026"));
  const r = await api("GET", "/api/honcho/search?q=" + encodeURIComponent($("search-q").value));
  fill($("search-result"), r.error ? failure(r) : markdown(String(r.result)));
});
$("refresh-health").addEventListener("click", loadHealth);
loadProviders(); loadHealth(); loadEntries();
`;

/** `nonce` is the one the Content-Security-Policy allows the inline style and script with. */
export function dashboardPage(nonce: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Hermes memory</title>
<style nonce="${nonce}">${STYLE}</style></head>
<body>
<header><h1>Hermes memory</h1><span class="home" id="home"></span></header>
<main>
<section id="providers-section"><h2>Providers</h2><div id="providers"></div><div id="provider-result"></div></section>
<section id="config-section" hidden><h2>Configuration</h2><div id="config"></div></section>
<section id="health-section"><h2>Status and doctor <button id="refresh-health">Re-run</button></h2><div id="health"></div></section>
<section id="entries-section"><h2>Built-in memory</h2>
<form id="add-form"><div class="row"><select id="new-target"><option value="memory">MEMORY.md</option><option value="user">USER.md</option></select>
<textarea id="new-entry" class="grow" placeholder="A new entry" required></textarea><button class="primary" type="submit">Add</button></div></form>
<div id="entry-result"></div><div id="entries"></div><div id="builtin-settings"></div><div id="builtin-result"></div></section>
<section id="honcho-section" hidden><h2>Honcho</h2>
<h3>Your peer card</h3><div id="peer-card"></div>
<h3>The AI's representation</h3><div id="ai-rep"></div>
<form id="search-form"><div class="row"><input id="search-q" class="grow" placeholder="Search your messages" required><button type="submit">Search</button></div></form>
<div id="search-result"></div></section>
</main>
<script nonce="${nonce}">${SCRIPT}</script>
</body></html>
`;
}
