// Replays tests/fixtures/hermes_vectors/session_names.json (Hermes Agent's
// HonchoClientConfig.resolve_session_name on 185 calls: strategies, titles,
// gateway keys, long names, prefixes, real git repositories) against
// resolveSessionName(): every name must be Hermes', byte for byte, unless
// listed in deviations.json.
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  deviationsFor,
  loadFixture,
  placeholders,
  runHonchoRunner,
  Tally,
} from "./_vectors.ts";

interface Case {
  id: string;
  calls: {
    kwargs: Record<string, unknown>;
    result?: string | null;
    exception?: { type: string; message: string };
  }[] | null;
  config?: unknown;
}

Deno.test("Honcho session names: every recorded call names the session Hermes names", async () => {
  const fixture = await loadFixture<Case>("session_names.json");
  const deviations = await deviationsFor("session_names");
  const { root, results } = await runHonchoRunner(
    "sessions",
    "session_names.json",
  );
  const tally = new Tally("session_names");
  try {
    for (const [i, c] of fixture.cases.entries()) {
      const ours = results[i] as {
        calls: { result?: string | null; error?: string }[];
      };
      const ph = placeholders({ [join(root, String(i))]: "<ROOT>" });
      if (c.calls === null) {
        // The recorded version has no such setting (0.19.0 raises on
        // session_ai_peer_prefix): the whole case is a listed deviation.
        if (deviations.has(c.id)) tally.deviating++;
        else {tally.failures.push(
            `${c.id}: Python raised ${JSON.stringify(c.config)}`,
          );}
        continue;
      }
      for (const [j, call] of c.calls.entries()) {
        const vid = `${c.id}#${j}`;
        const got = ours.calls[j]!;
        const mine = got.result === undefined || got.result === null
          ? got.result
          : ph(got.result);
        const deviation = deviations.get(vid);
        const identical = call.exception === undefined &&
          got.error === undefined && mine === (call.result ?? null);
        if (deviation) {
          if (identical) {
            tally.failures.push(
              `${vid}: listed as ${deviation.id} but matches`,
            );
          } else if (got.error !== undefined) {
            tally.failures.push(
              `${vid} [${deviation.id}]: we threw ${got.error}`,
            );
          } else tally.deviating++;
        } else if (identical) tally.matched++;
        else {
          tally.failures.push(
            `${vid} ${JSON.stringify(call.kwargs)}: ours ${
              JSON.stringify(mine ?? got.error)
            } python ${JSON.stringify(call.result ?? call.exception)}`,
          );
        }
      }
    }
  } finally {
    await Deno.remove(root, { recursive: true });
  }
  console.log(tally.report());
  assert.equal(
    tally.failures.length,
    0,
    `${tally.failures.length} calls differ:\n${tally.failures.join("\n")}`,
  );
});
