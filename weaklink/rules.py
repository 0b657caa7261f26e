"""Every rule a weaklink result can carry, with the help text SARIF viewers and CI show.

One rule per finding kind: the analyze findings (weaklink.analyze.findings), the NPU check's
(weaklink.check.static, plus the verdict itself) and the diff's change kinds. Ids are the JSON
contract's rule and kind names: never rename them.
"""
from __future__ import annotations

from collections import namedtuple


class Rule(namedtuple("Rule", "id short help level", defaults=("warning",))):
    """level: the SARIF default level, error | warning | note. (A named tuple, as
    weaklink.report.results.Result.)"""
    __slots__ = ()


_ANALYZE = (
    Rule("weak-default-survived", "A weak default definition is in the linked image",
         "No strong definition replaced this WEAK one (nm shows V/W). That is right when the "
         "default is meant to stay; when a strong override was expected, link its object "
         "directly or extract it from its archive (-u SYMBOL or --whole-archive): GNU ld never "
         "extracts an archive member for a symbol a weak definition already satisfies.", "note"),
    Rule("near-miss-override", "An override has another name than the weak default it targets",
         "A weak and a strong definition share an unqualified name but not the raw symbol "
         "name, usually a C++ namespace or an extern \"C\" mismatch. To ld they are two "
         "symbols, so the strong one overrides nothing. Give both the same linkage."),
    Rule("override-not-extracted", "A strong override sat in an archive member ld never pulled",
         "The weak default was linked before the archive was searched, so no undefined "
         "reference was left for the member to satisfy. Link the override's object directly, or "
         "force it in with -u SYMBOL or --whole-archive."),
    Rule("pointer-outside-region", "A pointer's target is outside the expected memory region",
         "--expect-region SYM=R: the symbol (or, for a pointer, its reset value) does not lie "
         "in region R. Check the section attribute and the linker script placement.", "error"),
    Rule("expected-symbol-missing", "An expected symbol is not defined in the image",
         "A symbol named by --expect-override or --expect-region is not defined in the linked "
         "image.", "error"),
)
_CHECK = (
    Rule("fast-scratch-null", "The NPU fast-scratch base is 0 although the model uses it",
         "The command stream stages data in the fast-scratch region, but the base-address table "
         "passes 0/0: the weak default survived, no definition was linked, or the backend never "
         "reads the runner's buffer. On Ethos-U85 Dedicated_Sram the NPU then writes to address "
         "0 and hangs. Link a strong definition of the fast-scratch buffer placed in SRAM.",
         "error"),
    Rule("fast-scratch-too-small", "The NPU fast-scratch buffer is smaller than the model needs",
         "The region's base is set, but its size is below what the command stream addresses; "
         "the NPU reads or writes past the buffer. Enlarge the buffer to the model's need.",
         "error"),
    Rule("fast-scratch-unreachable", "The NPU fast-scratch buffer is in memory its port cannot "
         "reach",
         "In this memory mode the region goes through an AXI port that cannot reach the memory "
         "the buffer was placed in: a CPU-private TCM (plain .bss is DTCM on Corstone-300), an "
         "unmapped address, or a write on the Ethos-U55's read-only AXI1. The access is never "
         "answered and the inference never completes. Place it with the section the linker "
         "script maps to SRAM.", "error"),
    Rule("region-not-in-assumed-memory", "A region is in memory the NPU reaches, but not where "
         "the memory mode assumed it",
         "Vela scheduled the stream for the memory its memory mode puts the region in (SRAM "
         "behind Axi0, DDR behind Axi1 on the Corstones). The NPU reaches the memory it is in, so "
         "the inference completes; the message gives the emulated cycles against the same "
         "stream with the region where Vela assumed it. Move the buffer, or compile for the "
         "memory mode that matches where it is.", "warning"),
    Rule("fast-memory-too-small", "ethosu_init's fast memory is smaller than the region-2 size",
         "The Ethos-U driver compares the fast memory given to ethosu_init with the size of "
         "base-address region 2 and fails the invoke (\"Fast memory area too small\") when the "
         "region is larger. Give ethosu_init a fast-memory area at least as large as the "
         "region.", "error"),
    Rule("corrupts", "An NPU write lands on bytes other data still needs",
         "weaklink check --functional computed the inference on bytes at the image's base "
         "addresses. An operation wrote through one region onto bytes that another region reads "
         "later, onto the model, or onto a symbol of the image: the buffers overlap. Give each "
         "region its own memory (e.g. a fast scratch of its own instead of a pointer into the "
         "tensor arena).", "error"),
    Rule("npu-verdict", "The emulated NPU inference did not complete",
         "weaklink check ran the image's command stream on the Ethos-U emulator with the "
         "image's base-address table and the inference hung or faulted. The result's message "
         "holds the chain from the fault back to the symbol that set the base.", "error"),
)
_DIFF = (
    Rule("added", "A symbol is defined in the new image only",
         "The new build defines a global symbol the old one did not.", "note"),
    Rule("removed", "A symbol of the old image is gone",
         "The old build defined this global symbol; the new one does not.", "warning"),
    Rule("binding-changed", "A definition changed between weak and strong",
         "A strong override no longer wins (strong became weak: the weak default survived) or a "
         "weak default was replaced. Either changes what the program runs on.", "warning"),
    Rule("definer-changed", "Another file's definition won",
         "The compilation unit that defines the symbol changed between the builds: link order, "
         "an archive extraction or an override changed which definition ld picked.", "warning"),
    Rule("region-changed", "A symbol moved to another memory region",
         "The symbol now lives in another MEMORY region (e.g. SRAM to BRAM): its section or the "
         "linker script placement changed.", "warning"),
    Rule("section-changed", "A symbol moved to another output section in the same region",
         "The symbol's output section changed while its memory region did not.", "note"),
    Rule("points-to-changed", "A pointer's reset value now points somewhere else",
         "The pointer's initial value points into another symbol or region than before (a "
         "pointer that only follows its moved target is not reported).", "warning"),
    Rule("value-changed", "A data symbol's reset value changed",
         "The initial value (the PROGBITS bytes, or zero for .bss) changed.", "note"),
    Rule("size-changed", "A symbol's size changed", "st_size changed between the builds.",
         "note"),
    Rule("address-changed", "A symbol named with --symbol moved",
         "Address moves are listed only for the symbols named with --symbol.", "note"),
    Rule("verdict-changed", "The NPU verdict changed",
         "With --check: the emulated inference's verdict (ok, hang, error) differs between the "
         "builds.", "warning"),
    Rule("base-changed", "An NPU base-address table entry changed",
         "With --check: the base address, size or defining symbol the backend passes for an NPU "
         "region differs between the builds.", "warning"),
)

ANALYZE_RULES = {r.id: r for r in _ANALYZE}
CHECK_RULES = {r.id: r for r in (*_ANALYZE, *_CHECK)}
DIFF_RULES = {r.id: r for r in (*_ANALYZE, *_CHECK, *_DIFF)}
SEVERITY_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
