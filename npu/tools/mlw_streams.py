"""Every mlw weight stream of compiled models, decoded by the emulator and by Vela's codec.

A developer tool (the tests use it; not used at run time)::

    python -m npu.tools.mlw_streams MODEL_OR_DIR...

walks the models (Vela's raw ``.npz``, Vela's ``.tflite``, the ``vela_bin_stream`` blob, or
directories of them), replays each command stream to find every kernel operation's weight
streams (``WEIGHT_BASE/LENGTH`` and, on U85, ``WEIGHT1..3``; U85's fast format is not mlw and
is skipped), follows the DMAs that stage them from region 0 into the scratch regions, and
decodes each stream with :func:`npu.functional.mlw.decode` and with the installed
``ethosu.mlw_codec.decode``. It prints the counts and every disagreement; exit 1 on one.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from npu.emulate.ops import KERNEL_OPS, _dma_op, _kernel_op
from npu.errors import InputError
from npu.functional import mlw
from npu.read.model import load_models

SUFFIXES = (".npz", ".tflite", ".bin")


@dataclass(frozen=True)
class Stream:
    model: str
    op_offset: int                  # command-stream offset of the kernel operation
    core: int
    data: bytes


def _staged(model) -> tuple[list[Stream], int]:
    """(the mlw streams of one command stream, the streams whose bytes cannot be followed)."""
    weights = bytes(model.weight_data or b"")
    shadow: dict[int, dict[int, int]] = {}          # region -> {offset: byte} written by DMA
    regs: dict[str, dict] = {}
    out, lost = [], 0

    def read(region: int, offset: int, length: int) -> bytes | None:
        if region == 0:
            return weights[offset:offset + length] if offset + length <= len(weights) else None
        got = shadow.get(region, {})
        data = [got.get(offset + i) for i in range(length)]
        return None if any(b is None for b in data) else bytes(data)

    for cmd in model.commands:
        if cmd.command.startswith("NPU_SET_"):
            regs[cmd.command] = cmd.fields
        elif cmd.command == "NPU_OP_DMA_START":
            dma = _dma_op(regs, cmd)
            modes = [regs.get(f"NPU_SET_DMA0_{s}_REGION", {}).get("stride_mode", "DMA_STRIDE_MODE_D1")
                     for s in ("SRC", "DST")]
            if dma.src is None or dma.dst is None or any(m != "DMA_STRIDE_MODE_D1" for m in modes):
                continue
            data = read(dma.src.region, dma.src.offset, dma.length)
            if data is not None:
                shadow.setdefault(dma.dst.region, {}).update(
                    zip(range(dma.dst.offset, dma.dst.offset + len(data)), data))
        elif cmd.command in KERNEL_OPS and KERNEL_OPS[cmd.command] in ("CONV", "DEPTHWISE"):
            if regs.get("NPU_SET_WEIGHT_FORMAT", {}).get("weight_format", "") == "WEIGHT_FORMAT_FWD":
                continue
            op = _kernel_op(regs, cmd, None, 0)
            for core, access in enumerate(op.weights):
                if not access.length:
                    continue
                data = read(access.region, access.offset, access.length)
                if data is None:
                    lost += 1
                else:
                    out.append(Stream(model.path or "", cmd.offset, core, data))
    return out, lost


def streams(path: Path) -> tuple[list[Stream], int, int]:
    """(every mlw stream of every ethos-u operator in one file, streams not followed, models)."""
    found, lost = [], 0
    models = load_models(path)
    for model in models:
        s, n = _staged(model)
        found += s
        lost += n
    return found, lost, len(models)


def compare(stream: Stream, codec) -> str | None:
    """None when both decoders give the same values, else what differs."""
    want = np.asarray(codec.decode(bytearray(stream.data)), dtype=np.int64)
    try:
        got = mlw.decode(stream.data)
    except mlw.MlwError as e:
        return f"ours refuses it ({e}); Vela decodes {len(want)} values"
    if len(got) != len(want):
        return f"ours decodes {len(got)} values, Vela {len(want)}"
    bad = np.flatnonzero(got != want)
    return f"{len(bad)} values differ, the first at {bad[0]}" if len(bad) else None


def model_files(paths) -> list[Path]:
    out = []
    for p in map(Path, paths):
        out += sorted(q for q in p.rglob("*") if q.suffix in SUFFIXES) if p.is_dir() else [p]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+", help="model files or directories")
    args = ap.parse_args(argv)
    from ethosu import mlw_codec
    files = models = total = lost = values = 0
    bad = []
    for path in model_files(args.paths):
        try:
            found, n_lost, n_models = streams(path)
        except InputError:
            continue                         # not a compiled model (e.g. a plain .tflite)
        files += 1
        models += n_models
        lost += n_lost
        for s in found:
            total += 1
            why = compare(s, mlw_codec)
            values += len(s.data)
            if why:
                bad.append(f"{s.model} op 0x{s.op_offset:06x} core {s.core}: {why}")
    print(f"{files} files, {models} command streams, {total} mlw streams ({values} bytes), "
          f"{total - len(bad)} equal, {len(bad)} differ, {lost} not followed")
    print(*bad, sep="\n") if bad else None
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
