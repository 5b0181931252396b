// Timing of the context-safety paths:
//   deno task bench   (or: deno bench --allow-read --allow-write --allow-env bench/context_safety_bench.ts)
// Peak memory is measured separately, one fresh process per scenario:
//   deno run --allow-read --allow-write --allow-env --allow-run bench/context_safety_memory.ts
import { ArchiveMemoryProvider } from "../plugins/memory/archive/mod.ts";
import {
  applyRecallSpill,
  recallSpillPolicyFromConfig,
} from "../src/context/prefetch_spill.ts";
import { checkpointBeforeCompression } from "../src/context/compression_gate.ts";
import { setLogger } from "../src/core/log.ts";
import { syntheticTranscript } from "../tests/fixtures/archive_transcript.ts";

// The ceiling bench warns on every run; keep the table readable.
setLogger({ log: () => {} });

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
  name: "archive: first checkpoint of a 10,000-message transcript",
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
  name: "gate + archive: armed checkpointBeforeCompression, 10,000 messages",
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
  name: "archive: retry checkpoint, nothing new (same process, cached index)",
  group: "checkpoint",
  async fn() {
    await retryProvider.onPreCompress(transcript, { requireCheckpoint: true });
  },
});

Deno.bench({
  name: "archive: retry checkpoint, nothing new (fresh process, index rebuilt)",
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
  name: "spill: 5 MB recall to a private file",
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
  name: "ceiling: 5 MB recall cut at the runaway ceiling (spilling off)",
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
