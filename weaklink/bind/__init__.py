"""Bind: from a linked firmware image to the base-address table its NPU backend will pass.

A binding file (TOML) says which symbols and sections feed which NPU region; weaklink ships the
`executorch-arm` preset. `resolve_bases` reads them from the image and records, for every
region, where its address came from, so a later hang can be traced back to a symbol.
"""
from weaklink.bind.binding import Binding, RegionRule, load_binding
from weaklink.bind.bound import resolve_tables
from weaklink.bind.table import BaseAddressTable, BoundBase, resolve_bases

__all__ = ["Binding", "RegionRule", "load_binding", "BaseAddressTable", "BoundBase",
           "resolve_bases", "resolve_tables"]
