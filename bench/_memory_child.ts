// One fresh process of bench/checkpoint_memory_bench.ts:
//
//   deno run --v8-flags=--expose-gc --allow-read=<dir> --allow-write=<dir> \
//     bench/_memory_child.ts <scenario> <messages> <dir>
//
// Builds the input (a transcript of <messages> messages of ~1,000 characters
// with flat strings, as one parsed from JSON has), then measures one
// operation and prints one JSON line:
//
// - hwmBefore / hwmAfter: the kernel's peak-RSS high-water mark (getrusage
//   maxrss, read with node:process resourceUsage(); the value VmHWM in
//   /proc/self/status has, which Deno reads only with --allow-all) before
//   and after the operation. It is monotone and cannot be reset without
//   --allow-all, so when hwmAfter > hwmBefore the operation set the
//   process's peak and hwmAfter is exact; otherwise the peak during the
//   operation is at most hwmBefore and rssSampled is the best figure;
// - rssBefore: the process's RSS with the input built and garbage collected
//   (run with --v8-flags=--expose-gc): what the operation starts from;
// - rssSampled / heapPeak: RSS and heapUsed sampled every 1 ms while the
//   operation runs (lower bounds: the timer fires between awaits);
// - jsonBytes: the size of `JSON.stringify(transcript)` in UTF-8, computed
//   one message at a time (the process never holds that string unless the
//   scenario is the floor); for `spill`, the recall's.
//
// It prints `#start` and `#end` around the operation, so the parent can time
// it as deno bench's measured part.
//
// Scenarios: `checkpoint` (the archive provider's first checkpoint, as the
// compression gate calls it), `retry` (a second checkpoint of the same
// transcript from a fresh provider: the index is rebuilt from disk), `floor`
// (JSON.stringify of the transcript, written and fsynced), `input` (nothing:
// what holding the input costs), `spill` (a 5 MB recall spilled to a file).
import process from "node:process";
import { ArchiveMemoryProvider } from "@hermes/memory/archive";
import type { ChatMessage } from "@hermes/memory";
import {
  applyRecallSpill,
  recallSpillPolicyFromConfig,
} from "../src/context/prefetch_spill.ts";
import { syntheticTranscript } from "../tests/fixtures/archive_transcript.ts";

const [scenario = "checkpoint", countArg = "100000", dir = ""] = Deno.args;
if (!dir) {
  throw new Error("usage: _memory_child.ts <scenario> <messages> <dir>");
}
const count = Number(countArg);

/** The process's peak RSS so far (getrusage maxrss = VmHWM), bytes. */
function peakRss(): number {
  return process.resourceUsage().maxRSS * 1024;
}

/**
 * The transcript of tests/fixtures/archive_transcript.ts, built in slices
 * so that only one copy is ever alive, with flat (not rope) strings, and
 * its JSON size.
 */
function buildTranscript(): { messages: ChatMessage[]; jsonBytes: number } {
  const messages: ChatMessage[] = [];
  let jsonBytes = 2; // [ ]
  const add = (message: ChatMessage): void => {
    const json = JSON.stringify(message);
    jsonBytes += utf8Length(json) + (messages.length > 0 ? 1 : 0);
    messages.push(JSON.parse(json));
  };
  // syntheticTranscript(n) is message-for-message a prefix of (n + k):
  // build slices of SLICE messages and keep only each slice's new part.
  const SLICE = 1_000;
  add({ role: "system", content: "You are Hermes." });
  for (let done = 0; done < count; done += SLICE) {
    const upto = Math.min(count, done + SLICE);
    const slice = syntheticTranscript(upto - done);
    for (const message of slice.slice(1)) {
      add(renumber(message, done));
    }
  }
  return { messages, jsonBytes };
}

/** UTF-8 length of `text`, without allocating its bytes. */
function utf8Length(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c < 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/** Message `i` of a slice starting at `offset`, as message `offset + i`. */
function renumber(message: ChatMessage, offset: number): ChatMessage {
  if (offset === 0) return message;
  const content = String(message.content);
  const match = content.match(/^(user|assistant) message (\d+): /);
  if (match) {
    const n = Number(match[2]) + offset;
    return {
      ...message,
      content: `${match[1]} message ${n}: ${content.slice(match[0].length)}`,
    };
  }
  if (message.role === "tool" && typeof message.tool_call_id === "string") {
    return {
      ...message,
      tool_call_id: `t${Number(message.tool_call_id.slice(1)) + offset}`,
    };
  }
  return message;
}

const { messages, jsonBytes } = buildTranscript();
/** The JSON size of what the operation writes (the recall, for `spill`). */
let payloadBytes = jsonBytes;
// Drop the garbage of building (when run with --v8-flags=--expose-gc), so
// rssBefore is what holding the transcript costs.
(globalThis as { gc?: () => void }).gc?.();
const hermesHome = `${dir}/home`;
await Deno.mkdir(hermesHome, { recursive: true });

let op: () => Promise<void>;
if (scenario === "checkpoint") {
  const provider = new ArchiveMemoryProvider({ hermesHome, sessionId: "m" });
  op = async () => {
    await provider.onPreCompress(messages, { requireCheckpoint: true });
  };
} else if (scenario === "retry") {
  await new ArchiveMemoryProvider({ hermesHome, sessionId: "m" })
    .onPreCompress(messages, { requireCheckpoint: true });
  const provider = new ArchiveMemoryProvider({ hermesHome, sessionId: "m" });
  op = async () => {
    await provider.onPreCompress(messages, { requireCheckpoint: true });
  };
} else if (scenario === "floor") {
  op = async () => {
    const bytes = new TextEncoder().encode(JSON.stringify(messages));
    const file = await Deno.open(`${dir}/floor.json`, {
      write: true,
      create: true,
      truncate: true,
    });
    try {
      let offset = 0;
      while (offset < bytes.length) {
        offset += await file.write(bytes.subarray(offset));
      }
      await file.syncData();
    } finally {
      file.close();
    }
  };
} else if (scenario === "input") {
  op = () => Promise.resolve();
} else if (scenario === "spill") {
  const recall = "memory entry: the user prefers tea over coffee.\n".repeat(
    Math.ceil(5_000_000 / 48),
  );
  payloadBytes = utf8Length(JSON.stringify(recall));
  const policy = recallSpillPolicyFromConfig({
    memory: { prefetch_spill_enabled: true },
  }, { hermesHome });
  op = async () => {
    await applyRecallSpill(policy, recall, { source: "bench memory prefetch" });
  };
} else {
  throw new Error(`unknown scenario ${scenario}`);
}

const before = Deno.memoryUsage();
const rssBefore = before.rss;
const hwmBefore = peakRss();
const heapBefore = before.heapUsed;
let heapPeak = heapBefore;
let rssSampled = rssBefore;
const timer = setInterval(() => {
  const now = Deno.memoryUsage();
  heapPeak = Math.max(heapPeak, now.heapUsed);
  rssSampled = Math.max(rssSampled, now.rss);
}, 1);
// The parent times the operation between these two lines too.
console.log("#start");
const started = performance.now();
await op();
const ms = performance.now() - started;
console.log("#end");
clearInterval(timer);
const after = Deno.memoryUsage();
heapPeak = Math.max(heapPeak, after.heapUsed);
rssSampled = Math.max(rssSampled, after.rss);
const hwmAfter = peakRss();
console.log(JSON.stringify({
  scenario,
  messages: count,
  jsonBytes: payloadBytes,
  ms,
  rssBefore,
  hwmBefore,
  hwmAfter,
  rssSampled,
  heapBefore,
  heapPeak,
}));
