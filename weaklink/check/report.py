"""The check report: one object, rendered as a table or as JSON (docs/json-contract.md).

The JSON holds one demo row's fields for the image (`fast_scratch`, `npu`, `cycles`,
`findings`, …), plus `diagnosis`, `bases` and, under `emulation`, the emulator's full result
(its `cycles` object, PMU counters, traffic and per-operation table).
"""
from __future__ import annotations

from dataclasses import dataclass

from npu.records import Record, to_json
from weaklink.bind.table import BaseAddressTable, BoundBase
from weaklink.bind.tflm import ARENA_OPTION
from weaklink.check.static import defined_by
from weaklink.rules import SEVERITIES, Finding

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class FastScratch(Record):
    binding: str | None      # global | weak | None (no definition)
    value: int               # the base the backend passes
    size: int
    region: str | None       # the memory the base points into


# How bad an operator's verdict is, for "the verdict is the worst one": an error returns -1 to
# the caller, a hang never returns.
# `wrong` (--functional: completes with other outputs) sits between ok and an error.
# `unknown` (the image does not say what the verdict depends on) sits between ok and every
# definite failure: one operator that surely fails outweighs another that cannot be told.
VERDICT_RANK = {"ok": 0, "unknown": 0.25, "wrong": 0.5, "error": 1, "hang": 2}
# Exit status of `check`: 0 ok; 1 the check did not pass: a definite failure (hang, error,
# wrong) or cannot tell (`unknown`: a CI gate must not pass on it silently; the verdict and its
# reason tell the two apart); 2 stays bad input. The project's exit codes are 0/1/2 only.
EXIT_OK, EXIT_FAILED = 0, 1


def _functional_verdict(run, functional, cannot_tell: str | None = None) -> str:
    if cannot_tell:
        return "unknown"
    if run.status == "ok" and functional is not None and not functional.outputs_equal:
        return "wrong"                   # completes, but computes other outputs (functional run)
    return run.status


@dataclass(frozen=True)
class OperatorCheck(Record):
    """One base-address table (one ethos-u operator, or the blob) and its emulated run."""
    table: BaseAddressTable
    needs: dict[int, int]
    findings: tuple[Finding, ...]
    run: object                              # npu.api.RunResult
    functional: object | None = None         # weaklink.check.functional.FunctionalCheck (--functional)
    cannot_tell: str | None = None           # why the verdict is `unknown` (what the image does not say)

    JSON = ("model_symbol=table.model_symbol", "model_address=table.model_address",
            "model_format=table.model_format", "operator=table.operator",
            "stream_address=table.stream_address", "command_stream=run.stream", "bases=base_rows",
            "region_needs", "verdict",
            "cycles", "diagnosis=run.diagnosis", "findings=rule_ids", "cannot_tell")

    @property
    def verdict(self) -> str:
        return _functional_verdict(self.run, self.functional, self.cannot_tell)

    @property
    def cycles(self) -> int | None:
        return int(self.run.cycles["total"]) if self.verdict in ("ok", "wrong") else None

    @property
    def base_rows(self) -> list[dict]:
        return _base_rows(self.table, self.run)

    @property
    def region_needs(self) -> dict[str, int]:
        return _region_needs(self.needs)

    @property
    def rule_ids(self) -> list[str]:
        return _rule_ids(self.findings)


def worst(ops) -> OperatorCheck:
    return max(ops, key=lambda o: VERDICT_RANK.get(o.verdict, 3))


@dataclass(frozen=True)
class CheckReport(Record):
    file: str
    accelerator: str
    system_config: str
    memory_mode: str
    soc: str
    table: BaseAddressTable
    fast_scratch: FastScratch | None
    needs: dict[int, int]
    findings: tuple[Finding, ...]
    run: object                              # npu.api.RunResult of the worst operator
    operators: tuple[OperatorCheck, ...]     # one per base-address table (never empty)
    functional: object | None = None         # the worst operator's FunctionalCheck (--functional)
    # What the verdict rests on that the image does not show (each one sentence, with why it
    # is assumed); printed in the table and listed under "assumptions" in the JSON.
    assumptions: tuple[str, ...] = ()
    # Why the verdict is `unknown`: what the verdict depends on that the image does not say.
    cannot_tell: str | None = None
    soc_choice: object | None = None         # weaklink.check.board.SocChoice: which SoC, and why
    hooks: object | None = None              # weaklink.check.hooks.DriverHooks

    schema_version = SCHEMA_VERSION
    backend = runner = target = model_agrees_with_ld = None     # demo row fields, unknown here
    link = "ok"                                                 # the image exists
    JSON = ("schema_version", "file", "backend", "runner", "target", "link",
            "model_agrees_with_ld", "fast_scratch", "npu=verdict", "cycles", "findings=rule_ids",
            "diagnosis", "bases=base_rows", "accelerator", "system_config", "memory_mode", "soc",
            "model=model_facts", "finding_details=findings", "emulation=run",
            "binding=table.binding", "fast_memory=table.fast_memory", "arena=table.arena",
            "operators", "assumptions", "cannot_tell", "npu_base=soc_choice.npu_base",
            "soc_choice", "driver_hooks=hooks", "functional?", "model_missing=table.missing?")

    @property
    def verdict(self) -> str:
        return _functional_verdict(self.run, self.functional, self.cannot_tell)

    @property
    def cycles(self) -> int | None:
        """One inference: the sum over every operator's stream (none when it cannot be told)."""
        if self.run.status != "ok" or self.verdict == "unknown":
            return None
        return sum(int(op.run.cycles["total"]) for op in self.operators)

    @property
    def exit_code(self) -> int:
        return EXIT_OK if self.verdict == "ok" else EXIT_FAILED

    @property
    def diagnosis(self) -> str | None:
        """From the NPU fault back to the symbol that set the faulting region's base."""
        if self.verdict == "unknown":
            return f"cannot tell: {self.cannot_tell}"
        if self.verdict == "wrong":
            return self._wrong_diagnosis()
        if self.verdict == "ok" or not self.run.diagnosis:
            return None
        region = self.run.fault_region
        base = self.table.base(region) if region is not None else None
        head = f"{_provenance(base)} → " if base is not None else ""
        if base is None and any(f.rule == "fast-memory-too-small" for f in self.findings):
            head = f"{self.table.fast_memory.note} → driver check \"Fast memory area too small\" → "
        return f"{head}NPU {self.run.diagnosis} → {self.verdict}"

    def _wrong_diagnosis(self) -> str:
        first = self.functional.corruptions[0] if self.functional.corruptions else None
        if first is None:
            return "the outputs differ from a run with every region placed apart → wrong"
        base = self.table.base(first.write.region)
        head = f"{_provenance(base)} → " if base is not None else ""
        return f"{head}NPU {first.message} → outputs differ from a run with every region placed apart → wrong"

    def _context(self) -> list[str]:
        """The TFLM facts a reader needs before the table: binding, arena, fast memory."""
        t, out = self.table, []
        if t.missing:
            out.append(f"binding {t.binding}: no model in the image" + (
                f", read from {t.model_address:#x}" if t.model_address else ""))
        elif t.model_format == "tflite":
            out.append(f"binding {t.binding}: model " + (f"`{t.model_symbol}` " if t.model_symbol else "")
                       + f"at {t.model_address:#x}")
        if t.model_format == "tflite":
            a = t.arena
            out.append(f"tensor arena: unknown: {a.source} (give {ARENA_OPTION})" if a is None or a.unknown
                       else f"tensor arena: `{a.name or '?'}` [{a.address:#x}, {a.end:#x}), "
                            f"{a.size} bytes ({a.source})")
            placed = [b for b in t.bases if b.arena is not None]
            planned = sum(b.offset is not None for b in placed)
            if placed:
                out.append("arena tensors: " + (
                    "at their offsets in Vela's offline memory plan (OfflineMemoryAllocation), "
                    "which TFLM's planner honours" if planned == len(placed) else
                    "offsets decided by TFLM's planner at run time (no offline plan for them)"
                    if not planned else f"{planned} of {len(placed)} at their offsets in Vela's "
                    "offline memory plan, the others decided by TFLM's planner at run time"))
        for b in t.bases:
            if b.evidence is not None:
                out.append(f"region {b.region} ({b.name}): {_evidence_line(b.evidence)}")
        f = t.fast_memory
        if f is not None and (f.given or f.unknown or t.model_format == "tflite"):
            out.append(f"fast memory: {f.note or f.source}" if f.address is not None
                       else f"fast memory: cannot tell ({f.note})")
        return out + ([""] if out else [])

    def _board_lines(self) -> list[str]:
        """Which SoC and why, the NPU base the firmware uses, the driver hooks it overrides."""
        c, out = self.soc_choice, []
        if c is None:
            return out
        out.append(f"SoC: {c.soc.name}, " + (f"cannot tell: {c.unknown}" if c.unknown else c.why))
        b = c.npu_base
        out.append(f"NPU base: {b.address:#010x} ({b.source})" if b.address is not None
                   else f"NPU base: unknown ({b.source})")
        h = self.hooks
        if h is not None and (h.remap or h.config):
            names = [n for n, on in (("ethosu_address_remap", h.remap), ("ethosu_config_select", h.config)) if on]
            out.append(f"driver hooks: {' and '.join(names)} overridden by strong definitions")
        return out

    @property
    def base_rows(self) -> list[dict]:
        return _base_rows(self.table, self.run)

    @property
    def rule_ids(self) -> list[str]:
        return _rule_ids(self.findings)

    @property
    def model_facts(self) -> dict:
        """The model's address, the regions its stream uses, how far it reaches into each."""
        return {"address": self.table.model_address, "regions_used": sorted(self.needs),
                "region_needs": _region_needs(self.needs)}

    def to_table(self) -> str:
        seconds = sum(op.run.inference_time_s for op in self.operators)
        lines = [f"{self.file}: NPU {self.verdict.upper()}"
                 + (f" in {self.cycles} cycles ({seconds * 1e3:.3f} ms)"
                    if self.cycles is not None else ""),
                 f"{self.accelerator} / {self.system_config} / {self.memory_mode} on {self.soc}",
                 *self._board_lines(), ""]
        lines += self._context()
        ops = self.operators
        for op in ops:
            if len(ops) > 1 or op.table.operator is not None:
                where = op.table.model_symbol or f"{op.table.model_address:#x}"
                lines.append(f"{where} ethos-u operator {op.table.operator}: {op.verdict}")
            lines += _bases_table(op.table, op.run, self.hooks) if op.table.bases else []
            if len(ops) > 1:
                lines.append("")
        if self.findings:
            lines.append("")
            for f in sorted(self.findings, key=lambda f: SEVERITIES.index(f.severity)):
                lines.append(f"{f.severity}: [{f.rule}] {f.message}")
        if self.functional is not None:
            lines += ["", *self.functional.summary()]
        if self.diagnosis:
            lines += ([""] if lines[-1] else []) + [f"diagnosis: {self.diagnosis}"]
        if self.assumptions:
            lines.append("")
            lines += [f"assumption: {a}" for a in self.assumptions]
        return "\n".join(lines)


def _bases_table(table: BaseAddressTable, run, hooks=None) -> list[str]:
    """One row per base: the address passed, the address the NPU gets (a column of its own when
    a remap hook changes one), its memory, port and the Vela class that times it."""
    ports = {b.region: b for b in run.bases}
    remapped = hooks is not None and any(hooks.npu_address(b.address) != b.address for b in table.bases)
    rows = [("region", "name", "base", *(("npu",) if remapped else ()), "size", "memory", "port",
             "timed as", "from")]
    for b in table.bases:
        p = ports.get(b.region)
        npu_at = (("unknown" if b.unknown else f"{p.address:#010x}" if p else "-"),) if remapped else ()
        rows.append((str(b.region), b.name, "unknown" if b.unknown else f"{b.address:#010x}", *npu_at,
                     str(b.size), (p.memory if p else None) or "-", (p.port if p else None) or "-",
                     (p.timed_as if p else None) or "-", b.note))
    stream = run.stream
    if stream is not None and hooks is not None and (hooks.remap or hooks.config):
        # the image's hooks decide QBASE and QCONFIG too: the stream's row says what they give
        # the driver hands the hooks the commands' address, past the COP1 header of the
        # operator's data: the same distance past the stream address as the NPU's fetch
        passed = table.stream_address + stream.address - hooks.npu_address(table.stream_address)
        npu_at = (f"{stream.address:#010x}",) if remapped else ()
        rows.append(("-", "command stream", f"{passed:#010x}", *npu_at, str(stream.size),
                     stream.memory or "-", stream.port or "-", "-",
                     "the COP1 commands the NPU fetches: QBASE, through the QCONFIG port"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]


def _provenance(base: BoundBase) -> str:
    text = f"region {base.region} base {'unknown' if base.unknown else f'{base.address:#x}'} ← "
    sym = base.symbol
    if sym is None or sym.binding == "local" or base.arena is not None or "passes 0/0" in base.note:
        return text + base.note
    return text + defined_by(base) + (" (no strong definition linked)" if sym.binding == "weak" else "")


def _evidence_line(ev) -> str:
    verdict = {True: "read by the backend", False: "not read by the backend",
               None: "cannot tell whether the backend reads it"}[ev.reads]
    return f"{verdict}, from {ev.source}: {ev.detail}"


def _rule_ids(findings) -> list[str]:
    return list(dict.fromkeys(f.rule for f in findings))


def _region_needs(needs: dict[int, int]) -> dict[str, int]:
    return {str(k): v for k, v in sorted(needs.items())}


def _base_rows(table: BaseAddressTable, run) -> list[dict]:
    """The JSON's Base: each entry of the table with where the emulated run placed it."""
    ports = {b.region: b for b in run.bases}
    return [_base_json(b, ports.get(b.region)) for b in table.bases]


def _base_json(b: BoundBase, port) -> dict:
    return {"region": b.region, "name": b.name, "address": None if b.unknown else b.address,
            "size": b.size, "unknown": b.unknown or None,
            "symbol": b.symbol.name if b.symbol else None,
            "binding": b.symbol.binding if b.symbol else None,
            "defined_in": b.symbol.defined_in if b.symbol else None,
            "memory": port.memory if port else None, "port": port.port if port else None,
            "npu_address": port.address if port else None,
            "timed_as": port.timed_as if port else None,
            "note": b.note,
            "arena": list(b.arena) if b.arena else None,
            "arena_offset": b.offset,
            "decided_at_run_time": (b.arena is not None and b.offset is None) or b.run_time,
            # pointer rules: does the backend read the symbol, and which evidence decided
            "read_evidence": to_json(b.evidence)}
