"""Line-number programs (.debug_line, DWARF 2 to 5, section 6.2): a program's header (its
directory and file tables) and its rows, read where a unit's DW_AT_stmt_list points.

- `read_header(...)`: the version, the directories and the files, (name, directory index), as
  the header lists them: DWARF 5 counts both from 0 (entry 0 is the unit's own directory and
  file), DWARF 2 to 4 from 1 (directory 0 is the compilation directory);
- `file_path(header, index, comp_dir)`: file `index` as a path;
- `sequences(header)`: the rows of each sequence, with the number of DW_LNE_set_address it
  holds (a relocatable object ties a sequence to its section through that operand's
  relocation).
"""
from __future__ import annotations

import os
import struct
from collections import namedtuple

from weaklink.read.dwarf.forms import sizes, skip, sleb, uleb
from weaklink.read.dwarf.structs import (CONSTANTS, DW_FORM_line_strp, DW_FORM_strp,
                                         DW_FORM_string, DW_FORM_udata, DW_LNCT_directory_index,
                                         DW_LNCT_path, DW_LNE_end_sequence,
                                         DW_LNE_set_address, DW_LNS_advance_line,
                                         DW_LNS_advance_pc, DW_LNS_const_add_pc, DW_LNS_copy,
                                         DW_LNS_fixed_advance_pc, DW_LNS_set_file)
from weaklink.read.dwarf.units import cstring

# dirs: [str]; files: [(name, directory index)]; program, end: the opcodes' span; the rest:
# the header fields the opcodes need
LineHeader = namedtuple("LineHeader", "version dirs files program end min_inst line_base "
                                      "line_range opcode_base std_lengths data")
# rows: [(address, file, line)]; end: the address after the sequence
Sequence = namedtuple("Sequence", "set_addresses rows end")


def read_header(data: bytes, offset: int, strs: bytes, line_strs: bytes) -> LineHeader:
    """The header of the line-number program at `offset`. IndexError, ValueError or
    struct.error when it is damaged; ValueError for a version or a form it does not know."""
    length, = struct.unpack_from("<I", data, offset)
    pos, off = offset + 4, 4
    if length == 0xFFFFFFFF:
        (length,), pos, off = struct.unpack_from("<Q", data, pos), pos + 8, 8
    end = min(pos + length, len(data))
    version, = struct.unpack_from("<H", data, pos)
    if not 2 <= version <= 5:
        raise ValueError(f"line-number program version {version}")
    pos += 2
    address_size = data[pos] if version >= 5 else 4
    if version >= 5:
        pos += 2                                  # address size, segment selector size
    header_length = int.from_bytes(data[pos:pos + off], "little")
    pos += off
    program = pos + header_length
    min_inst = data[pos]
    pos += 2 if version >= 4 else 1               # maximum_operations_per_instruction
    line_base, line_range, opcode_base = struct.unpack_from("<bBB", data, pos + 1)
    pos += 4                                      # after default_is_stmt and those three
    std_lengths = bytes(data[pos:pos + opcode_base - 1])
    pos += opcode_base - 1
    if version >= 5:
        fixed = sizes(address_size, version, off)
        dirs, pos = _entries(data, pos, fixed, strs, line_strs)
        files, pos = _entries(data, pos, fixed, strs, line_strs)
        dirs = [name for name, _ in dirs]
    else:
        dirs, files = [], []
        while data[pos]:
            dirs.append(cstring(data, pos))
            pos = data.index(b"\0", pos) + 1
        pos += 1
        while data[pos]:
            name = cstring(data, pos)
            d, pos = uleb(data, data.index(b"\0", pos) + 1)
            pos = uleb(data, uleb(data, pos)[1])[1]       # modification time, length
            files.append((name, d))
    return LineHeader(version, dirs, files, program, end, min_inst, line_base, line_range,
                      opcode_base, std_lengths, data)


def _entries(data: bytes, pos: int, fixed: dict, strs: bytes, line_strs: bytes):
    """DWARF 5 directory or file entries: a format ((content type, form) pairs), a count,
    then the entries; (path, directory index) of each."""
    count = data[pos]
    pos += 1
    formats = []
    for _ in range(count):
        kind, pos = uleb(data, pos)
        form, pos = uleb(data, pos)
        formats.append((kind, form))
    n, pos = uleb(data, pos)
    out = []
    for _ in range(n):
        path, index = "", 0
        for kind, form in formats:
            if kind == DW_LNCT_path:
                path = _string(data, pos, form, fixed, strs, line_strs)
            elif kind == DW_LNCT_directory_index:
                index = uleb(data, pos)[0] if form == DW_FORM_udata else \
                    int.from_bytes(data[pos:pos + CONSTANTS.get(form, 0)], "little")
            end = skip(data, form, pos, fixed)
            if end is None:
                raise ValueError(f"line table entry form {form:#x}")
            pos = end
        out.append((path, index))
    return out, pos


def _string(data, pos, form, fixed, strs, line_strs) -> str:
    if form == DW_FORM_string:
        return cstring(data, pos)
    if form in (DW_FORM_line_strp, DW_FORM_strp):
        at = int.from_bytes(data[pos:pos + fixed[form]], "little")
        return cstring(line_strs if form == DW_FORM_line_strp else strs, at)
    raise ValueError(f"line table path form {form:#x}")


def file_path(h: LineHeader, index: int, comp_dir: str) -> str | None:
    """File `index` of the table as a path joined to its directory, and to the unit's
    DW_AT_comp_dir when relative; None when the table has no such file. File numbers count
    from 1 up to DWARF 4, from 0 in DWARF 5 (DWARF 5 section 6.2.4, item 20)."""
    k = index if h.version >= 5 else index - 1
    if not 0 <= k < len(h.files):
        return None
    name, d = h.files[k]
    d = d if h.version >= 5 else d - 1
    folder = h.dirs[d] if 0 <= d < len(h.dirs) else comp_dir
    where = os.path.join(folder, name) if folder else name
    if not os.path.isabs(where) and comp_dir:
        where = os.path.join(comp_dir, where)
    return os.path.normpath(where)


def sequences(h: LineHeader):
    """Each sequence of the program: its rows (address, file, line) up to DW_LNE_end_sequence,
    the address that ends it, and how many DW_LNE_set_address it holds. DWARF 5 section
    6.2.5: a special opcode advances the address by (adjusted opcode // line_range) *
    minimum_instruction_length and the line by line_base + adjusted opcode % line_range,
    then appends a row. IndexError on a program that runs past its section."""
    data, pos, end = h.data, h.program, h.end
    base, line_range, min_inst = h.opcode_base, h.line_range or 1, h.min_inst
    address, file, line, sets, rows = 0, 1, 1, 0, []
    while pos < end:
        op = data[pos]
        pos += 1
        if op >= base:                                    # special opcode
            adjusted = op - base
            address += adjusted // line_range * min_inst
            line += h.line_base + adjusted % line_range
            rows.append((address, file, line))
        elif op == 0:                                     # extended opcode
            size, pos = uleb(data, pos)
            sub = data[pos] if size else None
            if sub == DW_LNE_end_sequence:
                yield Sequence(sets, rows, address)
                address, file, line, sets, rows = 0, 1, 1, 0, []
            elif sub == DW_LNE_set_address:
                address = int.from_bytes(data[pos + 1:pos + size], "little")
                sets += 1
            pos += size
        elif op == DW_LNS_copy:
            rows.append((address, file, line))
        elif op == DW_LNS_advance_pc:
            step, pos = uleb(data, pos)
            address += step * min_inst
        elif op == DW_LNS_advance_line:
            step, pos = sleb(data, pos)
            line += step
        elif op == DW_LNS_set_file:
            file, pos = uleb(data, pos)
        elif op == DW_LNS_const_add_pc:
            address += (255 - base) // line_range * min_inst
        elif op == DW_LNS_fixed_advance_pc:
            address += int.from_bytes(data[pos:pos + 2], "little")
            pos += 2
        else:                                             # the others' ULEB operands
            for _ in range(h.std_lengths[op - 1]):
                pos = uleb(data, pos)[1]
