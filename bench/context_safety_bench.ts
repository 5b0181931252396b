// Timing of the context-safety paths:
//   deno task bench   (or: deno bench --allow-read --allow-write --allow-env bench/context_safety_bench.ts)
// Peak memory (100,000 messages, against the JSON.stringify + fsync floor) is
// measured in fresh processes by bench/checkpoint_memory_bench.ts.
import { ArchiveMemoryProvider } from "@hermes/memory/archive";
import {
  applyRecallSpill,
  recallSpillPolicyFromConfig,
} from "../src/context/prefetch_spill.ts";
import { checkpointBeforeCompression } from "../src/context/compression_gate.ts";
import { syntheticTranscript } from "../tests/fixtures/archive_transcript.ts";
import { keepLogs } from "./_harness.ts";

// The ceiling bench warns on every run: the lines are kept (and printed if
// a bench fails), not shown, so the table stays readable.
keepLogs("context_safety_bench");

const MESSAGES = 10_000;
const transcript = syntheticTranscript(MESSAGES);
const recall = "memory entry: the user prefers tea over coffee.\n".repeat(
  Math.ceil(5_000_000 / 48),
);
const home = await Deno.makeTempDir({ prefix: "hermes_bench_" });
let session = 0;

/** A minimal manager wrapping one v2 provider, as the gate sees it. */
function gateManager(provider: ArchiveMemoryProvider) {
  return {
    providers: [provider],
    supportsPreCompressCheckpoint: () => true,
    onPreCompress: (
      _raw: unknown[],
      options?: {
        evidenceMessages?: Parameters<typeof provider.onPreCompress>[0];
      },
    ) =>
      provider.onPreCompress(options?.evidenceMessages ?? [], {
        requireCheckpoint: true,
      }),
  };
}

Deno.bench({
  name: "archive.first_10k: first checkpoint of a 10,000-message transcript",
  group: "checkpoint",
  baseline: true,
  async fn(b) {
    const provider = new ArchiveMemoryProvider({
      hermesHome: home,
      sessionId: `first-${session++}`,
    });
    b.start();
    await provider.onPreCompress(transcript, { requireCheckpoint: true });
    b.end();
  },
});

Deno.bench({
  name:
    "archive.gate_10k: gate + archive, armed checkpointBeforeCompression, 10,000 messages",
  group: "checkpoint",
  async fn(b) {
    const provider = new ArchiveMemoryProvider({
      hermesHome: home,
      sessionId: `gate-${session++}`,
    });
    const manager = gateManager(provider);
    b.start();
    await checkpointBeforeCompression(manager, transcript, {
      config: { compression: { checkpoint_required: true } },
    });
    b.end();
  },
});

const retryProvider = new ArchiveMemoryProvider({
  hermesHome: home,
  sessionId: "retry",
});
await retryProvider.onPreCompress(transcript, {});

Deno.bench({
  name:
    "archive.retry_cached_10k: retry checkpoint, nothing new (same process, cached index)",
  group: "checkpoint",
  async fn() {
    await retryProvider.onPreCompress(transcript, { requireCheckpoint: true });
  },
});

Deno.bench({
  name:
    "archive.retry_rebuilt_10k: retry checkpoint, nothing new (fresh provider, index rebuilt)",
  group: "checkpoint",
  async fn() {
    const fresh = new ArchiveMemoryProvider({
      hermesHome: home,
      sessionId: "retry",
    });
    await fresh.onPreCompress(transcript, { requireCheckpoint: true });
  },
});

const spillPolicy = recallSpillPolicyFromConfig({
  memory: { prefetch_spill_enabled: true },
}, { hermesHome: home });
const ceilingPolicy = recallSpillPolicyFromConfig({}, { hermesHome: home });

Deno.bench({
  name: "spill.5mb_file: 5 MB recall to a private file",
  group: "spill",
  baseline: true,
  async fn() {
    await applyRecallSpill(spillPolicy, recall, {
      source: "bench memory prefetch",
      sessionId: "bench",
    });
  },
});

Deno.bench({
  name:
    "spill.5mb_ceiling: 5 MB recall cut at the runaway ceiling (spilling off)",
  group: "spill",
  async fn() {
    await applyRecallSpill(ceilingPolicy, recall, {
      source: "bench memory prefetch",
    });
  },
});

globalThis.addEventListener("unload", () => {
  try {
    Deno.removeSync(home, { recursive: true });
  } catch {
    // Best effort.
  }
});
