"""The one JSON serializer (npu.records): a record's fields are its JSON keys, in order, unless
it declares them; what it declares is what the JSON contract's documents are made of."""
from __future__ import annotations

import json
from collections import namedtuple
from dataclasses import dataclass

from npu.records import Record, to_json

Span = namedtuple("Span", "address size")


@dataclass(frozen=True)
class Owner:
    name: str
    kind: str


@dataclass(frozen=True)
class Write(Record):
    op: str
    owner: Owner | None
    spans: tuple[Span, ...]
    note: str | None = None
    extra: tuple[str, ...] = ()

    schema_version = 1
    JSON = ("schema_version", "op", "owner=owner.name", "owner_kind=owner.kind", "spans",
            "width", "note?", "extra?")

    @property
    def width(self) -> int:
        return sum(s.size for s in self.spans)


def test_fields_in_order_when_nothing_is_declared():
    assert to_json(Owner("arena", "symbol")) == {"name": "arena", "kind": "symbol"}
    assert list(to_json(Owner("a", "b"))) == ["name", "kind"]


def test_declared_keys_renames_dotted_paths_properties_and_named_tuples():
    w = Write("CONV", Owner("tensor_arena", "symbol"), (Span(16, 32), Span(64, 8)))
    doc = to_json(w)
    assert list(doc) == ["schema_version", "op", "owner", "owner_kind", "spans", "width"]
    assert doc == {"schema_version": 1, "op": "CONV", "owner": "tensor_arena",
                   "owner_kind": "symbol", "spans": [{"address": 16, "size": 32},
                                                     {"address": 64, "size": 8}], "width": 40}
    assert w.to_json() == doc


def test_a_path_through_none_is_none_and_optional_keys_are_left_out_only_when_empty():
    doc = to_json(Write("DMA", None, ()))
    assert doc["owner"] is None and doc["owner_kind"] is None
    assert "note" not in doc and "extra" not in doc
    doc = to_json(Write("DMA", None, (), note="", extra=("x",)))
    assert doc["note"] == "" and doc["extra"] == ["x"]      # empty text is a value, not absent


def test_containers_and_plain_values_pass_through():
    value = {"rows": (Owner("a", "b"), [Span(1, 2)]), 2: 3.5, "none": None}
    assert to_json(value) == {"rows": [{"name": "a", "kind": "b"}, [{"address": 1, "size": 2}]],
                              2: 3.5, "none": None}
    assert json.dumps(to_json(value)) == ('{"rows": [{"name": "a", "kind": "b"}, '
                                          '[{"address": 1, "size": 2}]], "2": 3.5, "none": null}')
