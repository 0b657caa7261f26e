"""The read-only region (region 0) as far as the command stream reads it: weight and scale
streams and DMA sources in region 0. A container that declares a shorter region 0 than the
stream reads (a blob whose weight bytes were cut, e.g. by numpy's `item()`, which drops a 0-d
bytes array's trailing NULs) is read on to the stream's end: the NPU reads those bytes.
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
