"""Records: the reports of npu and weaklink as dataclasses, and the one function that turns them
into their JSON (docs/json-contract.md).

A record is a dataclass, or a named tuple where one is made per symbol of a large link. Its JSON
object is its fields, in declaration order, each under its own name. A record whose JSON
differs declares it in `JSON`: the keys in order, each entry a field or property
read under its own name, or `key=attribute` where the key differs from the attribute. An
attribute may be a dotted path (`gnu_ok=gnu.ok`; a path through None gives None). An entry
ending in `?` is left out when its value is None or empty: a key the contract adds only when
it applies. Values are turned into JSON the same way: records, lists and tuples, dicts.

``npu`` stands alone, and ``weaklink`` builds on it: this module is the bottom of both.
"""
from __future__ import annotations

from dataclasses import fields, is_dataclass
from operator import attrgetter

_PLAIN = frozenset({str, int, float, bool, type(None)})
_plans: dict[type, tuple] = {}


class Record:
    """A record whose JSON is its fields, or any class that declares its `JSON`."""

    __slots__ = ()
    JSON: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return to_json(self)


def to_json(value):
    """The JSON value of a record, a list, tuple or dict of them, or a plain value."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    plan = _plans.get(kind)
    if plan is None:
        plan = _plans[kind] = _plan(kind)
    if plan:
        out = {}
        for key, get, optional in plan:
            v = get(value)
            if optional and (v is None or (type(v) in (list, tuple, dict) and not v)):
                continue
            out[key] = v if type(v) in _PLAIN else to_json(v)
        return out
    if isinstance(value, (list, tuple)):
        return [v if type(v) in _PLAIN else to_json(v) for v in value]
    if isinstance(value, dict):
        return {k: v if type(v) in _PLAIN else to_json(v) for k, v in value.items()}
    return value


def _plan(kind: type) -> tuple:
    """(key, getter, optional) per JSON key of a record type; () for any other type."""
    if issubclass(kind, Record) and kind.JSON:
        entries = kind.JSON
    elif is_dataclass(kind):
        entries = [f.name for f in fields(kind)]
    elif issubclass(kind, tuple) and hasattr(kind, "_fields"):
        entries = kind._fields
    else:
        return ()
    plan = []
    for entry in entries:
        optional = entry.endswith("?")
        key, _, attribute = entry.rstrip("?").partition("=")
        plan.append((key, _getter(attribute or key), optional))
    return tuple(plan)


def _getter(path: str):
    if "." not in path:
        return attrgetter(path)
    head, rest = path.split(".", 1)
    first, then = attrgetter(head), _getter(rest)
    return lambda obj: None if (v := first(obj)) is None else then(v)
