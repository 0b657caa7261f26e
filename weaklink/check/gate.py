"""`check --fail-on VERDICTS` / `--allow-unknown`: which verdicts fail the check (exit 1).

By default every verdict but `ok` does: `hang`, `error`, `wrong` and `unknown` (a CI gate must
not pass on an image it cannot judge). A build gate that accepts `unknown` (the CMake package's
ALLOW_UNKNOWN) says so with `--allow-unknown`, and the report still prints the verdict and why.
"""
from __future__ import annotations

from dataclasses import dataclass

from weaklink.errors import UsageError

VERDICTS = ("hang", "error", "wrong", "unknown")     # every verdict but ok


@dataclass(frozen=True)
class Gate:
    fail_on: tuple[str, ...]
    stated: bool                 # given on the command line: the report prints the gate

    def failed(self, verdict: str) -> bool:
        return verdict in self.fail_on

    def line(self, verdict: str) -> str:
        how = f"--fail-on {','.join(self.fail_on)}"
        if self.failed(verdict):
            return f"gate: failed: verdict {verdict} ({how})"
        if verdict == "ok":
            return f"gate: passed ({how})"
        return f"gate: passed: verdict {verdict} is allowed ({how})"


def gate(fail_on: list[str], allow_unknown: bool) -> Gate:
    """The verdicts that fail the check, from --fail-on (comma lists, repeatable) and
    --allow-unknown; UsageError when a name is no verdict or the two contradict."""
    named = tuple(dict.fromkeys(v.strip() for item in fail_on for v in item.split(",") if v.strip()))
    bad = [v for v in named if v not in VERDICTS]
    if bad:
        raise UsageError(f"--fail-on: {', '.join(bad)} is no failing verdict "
                         f"(verdicts: {', '.join(VERDICTS)})")
    if fail_on and not named:
        raise UsageError(f"--fail-on: expected a comma list of verdicts ({', '.join(VERDICTS)})")
    if allow_unknown and "unknown" in named:
        raise UsageError("--allow-unknown contradicts --fail-on unknown")
    chosen = named or VERDICTS
    if allow_unknown:
        chosen = tuple(v for v in chosen if v != "unknown")
    return Gate(chosen, bool(fail_on) or allow_unknown)
