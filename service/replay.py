"""``python -m service.replay FILE|-``: apply a replay scenario and print the resulting state.

Exit 0 with the state, 1 with ``{"error": {"index": I, "message": ...}}`` when
a rule refuses action I, 2 with a one-line reason on stderr when the input is
not a valid scenario.
"""

from __future__ import annotations

import json
import sys

from service.rules import ScenarioError, run, summary


def main(argv: list[str] | None = None) -> int:
    """Run the command; returns the exit status."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m service.replay FILE|-", file=sys.stderr)
        return 2
    try:
        text = sys.stdin.read() if args[0] == "-" else _read(args[0])
    except (OSError, UnicodeDecodeError) as exc:
        print(f"cannot read {args[0]}: {exc}", file=sys.stderr)
        return 2
    try:
        scenario = json.loads(text)
    except (ValueError, RecursionError) as exc:  # not JSON, or a number too long to read
        print(f"bad JSON: {exc}", file=sys.stderr)
        return 2
    try:
        outcome = run(scenario)
    except ScenarioError as exc:
        print(f"not a valid scenario: {exc}", file=sys.stderr)
        return 2
    if outcome.error is not None:
        print(
            json.dumps({"error": {"index": outcome.error_index, "message": outcome.error.message}})
        )
        return 1
    print(json.dumps(summary(outcome.state)))
    return 0


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as handle:
        return handle.read()


if __name__ == "__main__":
    sys.exit(main())
