"""`--model FILE@ADDR`: a .tflite a TFLM image reads from outside itself (flashed on its own,
read in place at a constant address), placed where the code reads it."""
from __future__ import annotations

from pathlib import Path

from weaklink.bind import tflm
from weaklink.bind.tflmcalls import calls_of
from weaklink.errors import InputError


def split_model_option(value) -> tuple[str | None, int | None]:
    """FILE@ADDR -> (FILE, ADDR); a FILE without an address -> (FILE, None)."""
    if value is None:
        return None, None
    text = str(value)
    head, at, tail = text.rpartition("@")
    if at and head:
        try:
            return head, int(tail, 0)
        except ValueError:
            raise InputError(text, f"--model FILE@ADDR: {tail!r} is not an address") from None
    return text, None


def place_model(image, rules, path: str, address: int | None):
    """The model a TFLM image reads from outside itself; None when the image embeds its models
    and no address is given (then --model only replaces the stream that is emulated)."""
    if address is None and tflm.find_models(image, rules):
        return None
    data = Path(path).read_bytes() if Path(path).is_file() else None
    if data is None or data[4:8] != tflm.IDENTIFIER:
        if address is None:
            return None
        raise InputError(path, "--model FILE@ADDR: expected a .tflite (TFL3 flatbuffer)")
    how = f"--model {Path(path).name}@{address:#x}" if address is not None else ""
    if address is None:
        found = calls_of(image).model_addresses()
        if len(found) != 1:
            raise InputError(path, "the image embeds no model and the code does not show one "
                             "address it reads it from: give --model FILE@ADDR")
        address, where = found[0]
        how = f"--model {Path(path).name}, placed where the code reads the model: {where}"
    return tflm.placed_model(data, address, path, how)
