"""What counts as a change: exact checks on small builds made here with the real toolchain."""
from __future__ import annotations

import pytest

from weaklink.diff import diff


def _by_symbol(report):
    return {c.symbol: c for c in report.changes}


def test_identical_images_have_no_change(builds):
    r = diff(str(builds["base"].elf), str(builds["base"].elf))
    assert r.changes == () and r.moved.count == 0
    assert r.new_findings == () and r.fixed_findings == () and r.exit_code == 0


def test_code_growth_moves_without_drowning_the_report(builds):
    """`grown` inserts a function and a word in front of everything: every later symbol moves
    and the pointers follow their targets. Only the two new symbols are changes."""
    r = diff(str(builds["base"].elf), str(builds["grown"].elf))
    changes = _by_symbol(r)
    assert set(changes) == {"grow", "pad_word"}
    assert {c.kind for c in changes.values()} == {"added"}
    assert changes["pad_word"].before is None and changes["pad_word"].after.value == 7
    assert r.moved.count >= 4          # table, table_ptr, buf_ptr, hook, limit, main ...
    assert r.moved.shift is not None and r.moved.shift != 0


def test_symbol_option_lists_address_moves(builds):
    r = diff(str(builds["base"].elf), str(builds["grown"].elf), symbols=["table_ptr"])
    c = _by_symbol(r)["table_ptr"]
    assert c.kinds == ("address-changed",)
    assert c.after.address > c.before.address
    # the reset value moved with `table`, and still points at table+8
    assert c.before.points_to.symbol == c.after.points_to.symbol == "table"
    assert c.before.points_to.offset == c.after.points_to.offset == 8
    assert c.before.value != c.after.value
    assert set(r.queried) == {"table_ptr"}


def test_region_and_binding_changes(builds):
    r = diff(str(builds["grown"].elf), str(builds["moved"].elf),
             map_old=str(builds["grown"].map), map_new=str(builds["moved"].map))
    changes = _by_symbol(r)
    buf = changes["buf"]
    assert "region-changed" in buf.kinds
    assert (buf.before.region, buf.after.region) == ("SCRATCH", "RAM")
    assert (buf.before.section, buf.after.section) == (".scratch", ".bss")
    hook = changes["hook"]
    assert hook.kind == "binding-changed"
    assert (hook.before.binding, hook.after.binding) == ("global", "weak")
    # buf_ptr still points at buf, but buf is in another region now: that is a change
    # (a pointer into SRAM that now points into RAM is the wrong-memory pitfall)
    ptr = changes["buf_ptr"]
    assert ptr.kinds == ("points-to-changed",)
    assert ptr.before.points_to.symbol == ptr.after.points_to.symbol == "buf"
    assert (ptr.before.points_to.region, ptr.after.points_to.region) == ("SCRATCH", "RAM")
    assert [f.rule for f in r.new_findings] == ["weak-default-survived"]
    assert r.new_findings[0].symbol == "hook"


@pytest.mark.parametrize("gates, failed", [
    ((), ()),
    (("region-changed",), ("region-changed",)),
    (("binding-changed,region-changed",), ("binding-changed", "region-changed")),
    (("new-findings",), ()),               # a new info does not trip the gate
])
def test_gates(builds, gates, failed):
    r = diff(str(builds["grown"].elf), str(builds["moved"].elf), fail_on=gates)
    assert r.failed == failed
    assert r.exit_code == (1 if failed else 0)


def test_json_contract(builds):
    r = diff(str(builds["grown"].elf), str(builds["moved"].elf)).to_json()
    assert r["schema_version"] == 1
    for key in ("changes", "new_findings", "fixed_findings", "bases_changed", "verdict_before",
                "verdict_after"):
        assert key in r
    change = next(c for c in r["changes"] if c["symbol"] == "buf")
    assert set(change) >= {"symbol", "kind", "before", "after"}
    fields = {"binding", "defined_in", "section", "region", "address", "size", "value",
              "points_to"}
    assert set(change["before"]) >= fields and set(change["after"]) >= fields
    assert change["after"]["defined_in"] == "prog.c"               # DWARF attribution
    added = diff(str(builds["base"].elf), str(builds["grown"].elf)).to_json()["changes"]
    assert all(c["before"] is None and c["after"] for c in added)
