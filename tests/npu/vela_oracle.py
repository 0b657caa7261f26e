"""Parse what Vela prints: the register command stream listing and the cycle summary."""
from __future__ import annotations

import re

LINE = re.compile(r"^0x([0-9a-f]{6}): ([0-9a-f]{8}| {8}) ([0-9a-f]{4}) ([0-9a-f]{4}) - (\w+)\s+(\d+)(?:, (.*))?$")
TOTAL = re.compile(r"^Total cycles\s+(\d+) cycles/batch", re.M)


def parse_listing(text: str) -> list[dict]:
    """Each command line of ``--verbose-register-command-stream`` as offset/name/param/payload/fields."""
    out = []
    for line in text.splitlines():
        m = LINE.match(line.rstrip())
        if not m:
            continue
        offset, payload, param, code, name, param_dec, fields = m.groups()
        assert int(param, 16) == int(param_dec), line
        shown = {}
        for item in (fields or "").split(", "):
            if item:
                k, v = item.split(" = ")
                shown[k] = v
        out.append({"offset": int(offset, 16), "command": name, "param": int(param, 16),
                    "code": int(code, 16), "payload": None if payload.strip() == "" else int(payload, 16),
                    "fields": shown})
    return out


def total_cycles(text: str) -> int:
    m = TOTAL.search(text)
    if not m:
        raise ValueError("no 'Total cycles' line in Vela output (need --verbose-cycle-estimate)")
    return int(m.group(1))
