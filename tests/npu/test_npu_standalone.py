"""npu stands alone: it imports nothing from weaklink, and its CLI works without it."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# A fresh interpreter in which any `import weaklink…` fails, as on a machine with npu alone.
BLOCKER = """
import sys
class _NoWeaklink:
    def find_spec(self, name, path=None, target=None):
        if name == "weaklink" or name.startswith("weaklink."):
            raise ImportError(f"weaklink is blocked in this test ({name})")
        return None
sys.meta_path.insert(0, _NoWeaklink())
sys.path.insert(0, {repo!r})
import npu, npu.api, npu.cli, npu.plot
from npu.cli import main
status = main(sys.argv[1:])
assert not [m for m in sys.modules if m == "weaklink" or m.startswith("weaklink.")]
sys.exit(status)
"""


def _npu_without_weaklink(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", BLOCKER.replace("{repo!r}", repr(str(REPO))), *argv],
                          capture_output=True, text=True, timeout=120)


def test_npu_decode_runs_with_weaklink_unimportable(u85_tiny):
    proc = _npu_without_weaklink("decode", str(u85_tiny.blob))
    assert proc.returncode == 0, proc.stderr
    assert "NPU_OP_STOP" in proc.stdout and proc.stderr == ""


def test_npu_bad_input_is_one_line_exit_2_without_weaklink(tmp_path):
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"PK\x03\x04" + b"\x00" * 40)
    proc = _npu_without_weaklink("decode", str(bad))
    assert proc.returncode == 2
    assert proc.stdout == "" and len(proc.stderr.splitlines()) == 1
    assert proc.stderr.startswith(f"npu: error: {bad}: ")


def test_weaklink_and_npu_share_one_input_error():
    import npu.errors
    import weaklink.errors
    assert weaklink.errors.InputError is npu.errors.InputError
