# The manager row's peer: the shipped Hermes Agent 0.19.0 MemoryManager
# (imported from the venv tools/hermes_venv.sh sets up, never copied here)
# running the same workload as bench/_manager_workload.ts: a built-in store
# (MemoryStore, its frozen snapshot as the "builtin" provider's block) plus
# one trivial external provider.
#
#   <venv>/bin/python bench/_hermes_peer.py <templates.json>
#
# Reads "<first turn> <count>" lines on stdin, runs that many turns
# (on_turn_start, prefetch_all, build_system_prompt, sync_all,
# queue_prefetch_all) and answers with the nanoseconds they took; "flush"
# waits for the background worker. HERMES_HOME must name a scratch home.
import json
import sys
import time

from agent.memory_manager import MemoryManager
from agent.memory_provider import MemoryProvider
from tools.memory_tool import MemoryStore

templates = json.load(open(sys.argv[1]))
USERS, REPLIES = templates["users"], templates["replies"]


class Builtin(MemoryProvider):
    def __init__(self):
        self.store = MemoryStore()
        self.store.load_from_disk()

    @property
    def name(self):
        return "builtin"

    def is_available(self):
        return True

    def initialize(self, session_id, **kwargs):
        pass

    def get_tool_schemas(self):
        return []

    def system_prompt_block(self):
        parts = [self.store.format_for_system_prompt(t) for t in ("memory", "user")]
        return "\n\n".join(p for p in parts if p)


class Trivial(MemoryProvider):
    def __init__(self):
        self.turns, self.last_query, self.facts = 0, "", []

    @property
    def name(self):
        return "inproc"

    def is_available(self):
        return True

    def initialize(self, session_id, **kwargs):
        pass

    def get_tool_schemas(self):
        return []

    def on_turn_start(self, turn_number, message, **kwargs):
        self.turns = turn_number

    def prefetch(self, query, *, session_id=""):
        return "User prefers helix with tabs." if query else ""

    def queue_prefetch(self, query, *, session_id=""):
        self.last_query = query

    def sync_turn(self, user_content, assistant_content, *, session_id="", **kw):
        self.facts.append(user_content)
        if len(self.facts) > 256:
            self.facts.clear()


def varied(turn):
    i = turn % len(USERS)
    n = str(turn)
    return (USERS[i].replace("{n}", n),
            REPLIES[(i + (turn >> 3)) % len(REPLIES)].replace("{n}", n))


manager = MemoryManager()
manager.add_provider(Builtin())
manager.add_provider(Trivial())
manager.initialize_all("bench-session", platform="cli")
print("ready", flush=True)
for line in sys.stdin:
    if line.strip() == "flush":
        manager.flush_pending()
        print("0", flush=True)
        continue
    first, count = (int(x) for x in line.split())
    texts = [varied(t) for t in range(first, first + count)]
    start = time.perf_counter_ns()
    for k, (user, reply) in enumerate(texts):
        manager.on_turn_start(first + k, user)
        manager.prefetch_all(user, session_id="bench-session")
        manager.build_system_prompt()
        manager.sync_all(user, reply, session_id="bench-session")
        manager.queue_prefetch_all(user, session_id="bench-session")
    print(time.perf_counter_ns() - start, flush=True)
