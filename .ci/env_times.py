"""Print each tox environment's time from tox's --result-json, longest first, and the wall time.

Used by .ci/run after the test command, so every CI log ends with where the minutes went.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(result_json: str, wall_seconds: str) -> int:
    path = Path(result_json)
    if not path.exists():
        print(f"env times: {path} was not written (tox did not get to run)")
        return 1
    environments = json.loads(path.read_text(encoding="utf-8")).get("testenvs", {})
    rows = sorted(
        (
            (env.get("result", {}).get("duration", 0.0), name, env.get("result", {}))
            for name, env in environments.items()
            if isinstance(env, dict) and "duration" in env.get("result", {})  # ran
        ),
        reverse=True,
    )
    print("\n| env | seconds | result |\n|---|---:|---|")
    for duration, name, result in rows:
        verdict = "ok" if result.get("success") else f"exit {result.get('exit_code')}"
        print(f"| {name} | {duration:.0f} | {verdict} |")
    print(f"| (wall, whole command) | {int(wall_seconds)} | |")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
