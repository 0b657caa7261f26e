"""The rules: every rule id a weaklink finding or result can carry, once, with its severity, a
one-line summary and the help text SARIF viewers and CI show; and the Finding record.

| severity | meaning                                             | SARIF level | GitHub annotation |
|----------|-----------------------------------------------------|-------------|-------------------|
| error    | the image fails (or an --expect-* expectation did)  | error       | ::error           |
| warning  | it likely does not do what was meant                | warning     | ::warning         |
| info     | a fact worth knowing, often meant (a weak default)  | note        | none              |

In SARIF and the annotations, what trips a gate (an unmet --expect-*, a diff --fail-on) is an
error whatever its rule's severity (weaklink.ci.results).

`severity` is the JSON's word (a finding's `severity`: error, warning or info,
docs/json-contract.md); SARIF 2.1.0 names the same levels error, warning, note (§3.27.10), and
SARIF_LEVEL is the one place that maps them. A rule's severity is its findings' default: a few
findings say more or less (an --expect-override turns weak-default-survived into a warning, a
placement no slower than assumed is an info). Ids and severities are part of the JSON contract:
never rename them.

analyze raises the ANALYZE rules (weaklink.analyze.findings, .extraction), check adds the CHECK
rules (weaklink.check.static, .functional, and the verdict itself), `check --run` the RUN rules
(weaklink.run.compare), diff the CHANGES kinds and DIFF's verdict and base changes
(weaklink.diff); weaklink.ci writes every one as SARIF and as annotations.
"""
from __future__ import annotations

from dataclasses import dataclass

from npu.records import Record

SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
SEVERITIES = tuple(SARIF_LEVEL)         # most severe first


@dataclass(frozen=True, slots=True)
class Finding(Record):
    """One hit of a rule. expectation: raised by an --expect-* option, which fails the run
    (exit 1)."""
    rule: str
    severity: str           # error | warning | info
    symbol: str | None
    message: str
    expectation: bool = False

    JSON = ("rule", "severity", "symbol", "message")


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    severity: str           # its findings' default severity: error | warning | info
    short: str              # one line
    help: str               # what it means and what to do

    @property
    def level(self) -> str:
        """The SARIF level: error | warning | note."""
        return SARIF_LEVEL[self.severity]

    def finding(self, symbol: str | None, message: str, severity: str | None = None,
                expectation: bool = False) -> Finding:
        return Finding(self.id, severity or self.severity, symbol, message, expectation)


# analyze: what an engineer should know about a linked image
WEAK_DEFAULT_SURVIVED = Rule(
    "weak-default-survived", "info", "A weak default definition is in the linked image",
    "No strong definition replaced this WEAK one (nm shows V/W). That is right when the "
    "default is meant to stay; when a strong override was expected, link its object directly "
    "or extract it from its archive (-u SYMBOL or --whole-archive): GNU ld never extracts an "
    "archive member for a symbol a weak definition already satisfies.")
NEAR_MISS_OVERRIDE = Rule(
    "near-miss-override", "warning",
    "An override has another name than the weak default it targets",
    "A weak and a strong definition share an unqualified name but not the raw symbol name, "
    "usually a C++ namespace or an extern \"C\" mismatch. To ld they are two symbols, so the "
    "strong one overrides nothing. Give both the same linkage.")
OVERRIDE_NOT_EXTRACTED = Rule(
    "override-not-extracted", "warning",
    "A strong override sat in an archive member ld never pulled",
    "The weak default was linked before the archive was searched, so no undefined reference "
    "was left for the member to satisfy. Link the override's object directly, or force it in "
    "with -u SYMBOL or --whole-archive.")
POINTER_OUTSIDE_REGION = Rule(
    "pointer-outside-region", "error", "A pointer's target is outside the expected memory region",
    "--expect-region SYM=R: the symbol (or, for a pointer, its reset value) does not lie in "
    "region R. Check the section attribute and the linker script placement.")
EXPECTED_SYMBOL_MISSING = Rule(
    "expected-symbol-missing", "error", "An expected symbol is not defined in the image",
    "A symbol named by --expect-override or --expect-region is not defined in the linked "
    "image.")
ANALYZE = (WEAK_DEFAULT_SURVIVED, NEAR_MISS_OVERRIDE, OVERRIDE_NOT_EXTRACTED,
           POINTER_OUTSIDE_REGION, EXPECTED_SYMBOL_MISSING)

# check: the base-address table's findings, --functional's, and the verdict itself
FAST_SCRATCH_NULL = Rule(
    "fast-scratch-null", "error", "The NPU fast-scratch base is 0 although the model uses it",
    "The command stream stages data in the fast-scratch region, but the base-address table "
    "passes 0/0: the weak default survived, no definition was linked, or the backend never "
    "reads the runner's buffer. On Ethos-U85 Dedicated_Sram the NPU then writes to address 0 "
    "and hangs. Link a strong definition of the fast-scratch buffer placed in SRAM.")
FAST_SCRATCH_TOO_SMALL = Rule(
    "fast-scratch-too-small", "error",
    "The NPU fast-scratch buffer is smaller than the model needs",
    "The region's base is set, but its size is below what the command stream addresses; the "
    "NPU reads or writes past the buffer. Enlarge the buffer to the model's need.")
FAST_SCRATCH_UNREACHABLE = Rule(
    "fast-scratch-unreachable", "error",
    "The NPU fast-scratch buffer is in memory its port cannot reach",
    "In this memory mode the region goes through an AXI port that cannot reach the memory the"
    " buffer was placed in: a CPU-private TCM (plain .bss is DTCM on Corstone-300), an "
    "unmapped address, or a write on the Ethos-U55's read-only AXI1. The access is never "
    "answered and the inference never completes. Place it with the section the linker script "
    "maps to SRAM.")
REGION_NOT_IN_ASSUMED_MEMORY = Rule(
    "region-not-in-assumed-memory", "warning",
    "A region is in memory the NPU reaches, but not where the memory mode assumed it",
    "Vela scheduled the stream for the memory its memory mode puts the region in (SRAM behind"
    " Axi0, DDR behind Axi1 on the Corstones). The NPU reaches the memory it is in, so the "
    "inference completes; the message gives the emulated cycles against the same stream with "
    "the region where Vela assumed it. Move the buffer, or compile for the memory mode that "
    "matches where it is.")
FAST_MEMORY_TOO_SMALL = Rule(
    "fast-memory-too-small", "error",
    "ethosu_init's fast memory is smaller than the region-2 size",
    "The Ethos-U driver compares the fast memory given to ethosu_init with the size of "
    "base-address region 2 and fails the invoke (\"Fast memory area too small\") when the "
    "region is larger. Give ethosu_init a fast-memory area at least as large as the region.")
CORRUPTS = Rule(
    "corrupts", "error", "An NPU write lands on bytes other data still needs",
    "weaklink check --functional computed the inference on bytes at the image's base "
    "addresses. An operation wrote through one region onto bytes that another region reads "
    "later, onto the model, or onto a symbol of the image: the buffers overlap. Give each "
    "region its own memory (e.g. a fast scratch of its own instead of a pointer into the "
    "tensor arena).")
NPU_VERDICT = Rule(
    "npu-verdict", "error", "The emulated NPU inference did not complete",
    "weaklink check ran the image's command stream on the Ethos-U emulator with the image's "
    "base-address table and the inference hung or faulted. The result's message holds the "
    "chain from the fault back to the symbol that set the base.")
CHECK = (FAST_SCRATCH_NULL, FAST_SCRATCH_TOO_SMALL, FAST_SCRATCH_UNREACHABLE,
         REGION_NOT_IN_ASSUMED_MEMORY, FAST_MEMORY_TOO_SMALL, CORRUPTS, NPU_VERDICT)

# diff: each change kind, in the order a symbol's kinds are listed (most telling first)
CHANGES = (
    Rule("added", "info", "A symbol is defined in the new image only",
         "The new build defines a global symbol the old one did not."),
    Rule("removed", "warning", "A symbol of the old image is gone",
         "The old build defined this global symbol; the new one does not."),
    Rule("binding-changed", "warning", "A definition changed between weak and strong",
         "A strong override no longer wins (strong became weak: the weak default survived) or a "
         "weak default was replaced. Either changes what the program runs on."),
    Rule("definer-changed", "warning", "Another file's definition won",
         "The compilation unit that defines the symbol changed between the builds: link order, an "
         "archive extraction or an override changed which definition ld picked."),
    Rule("region-changed", "warning", "A symbol moved to another memory region",
         "The symbol now lives in another MEMORY region (e.g. SRAM to BRAM): its section or the "
         "linker script placement changed."),
    Rule("section-changed", "info", "A symbol moved to another output section in the same region",
         "The symbol's output section changed while its memory region did not."),
    Rule("points-to-changed", "warning", "A pointer's reset value now points somewhere else",
         "The pointer's initial value points into another symbol or region than before (a pointer "
         "that only follows its moved target is not reported)."),
    Rule("value-changed", "info", "A data symbol's reset value changed",
         "The initial value (the PROGBITS bytes, or zero for .bss) changed."),
    Rule("size-changed", "info", "A symbol's size changed",
         "st_size changed between the builds."),
    Rule("address-changed", "info", "A symbol named with --symbol moved",
         "Address moves are listed only for the symbols named with --symbol."),
)
VERDICT_CHANGED = Rule(
    "verdict-changed", "warning", "The NPU verdict changed",
    "With --check: the emulated inference's verdict (ok, hang, error) differs between the "
    "builds.")
BASE_CHANGED = Rule(
    "base-changed", "warning", "An NPU base-address table entry changed",
    "With --check: the base address, size or defining symbol the backend passes for an NPU "
    "region differs between the builds.")
DIFF = (*CHANGES, VERDICT_CHANGED, BASE_CHANGED)

# check --run: check's table against the one the firmware passed when it ran
RUN_MISMATCH = Rule(
    "run-mismatch", "error", "The firmware's run differs from what check predicts",
    "weaklink check --run ran the image on QEMU with the NPU emulated and compared, per NPU "
    "job, each region's base and size, the job's status and cycles, and the verdict with what "
    "the firmware did. The message names both values and where each comes from.")
RUN_FAILED = Rule(
    "run-failed", "error", "The firmware crashed or stopped without an explanation",
    "weaklink check --run: the run ended in a crash, a timeout with no hung NPU job to explain "
    "it, or QEMU stopping; the message gives the program counter and the UART's last lines.")
RUN = (RUN_MISMATCH, RUN_FAILED)

# What each command's SARIF lists, in this order: its own rules after those of the commands
# it builds on.
ANALYZE_RULES = {r.id: r for r in ANALYZE}
CHECK_RULES = {r.id: r for r in (*ANALYZE, *CHECK)}
DIFF_RULES = {r.id: r for r in (*ANALYZE, *CHECK, *DIFF)}
RULES = {r.id: r for r in (*ANALYZE, *CHECK, *RUN, *DIFF)}
