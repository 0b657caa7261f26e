"""The read-only region (region 0) as far as the command stream reads it.

Vela 5.2.0 leaves the trailing zero bytes of the read-only area out of its raw output (the npz
``weight_data``, and the vela_bin_stream blob made from it): every U85 compile of the fixture and
test networks ends its ``weight_data`` with a nonzero byte, and in 40 of the 373 compiles of this
repository's networks (all U85) the weight stream at the end of the area (the fast format's
zero-padded tail, or a default stream's last 16-byte block) is programmed past it, by up to 828
bytes. The NPU reads those bytes: they are the encoder's zero padding, not an overrun; the weight
decode test (tests/npu/test_functional_u85.py) reads them as zeros and meets the model's weights.
"""
from __future__ import annotations

STREAMS = (("WEIGHT", ("", "1", "2", "3")), ("SCALE", ("",)))


def read_only_end(commands) -> int:
    """The furthest byte of region 0 the stream reads: weight and scale streams, DMA sources."""
    regs: dict[str, dict] = {}
    end = 0
    for cmd in commands:
        name = cmd.command
        if name.startswith("NPU_SET_"):
            regs[name] = cmd.fields
        elif name in ("NPU_OP_CONV", "NPU_OP_DEPTHWISE"):
            for stream, suffixes in STREAMS:
                if regs.get(f"NPU_SET_{stream}_REGION", {}).get("region", 0) != 0:
                    continue
                for sfx in suffixes:
                    length = regs.get(f"NPU_SET_{stream}{sfx}_LENGTH", {}).get("length", 0)
                    if length:
                        end = max(end, regs.get(f"NPU_SET_{stream}{sfx}_BASE", {}).get("addr", 0) + length)
        elif name == "NPU_OP_DMA_START" and regs.get("NPU_SET_DMA0_SRC_REGION", {}).get("region", 0) == 0:
            length = regs.get("NPU_SET_DMA0_LEN", {})
            end = max(end, regs.get("NPU_SET_DMA0_SRC", {}).get("addr", 0) + length.get("addr", length.get("length", 0)))
    return end


def read_only_size(model) -> int:
    """Region 0's size with the dropped zeros: the weight data, or further when the stream reads
    on from a stream that starts inside it."""
    return max(model.region_sizes.get(0, 0), len(model.weight_data or b""), read_only_end(model.commands))
