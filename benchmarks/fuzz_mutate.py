"""Mutations for the fuzz script: generic byte edits, and edits that know the format.

Every mutator is ``(data, rng, interesting) -> bytes`` and uses only ``rng`` for its choices,
so a run is reproducible from its seed. Format-aware edits reach past the first check: an ELF
field set to a huge size, an ar header's size or name rewritten, an npz member replaced with
a valid zip CRC, a number in a text file replaced.
"""
from __future__ import annotations

import io
import re
import struct
import warnings
import zipfile


def interesting_ints(size: int) -> list[int]:
    return [0, 1, 2, 4, 7, 8, 15, 16, 0x7F, 0x80, 0xFF, 0x100, 0xFFFF, 0x10000, 0x7FFFFFFF,
            0x80000000, 0xFFFFFFFF, 0xFFFFFFF0, size, size - 1, size + 1, size // 2, 60, 52, 40]


# -- generic bytes ---------------------------------------------------------------------------
def flip(data, rng, _):
    if not data:
        return data
    b = bytearray(data)
    b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
    return bytes(b)


def set_byte(data, rng, _):
    if not data:
        return data
    b = bytearray(data)
    b[rng.randrange(len(b))] = rng.choice((0, 0xFF, 0x7F, 0x80, 0x20, 0x0A, rng.randrange(256)))
    return bytes(b)


def word(data, rng, interesting):
    if len(data) < 4:
        return data
    at = rng.randrange(len(data) // 4) * 4
    value = rng.choice(interesting) & 0xFFFFFFFF
    return data[:at] + struct.pack(rng.choice(("<I", ">I")), value) + data[at + 4:]


def truncate(data, rng, _):
    return data[:rng.randrange(len(data) + 1)]


def delete_chunk(data, rng, _):
    if not data:
        return data
    at = rng.randrange(len(data))
    return data[:at] + data[at + rng.randrange(1, 64):]


def duplicate_chunk(data, rng, _):
    if not data:
        return data
    at = rng.randrange(len(data))
    chunk = data[at:at + rng.randrange(1, 256)]
    to = rng.randrange(len(data) + 1)
    return data[:to] + chunk + data[to:]


def insert_random(data, rng, _):
    at = rng.randrange(len(data) + 1)
    return data[:at] + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 16))) + data[at:]


BYTES = [("flip", flip), ("byte", set_byte), ("word", word), ("truncate", truncate),
         ("delete", delete_chunk), ("duplicate", duplicate_chunk), ("insert", insert_random)]


# -- ELF: header, section, program and symbol fields -------------------------------------------
_EHDR_FIELDS = [(16, 2), (18, 2), (24, 4), (28, 4), (32, 4), (40, 2), (42, 2), (44, 2), (46, 2),
                (48, 2), (50, 2)]


def elf_field(data, rng, interesting):
    if len(data) < 52 or data[:4] != b"\x7fELF":
        return word(data, rng, interesting)
    phoff, shoff = struct.unpack_from("<II", data, 28)
    phnum, shnum = struct.unpack_from("<H", data, 44)[0], struct.unpack_from("<H", data, 48)[0]
    fields = list(_EHDR_FIELDS)
    fields += [(shoff + 40 * i + 4 * k, 4) for i in range(shnum) for k in range(10)]
    fields += [(phoff + 32 * i + 4 * k, 4) for i in range(phnum) for k in range(8)]
    fields += _symbol_fields(data, shoff, shnum)
    fields = [(at, n) for at, n in fields if at + n <= len(data)]
    at, n = rng.choice(fields)
    value = rng.choice(interesting) & ((1 << (8 * n)) - 1)
    return data[:at] + value.to_bytes(n, "little") + data[at + n:]


def _symbol_fields(data, shoff, shnum):
    for i in range(shnum):
        at = shoff + 40 * i
        if at + 40 > len(data):
            break
        if struct.unpack_from("<I", data, at + 4)[0] == 2:      # SHT_SYMTAB
            off, size = struct.unpack_from("<II", data, at + 16)
            count = min(size // 16, 64)
            return [(off + 16 * j + k, n) for j in range(count)
                    for k, n in ((0, 4), (4, 4), (8, 4), (12, 1), (14, 2))]
    return []


# -- ar archives: header fields, the symbol index, the long-name table -------------------------
def _ar_headers(data):
    at, out = 8, []
    while at + 60 <= len(data) and len(out) < 64:
        out.append(at)
        try:
            size = int(data[at + 48:at + 58].strip() or b"0")
        except ValueError:
            break
        name = data[at:at + 16].strip()
        at += 60 + (0 if data[:8] == b"!<thin>\n" and name not in (b"/", b"//", b"/SYM64/")
                    else size)
        at += at & 1
    return out


def ar_field(data, rng, interesting):
    headers = _ar_headers(data)
    if not headers:
        return word(data, rng, interesting)
    at = rng.choice(headers)
    choice = rng.randrange(5)
    if choice == 0:       # size
        text = str(rng.choice(interesting + [4294967296, 9999999999])).encode()[:10]
        return data[:at + 48] + text.ljust(10) + data[at + 58:]
    if choice == 1:       # name
        name = rng.choice([b"/", b"//", b"/SYM64/", b"/999999", b"/0", b"/-1", b"#1/99999",
                           b"#1/8", b"__.SYMDEF", b"x.o/", b"/" + str(rng.randrange(4096)).encode()])
        return data[:at] + name.ljust(16) + data[at + 16:]
    if choice == 2:       # terminator
        return data[:at + 58] + b"x\n" + data[at + 60:]
    if choice == 3:       # first word of the data: the symbol-index count
        value = rng.choice(interesting) & 0xFFFFFFFF
        return data[:at + 60] + struct.pack(">I", value) + data[at + 64:]
    return word(data, rng, interesting)


# -- npz: zip members rewritten with valid CRCs ------------------------------------------------
def npz_member(data, rng, interesting):
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            members = [(i.filename, z.read(i)) for i in z.infolist()]
    except Exception:
        return flip(data, rng, interesting)
    if not members:
        return data
    k = rng.randrange(len(members))
    name, body = members[k]
    choice = rng.randrange(6)
    if choice == 0:
        del members[k]
    elif choice == 1:
        members.append((rng.choice(["extra.npy", "scratch_fast_region.npy", name]), body))
    elif choice == 2:     # the npy header (magic, version, header length, dict text)
        head = bytearray(body[:128])
        if head:
            mutate = rng.choice((flip, set_byte, _dict_edit))
            head = mutate(bytes(head), rng, interesting)
        members[k] = (name, bytes(head) + body[128:])
    elif choice == 3:     # the array data
        members[k] = (name, body[:128] + rng.choice(BYTES)[1](body[128:], rng, interesting))
    elif choice == 4:     # another member's content under this name (wrong dtype or shape)
        members[k] = (name, rng.choice(members)[1])
    else:
        members[k] = (name, body[:rng.randrange(len(body) + 1)])
    out = io.BytesIO()
    warnings.simplefilter("ignore", UserWarning)       # a duplicate member name is the point
    with zipfile.ZipFile(out, "w", rng.choice((zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED))) as z:
        for n, b in members:
            z.writestr(n, b)
    return out.getvalue()


def _dict_edit(head, rng, interesting):
    text = head.decode("latin-1")
    edits = [("'descr': '", "'descr': '|O"), ("'<u1'", "'<f8'"), ("'|u1'", "'<c16'"),
             ("(", "(99999999999, "), ("False", "True"), ("'shape': (", "'shape': (-1, "),
             ("}", "]"), ("'descr'", "'desc'"), ("(", "((")]
    old, new = rng.choice(edits)
    return text.replace(old, new, 1).encode("latin-1")


# -- text: map files, TOML, vela.ini, linker scripts -------------------------------------------
_NUMBER = re.compile(rb"0x[0-9a-fA-F]+|\d+")


def text_line(data, rng, _):
    lines = data.split(b"\n")
    i = rng.randrange(len(lines))
    op = rng.randrange(4)
    if op == 0:
        del lines[i]
    elif op == 1:
        lines.insert(rng.randrange(len(lines) + 1), lines[i])
    elif op == 2:
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    else:
        lines[i] = lines[i][:rng.randrange(len(lines[i]) + 1)]
    return b"\n".join(lines)


def text_number(data, rng, interesting):
    hits = list(_NUMBER.finditer(data))
    if not hits:
        return text_char(data, rng, interesting)
    m = rng.choice(hits)
    new = rng.choice([b"0", b"-1", b"0xffffffffffffffff", b"99999999999999999999", b"0x",
                      b"1e309", b"nan", str(rng.choice(interesting)).encode(), hex(rng.choice(interesting)).encode()])
    return data[:m.start()] + new + data[m.end():]


def text_char(data, rng, _):
    at = rng.randrange(len(data) + 1)
    ch = rng.choice([b"=", b"[", b"]", b"{", b"}", b"(", b")", b'"', b"'", b"\\", b";", b"*", b"\0",
                     b"\xff", "\u00e9".encode(), b"\n", b"#", b" ", b":", b".", b","])
    return data[:at] + ch + data[at + rng.randrange(2):]


def grow_past_map(data, rng, _):
    """Pad the file to 1 MiB or more, so that weaklink.read.elf maps it instead of reading it
    (MAP_FROM): the mutant runs the mapped path with the same contents."""
    from weaklink.read.elf import MAP_FROM

    room = max(MAP_FROM - len(data), 0) + rng.randrange(4096)
    return data + rng.choice((bytes(room), rng.randbytes(room)))


TEXT = [("line", text_line), ("number", text_number), ("char", text_char)]
ELF = BYTES + [("elf-field", elf_field)] * 4 + [("grow-past-map", grow_past_map)]

MUTATORS = {
    "elf": ELF,
    # images of 1 MiB or more (mapped): the header and table edits, not bytes of the pools
    "large-elf": [("elf-field", elf_field)] * 6 + BYTES,
    "large-elf-u55": [("elf-field", elf_field)] * 6 + BYTES,
    "object": BYTES + [("elf-field", elf_field)] * 4,
    "archive": BYTES + [("ar-field", ar_field)] * 3 + [("elf-field", elf_field)],
    "npz": BYTES + [("npz-member", npz_member)] * 7,
    "blob": BYTES + [("word", word)] * 3,
    "tflite": BYTES + [("word", word)] * 3,
    "functional": BYTES + [("word", word)] * 3 + [("npz-member", npz_member)] * 3,
    "functional-u85": BYTES + [("word", word)] * 3,
    "map": TEXT * 3 + BYTES,
    "lld-map": TEXT * 3 + BYTES,
    "binding": TEXT * 3 + BYTES,
    "vela.ini": TEXT * 3 + BYTES,
    "script": TEXT * 3 + BYTES,
}
