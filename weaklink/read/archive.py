"""Read static archives (`ar` format, GNU flavour) the way GNU ld uses them.

Layouts are declared once below as data. ld walks the archive symbol index (the armap in the
`/` member) and only opens a member when a symbol it defines is needed, so `Archive` parses
the armap eagerly and a member's ELF only when `Archive.object(offset)` asks for it.

Supported: `!<arch>` and thin `!<thin>` archives, the GNU `/` (32-bit) and `/SYM64/` (64-bit)
armaps (big-endian), `//` long-name tables, `name/` and `/N` member names.
"""
from __future__ import annotations

import os
import stat
import struct
from collections import namedtuple
from functools import cached_property
from pathlib import Path

from weaklink.errors import InputError, read_input
from weaklink.read.objfile import ObjectFile

AR_MAGIC = b"!<arch>\n"
THIN_MAGIC = b"!<thin>\n"
# struct ar_hdr (<ar.h>): ASCII fields, space padded, 60 bytes, 2-byte aligned members.
AR_HDR_FIELDS = (("ar_name", 16), ("ar_date", 12), ("ar_uid", 6), ("ar_gid", 6),
                 ("ar_mode", 8), ("ar_size", 10), ("ar_fmag", 2))
AR_HDR_SIZE = sum(n for _, n in AR_HDR_FIELDS)
AR_FMAG = b"`\n"
# (start, end) of each header field: ld-style lazy extraction reads one header at a time.
_FIELD = {k: (sum(n for _, n in AR_HDR_FIELDS[:i]), sum(n for _, n in AR_HDR_FIELDS[:i + 1]))
          for i, (k, _) in enumerate(AR_HDR_FIELDS)}
ARMAP32 = ("/", ">I")         # GNU symbol index: big-endian count, offsets, NUL-terminated names
ARMAP64 = ("/SYM64/", ">Q")
LONG_NAMES = "//"


class ArchiveMember(namedtuple("ArchiveMember", "offset name data_start size")):
    """One member: its header offset (what the armap points at), its name and data span."""
    __slots__ = ()


def is_archive(data: bytes) -> bool:
    return data[:8] in (AR_MAGIC, THIN_MAGIC)


class Archive:
    """An archive as ld sees it: `armap` (symbol, member offset) in index order, lazy members."""

    def __init__(self, data: bytes, name: str):
        self.data = data
        self.name = name
        if data[:8] not in (AR_MAGIC, THIN_MAGIC):
            raise InputError(name, "not an archive: expected magic '!<arch>\\n'", 0)
        self.thin = data[:8] == THIN_MAGIC
        self._long_names = b""
        self.armap_names: list[str] = []
        self.armap_offsets: list[int] = []
        self.has_index = False
        self.fs_dir: str | None = None    # where thin members live, if not beside `name`
        self._members: dict[int, ArchiveMember] = {}
        self._objects: dict[int, object] = {}
        self._read_special_members()

    @classmethod
    def from_path(cls, path: str | Path, name: str | None = None) -> "Archive":
        return cls(read_input(path, name=name), name or str(path))

    # -- headers ------------------------------------------------------------------------------
    def _header(self, offset: int) -> tuple[str, int]:
        """(raw name field, data size) of the member header at `offset`."""
        end = offset + AR_HDR_SIZE
        if end > len(self.data):
            raise InputError(self.name, f"truncated member header ({len(self.data) - offset} "
                             f"bytes, expected {AR_HDR_SIZE})", offset)
        hdr = self.data[offset:end]
        f0, f1 = _FIELD["ar_fmag"]
        if hdr[f0:f1] != AR_FMAG:
            raise InputError(self.name, "bad member header: expected '`\\n' terminator", offset + f0)
        s0, s1 = _FIELD["ar_size"]
        raw_size = hdr[s0:s1].strip()
        if not raw_size.isdigit():
            raise InputError(self.name, f"bad member size field {raw_size!r}", offset + s0)
        n0, n1 = _FIELD["ar_name"]
        return hdr[n0:n1].decode("latin-1").rstrip(" "), int(raw_size)

    def _stored_size(self, name: str, size: int) -> int:
        """Bytes of data following the header: thin archives store only the special members."""
        if self.thin and name not in ("/", "//", "/SYM64/"):
            return 0
        return size

    def _checked_header(self, offset: int) -> tuple[str, int, int]:
        """(raw name field, data size, data start) of a header whose data is in the file."""
        raw, size = self._header(offset)
        start = offset + AR_HDR_SIZE
        if start + self._stored_size(raw, size) > len(self.data):
            raise InputError(self.name, f"member size {size} runs past the end of the archive "
                             f"({len(self.data)} bytes)", offset + 48)
        return raw, size, start

    def _read_special_members(self):
        """Read the armap and long-name table, which GNU ar puts first."""
        offset = 8
        while offset < len(self.data):
            raw, size, start = self._checked_header(offset)
            if raw in (ARMAP32[0], ARMAP64[0]):
                self._read_armap(start, size, ARMAP32[1] if raw == "/" else ARMAP64[1])
            elif raw == LONG_NAMES:
                self._long_names = self.data[start:start + size]
            else:
                return
            offset = start + size + (size & 1)

    def _read_armap(self, start: int, size: int, word: str):
        width = struct.calcsize(word)
        if size < width:
            raise InputError(self.name, "truncated archive symbol index", start)
        count = struct.unpack_from(word, self.data, start)[0]
        names_at = start + width * (1 + count)
        if names_at > start + size:
            raise InputError(self.name, f"archive symbol index claims {count} entries, more than "
                             f"its {size} bytes hold", start)
        offsets = struct.unpack_from(f"{word[0]}{count}{word[1]}", self.data, start + width)
        # decoded whole, then split: a NUL byte is never part of a UTF-8 sequence, so each
        # name decodes as it would alone
        names = self.data[names_at:start + size].decode("utf-8", "replace").split("\0")
        if len(names) < count:
            raise InputError(self.name, f"archive symbol index has {len(names)} names for "
                             f"{count} entries", names_at)
        self.has_index = True
        self.armap_names = names[:count]
        self.armap_offsets = list(offsets)

    # -- members --------------------------------------------------------------------------------
    def _member_name(self, raw: str, offset: int) -> str:
        if raw.startswith("/") and raw[1:].isdigit():
            at = int(raw[1:])
            if at >= len(self._long_names):
                raise InputError(self.name, f"long name offset {at} out of range (name table "
                                 f"has {len(self._long_names)} bytes)", offset)
            end = self._long_names.find(b"\n", at)
            raw = self._long_names[at:end if end >= 0 else None].decode("utf-8", "replace")
        return raw[:-1] if raw.endswith("/") else raw

    def member(self, offset: int) -> ArchiveMember:
        """The member whose header starts at `offset` (an armap target)."""
        hit = self._members.get(offset)
        if hit is None:
            if offset < 8 or offset >= len(self.data):
                raise InputError(self.name, f"archive symbol index points at {offset}, outside "
                                 f"the archive ({len(self.data)} bytes)", offset)
            raw, size, start = self._checked_header(offset)
            hit = ArchiveMember(offset, self._member_name(raw, offset), start, size)
            self._members[offset] = hit
        return hit

    def members(self) -> list[ArchiveMember]:
        """Every ordinary member in file order (for --whole-archive)."""
        out, offset = [], 8
        while offset < len(self.data):
            raw, size = self._header(offset)
            if raw not in ("/", "//", "/SYM64/"):
                out.append(self.member(offset))
            offset += AR_HDR_SIZE + self._stored_size(raw, size)
            offset += offset & 1
        return out

    def display_name(self, m: ArchiveMember) -> str:
        """How GNU ld names the member in maps and diagnostics (ldmain.c add_archive_element)."""
        if self.thin:
            return self.thin_path(m)
        return f"{self.name}({m.name})"

    def thin_path(self, m: ArchiveMember) -> str:
        base = os.path.dirname(self.name)
        return os.path.join(base, m.name) if base else m.name

    def member_bytes(self, m: ArchiveMember) -> bytes:
        if not self.thin:
            return self.data[m.data_start:m.data_start + m.size]
        where = os.path.join(self.fs_dir, m.name) if self.fs_dir is not None else self.thin_path(m)
        try:
            if not stat.S_ISREG(os.stat(where).st_mode):     # /dev/zero would never end
                raise InputError(self.name, f"thin archive member {self.thin_path(m)} is not a "
                                 f"regular file", m.offset)
            return Path(where).read_bytes()
        except (OSError, ValueError):
            raise InputError(self.name, f"thin archive member {self.thin_path(m)} cannot be read",
                             m.offset) from None

    def object(self, offset: int):
        """The parsed relocatable object of the member at `offset`, parsed on first use."""
        obj = self._objects.get(offset)
        if obj is None:
            m = self.member(offset)
            obj = ObjectFile.from_bytes(self.member_bytes(m), self.display_name(m))
            self._objects[offset] = obj
        return obj

    @cached_property
    def member_offsets_by_symbol(self) -> dict[str, list[int]]:
        """Symbol → member offsets defining it, in armap order (for explanations)."""
        out: dict[str, list[int]] = {}
        for name, off in zip(self.armap_names, self.armap_offsets):
            out.setdefault(name, []).append(off)
        return out
