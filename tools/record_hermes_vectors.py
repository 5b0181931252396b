"""Rebuild tests/fixtures/hermes_vectors/*.json from the shipped Hermes Agent.

Run with the python of a scratch venv that has the package installed, outside
this repository (its code is never committed; the vectors are data):

    python3 -m venv /tmp/hermes-venv
    /tmp/hermes-venv/bin/pip install hermes-agent==0.19.0
    /tmp/hermes-venv/bin/python tools/record_hermes_vectors.py

The harness (tests/fixtures/hermes_vectors/record/) is copied to a temporary
directory and run there with HERMES_VECTORS_PACKAGE=1, so it imports the
installed package instead of fetched files and stubs; each fixture's header
names the package version and the sha256 of every file recorded from. The
write-back vectors run the project's writers (./tools/deno) and re-read what
they wrote with the package's readers. `--only NAME` records one fixture.
"""
from __future__ import annotations

import argparse
import importlib.metadata
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures" / "hermes_vectors"
GENERATORS = {
    "memory_tool": "gen_memory_tool.py",
    "threat_patterns": "gen_threat_patterns.py",
    "honcho_config": "gen_honcho_config.py",
    "session_names": "gen_session_names.py",
    "dotenv": "gen_dotenv.py",
    "yaml": "gen_yaml.py",
    "fence": "gen_fence.py",
    "selfhosted_home": "gen_selfhosted_home.py",
    "config_yaml": "gen_config_yaml.py",
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=[*GENERATORS, "writeback"], action="append")
    args = parser.parse_args()
    try:
        version = importlib.metadata.version("hermes-agent")
    except importlib.metadata.PackageNotFoundError:
        print("hermes-agent is not installed for this python; run it with the scratch venv's python "
              "(see the module docstring)", file=sys.stderr)
        return 2
    if pathlib.Path(sys.prefix).resolve().is_relative_to(REPO):
        print("the venv must live outside the repository", file=sys.stderr)
        return 2
    env = dict(os.environ, HERMES_VECTORS_PACKAGE="1", PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1",
               PYTHONIOENCODING="utf-8", LC_ALL="C.UTF-8", TZ="UTC")
    wanted = args.only or [*GENERATORS, "writeback"]
    with tempfile.TemporaryDirectory(prefix="hermes_vectors_") as scratch:
        record = pathlib.Path(scratch) / "record"
        shutil.copytree(FIXTURES / "record", record)
        for name in wanted:
            if name == "writeback":
                continue
            print(f"recording {name} from hermes-agent {version}", flush=True)
            # The memory tool logs a warning per blocked entry on stderr.
            subprocess.run([sys.executable, GENERATORS[name]], cwd=record, env=env, check=True,
                           stderr=subprocess.DEVNULL if name == "memory_tool" else None)
            shutil.copyfile(pathlib.Path(scratch) / "out" / f"{name}.json", FIXTURES / f"{name}.json")
        if "writeback" in wanted:
            writes = pathlib.Path(scratch) / "writes.json"
            with writes.open("wb") as out:
                subprocess.run([str(REPO / "tools" / "deno"), "run", "-A", "--config", str(REPO / "deno.json"),
                                str(FIXTURES / "record" / "gen_writeback.ts")], cwd=REPO, stdout=out, check=True)
            with (FIXTURES / "writeback.json").open("wb") as out:
                subprocess.run([sys.executable, str(record / "reread_writeback.py"), str(record), str(writes)],
                               env=env, stdout=out, check=True)
    print(f"vectors in {FIXTURES.relative_to(REPO)} recorded from hermes-agent {version}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
