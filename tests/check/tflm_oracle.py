"""Independent oracles for the TFLM tests: symbol addresses from arm-none-eabi-nm, and buffer
offsets inside a .tflite from Vela's own flatbuffers classes (not weaklink's reader)."""
from __future__ import annotations

import numpy as np
from ethosu.vela.tflite.Model import Model as VelaModel

from weaklink import toolchain


def nm(elf) -> dict[str, tuple[int, int]]:
    """name -> (address, size) of every sized symbol, as arm-none-eabi-nm -S prints them."""
    out = toolchain.run("nm", ["-S", str(elf)]).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4:
            syms[parts[3]] = (int(parts[0], 16), int(parts[1], 16))
    return syms


def buffer_offsets(tflite: bytes) -> list[dict]:
    """Per ethos-u operator: the byte offsets of the command stream's and the weights' data."""
    m = VelaModel.GetRootAs(tflite, 0)
    sg = m.Subgraphs(0)
    out = []
    for k in range(sg.OperatorsLength()):
        op = sg.Operators(k)
        if m.OperatorCodes(op.OpcodeIndex()).CustomCode() != b"ethos-u":
            continue
        offsets = []
        for j in (0, 1):
            buf = m.Buffers(sg.Tensors(op.Inputs(j)).Buffer())
            offsets.append(buf._tab.Vector(buf._tab.Offset(4)))   # Buffer.data, slot 0
        entries = [op.Inputs(j) for j in range(1, op.InputsLength())] + \
            [op.Outputs(j) for j in range(op.OutputsLength())]
        plan = offline_plan(tflite)
        out.append({"stream": offsets[0], "weights": offsets[1],
                    "sizes": [int(sg.Tensors(t).ShapeAsNumpy().prod()) for t in entries],
                    "offsets": [int(plan[t]) if plan is not None else None for t in entries]})
    return out


def offline_plan(tflite: bytes):
    """The OfflineMemoryAllocation offsets (one per tensor of subgraph 0), read with Vela's
    classes, or None when the model has no such metadata."""
    m = VelaModel.GetRootAs(tflite, 0)
    for k in range(m.MetadataLength()):
        meta = m.Metadata(k)
        if meta.Name() == b"OfflineMemoryAllocation":
            words = np.frombuffer(m.Buffers(meta.Buffer()).DataAsNumpy().tobytes(), dtype="<i4")
            return words[3:3 + words[2]]
    return None
