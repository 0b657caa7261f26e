"""The mlw decoder's helper process: reads length-prefixed streams on stdin, answers with the
decoded values (or the codec's error) on stdout.

``ethosu.mlw_codec.decode`` ends the whole process (``exit(1)`` in ``mlw_decode.c``,
``bitbuf_getbit``) when a stream stops inside its data. A stream read from emulated memory may
be truncated or overwritten, so the decoder runs here, where dying costs one stream: the parent
(:mod:`npu.functional.mlw`) sees the pipe close and reports the stream as undecodable.

Run by path with ``python -I``: it imports only the standard library and the codec.
"""
import os
import struct
import sys
from array import array


def _read(stream, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = stream.read(n - len(data))
        if not chunk:
            return data
        data += chunk
    return data


def main() -> int:
    from ethosu import mlw_codec
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    # The codec prints its complaint before exiting: keep it off the answer pipe.
    answers = os.fdopen(os.dup(out.fileno()), "wb")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    while True:
        head = _read(inp, 4)
        if len(head) < 4:
            return 0
        data = _read(inp, struct.unpack("<I", head)[0])
        try:
            values = array("h", mlw_codec.decode(bytearray(data)))
            if sys.byteorder != "little":
                values.byteswap()
            status, payload = 0, values.tobytes()
        except Exception as e:          # the codec raises ValueError/RuntimeError on some bad streams
            status, payload = 1, str(e).encode("utf-8", "replace")
        answers.write(struct.pack("<BI", status, len(payload)) + payload)
        answers.flush()


if __name__ == "__main__":
    sys.exit(main())
