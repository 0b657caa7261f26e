"""Firmware ELF analysis: which definition won, where it lives, what it holds at reset.

`analyze(path, ...)` reads a linked image and returns one AnalysisReport; `analyze_image(image,
link_map, ...)` analyses an image (and map) already read (weaklink check reads each once). The
passes, in order:

1. read the image (ET_EXEC, ARM) and, when given, the ld map;
2. regions: map "Memory Configuration" > board preset > the image's segments and sections;
3. the symbol table as columns, its C++ names demangled by one c++filt;
4. queried symbols: binding, place, reset value, pointer target;
5. findings (weak-default-survived, near-miss-override, override-not-extracted,
   pointer-outside-region, expected-symbol-missing), with the C++ facts of
   weaklink.analyze.cxxlinkage (vague linkage, class members);
6. attribution: DWARF for every symbol it covers, the map for the queried symbols and the
   findings.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from weaklink.analyze import extraction, findings as F, regions as R, values
from weaklink.analyze.attribution import Attribution
from weaklink.analyze.cxxlinkage import ASSUMED, ASSUMPTION, CxxFacts
from weaklink.analyze.analysis import AnalysisReport, Query, RegionUse
from weaklink.analyze.symtable import GlobalSymbols
from weaklink.demangle import demangle, missing
from weaklink.errors import UsageError
from weaklink.read import elfstructs as S
from weaklink.read.image import Image
from weaklink.read.ldmap import parse_map
from weaklink.read.linkmap import LinkMap
from weaklink.rules import SEVERITIES

MACHINES = {S.EM_ARM: "ARM"}
ATTRIBUTE_ALL_WEAK_BELOW = 64     # small images: attribute every weak survivor too


def analyze(path: str, *, map_path: str | None = None, **options) -> AnalysisReport:
    """analyze_image of the image at `path` and the map at `map_path`, each read once."""
    return analyze_image(Image.from_path(path), parse_map(map_path) if map_path else None,
                         **options)


def analyze_image(image: Image, link_map: LinkMap | None = None, *, board: str | None = None,
                  symbols: Sequence[str] = (), expect_override: Sequence[str] = (),
                  expect_region: Mapping[str, str] | None = None,
                  link_inputs: Sequence[str] | None = None,
                  link_dir: str | None = None) -> AnalysisReport:
    """`link_map`: the link's map (weaklink.read.ldmap), or None."""
    expect_region = dict(expect_region or {})
    regions = _regions(image, link_map, board)
    table = GlobalSymbols(image, regions)
    attribution = Attribution(image, link_map)

    names = list(dict.fromkeys([*symbols, *expect_region]))
    queried = {n: _query(image, regions, n, table) for n in names}
    facts = CxxFacts(table, attribution, _comdat(attribution, link_map, link_dir))
    weak_rows, found, vague = F.weak_defaults(table, frozenset(expect_override), facts)
    found += F.near_misses(table, facts)
    found += _expectations(image, regions, queried, expect_override, expect_region)
    notes: list[str] = [why] if table.mangled_rows and (why := missing()) else []
    if any(ASSUMED in why for why in vague.values()):
        notes.append(f"assumption: {ASSUMPTION}")
    found += _not_extracted(table, link_map, link_inputs, link_dir, notes,
                            expect_override)
    found.sort(key=_reading_order)

    defined_in = attribution.table_units(table.cols)
    defined_in.update(_attribute(image, attribution, queried, found, table, weak_rows, defined_in))
    if (left := _ambiguous(attribution, table, defined_in)):
        notes.append(f"defined_in left null for {left} (the DWARF of several units defines "
                     "each: a weak default beside the definition that replaced it; "
                     "--map tells which object's won)")
    queried = {n: _with_unit(q, image, defined_in) for n, q in queried.items()}
    usage = {name: RegionUse(used, tuple(secs))
             for name, (used, secs) in R.usage(image, regions, notes).items()}
    return AnalysisReport(image.name, MACHINES.get(image.elf.header["e_machine"], "?"),
                          image.entry, regions, usage, table, queried,
                          tuple(found), weak_rows, defined_in, tuple(notes), vague)


def _reading_order(f: F.Finding) -> tuple:
    """Findings as reports list them: most severe first, then by rule and symbol."""
    return SEVERITIES.index(f.severity), f.rule, f.symbol


def npu_findings(image: Image, link_map: LinkMap | None,
                 names: Sequence[str]) -> tuple[list[F.Finding], dict[str, str]]:
    """What weaklink check takes from the analysis: the findings that bear on the NPU verdict
    (near-miss-override, override-not-extracted) and, by name, the unit that defined each of
    `names` (the symbols the binding reads). None of the rest of the report is computed: the
    unit of every symbol, region usage, the weak-default infos."""
    table = GlobalSymbols(image, R.from_image(image))
    defined = {n: hits[0] for n in names if (hits := table.lookup(n))}
    attribution = Attribution(image, link_map)
    units = attribution.many(list(defined.values()))
    facts = CxxFacts(table, attribution, _comdat(attribution, link_map, None))
    found = F.near_misses(table, facts) + _not_extracted(table, link_map, None, None, [])
    found.sort(key=_reading_order)
    return found, {n: units[s.index] for n, s in defined.items() if s.index in units}


def query(report: AnalysisReport, name: str, attribution: Attribution | None = None) -> Query:
    """One more symbol of an analysed image, with the --symbol fields (weaklink diff uses it
    for the symbols that changed); `attribution` fills in defined_in."""
    image = report.table.image
    q = _query(image, report.regions, name, report.table)
    if q.found and attribution is not None and (hits := image.lookup(q.raw_name)):
        q = replace(q, defined_in=attribution.defined_in(hits[0]))
    return q


def _regions(image, link_map, board) -> R.RegionMap:
    # A script without MEMORY gives a map with only ld's *default* region: use the next source.
    if link_map is not None and any(m.name != R.LD_DEFAULT_REGION for m in link_map.memory):
        return R.from_link_map(link_map.memory, link_map.path)
    if board is not None:
        return R.from_board(board)
    return R.from_image(image)


def _query(image: Image, regions: R.RegionMap, name: str, table: GlobalSymbols) -> Query:
    hits = table.lookup(name)
    if not hits:
        return Query(name, False)
    sym = hits[0]
    value = image.initial_value(sym)
    return Query(name, True, sym.name, demangle(sym.name), sym.binding_name, sym.type_name,
                 sym.address, sym.size, image.section_name(sym.shndx),
                 regions.name_at(sym.address), value,
                 values.points_to(image, regions, value, sym.size),
                 segment=image.segment_at(sym.address))


def _expectations(image, regions, queried, expect_override, expect_region) -> list[F.Finding]:
    unknown = sorted(set(expect_region.values()) - set(regions.names))
    if unknown:
        raise UsageError(f"--expect-region: no region {', '.join(unknown)} (regions from "
                         f"{regions.source}: {', '.join(regions.names) or 'none'})")
    out = [F.missing(n, "--expect-override") for n in expect_override if not image.lookup(n)]
    for name, region in expect_region.items():
        q = queried[name]
        if not q.found:
            out.append(F.missing(name, "--expect-region"))
        elif (hit := F.pointer_outside(q, region)) is not None:
            out.append(hit)
    return out


def _comdat(attribution, link_map, link_dir):
    """The COMDAT evidence of the link's input objects, when the map's LOAD files are found
    (cxxlinkage point 3), else None."""
    if link_map is None:
        return None
    where = link_dir or extraction.find_link_dir(extraction.args_from_map(link_map), link_map.path)
    return None if where is None else extraction.comdat_evidence(attribution.map, where)


def _not_extracted(table, link_map, link_inputs, link_dir, notes: list[str],
                   expected: Sequence[str] = ()):
    """override-not-extracted needs the link's inputs: --link-inputs, or the map's LOAD
    lines when their files are still there. `notes` says why the check did not run."""
    weak = table.rows_with_binding(S.STB_WEAK)
    if not weak:
        return []
    if link_inputs:
        args = list(link_inputs)
    elif link_map is not None:
        args = extraction.args_from_map(link_map)
        if not extraction.has_archive(args):      # no archive: nothing can stay unextracted
            return []
    else:
        return []
    where = link_dir or extraction.find_link_dir(args, link_map.path if link_map else None)
    if where is None and not link_inputs:
        notes.append("override-not-extracted not checked: the map's LOAD inputs were not "
                     "found (give --link-dir DIR, where ld ran)")
        return []
    weak_names = table.names(weak)
    present = set(weak_names)
    first = [n for n in expected if n in present]      # the ones asked about go first
    discarded = [(d.file, d.section) for d in link_map.discarded] if link_map is not None else []
    return extraction.not_extracted(list(dict.fromkeys([*first, *weak_names])), args, where,
                                    discarded)


def _attribute(image, attribution, queried, found, table, weak_rows, known) -> dict[int, str]:
    """The units of the queried symbols, the findings and (small images) the surviving weak
    definitions that `known` (DWARF's units of the table) lacks: DWARF, else the map."""
    wanted = {q.raw_name for q in queried.values() if q.found} | {f.symbol for f in found}
    if len(weak_rows) <= ATTRIBUTE_ALL_WEAK_BELOW:
        wanted |= set(table.names(weak_rows))
    syms = [hits[0] for n in sorted(wanted) if (hits := image.lookup(n))]
    return attribution.many([s for s in syms if s.index not in known])


def _ambiguous(attribution, table, defined_in: dict[int, str]) -> str:
    """The table's variables left without a unit because several units define them."""
    if not attribution.ambiguous:
        return ""
    c = table.cols
    rows = [k for k in range(len(c)) if int(c.address[k]) in attribution.ambiguous
            and int(c.index[k]) not in defined_in]
    names = table.names(rows)
    return ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def _with_unit(q: Query, image: Image, defined_in: dict[int, str]) -> Query:
    if not q.found:
        return q
    hits = image.lookup(q.raw_name)
    return replace(q, defined_in=defined_in.get(hits[0].index)) if hits else q
