"""The README's command examples show what the commands print: each shown line is a line of
the real output, in order; a line `…` stands for lines left out, and a `…` inside a line for
text left out of that line."""
from __future__ import annotations

import re
import shutil

import pytest

from weaklink.cachedir import REPO
from weaklink.cli import main
from weaklink.run.qemu import QEMU


def _example(heading: str) -> tuple[list[str], str]:
    """The command (argv) and the shown output of the first example under `heading`."""
    section = (REPO / "README.md").read_text().split(heading, 1)[1]
    command, shown = re.findall(r"```(?:sh)?\n(.*?)```", section, re.S)[:2]
    return command.replace("\\\n", " ").split(), shown


def _matches(shown_line: str, line: str) -> bool:
    if "…" not in shown_line:
        return shown_line == line
    pieces = shown_line.split("…")
    if not line.startswith(pieces[0]):
        return False
    at = len(pieces[0])
    for piece in pieces[1:]:
        at = line.find(piece, at)
        if at < 0:
            return False
        at += len(piece)
    return True


def assert_shown(shown: str, output: str) -> None:
    lines = iter(output.splitlines())
    for want in shown.splitlines():
        if want.strip() == "…":
            continue
        assert any(_matches(want, line) for line in lines), f"not in the output, in order: {want!r}"


def test_matching_rules():
    assert_shown("a\n…\nc … e", "a\nb\nc d e\n")
    with pytest.raises(AssertionError):
        assert_shown("c\na", "a\nc\n")


def _run(argv, cwd, capsys, monkeypatch, code):
    monkeypatch.chdir(cwd)
    assert main(argv[1:]) == code
    return capsys.readouterr().out


def test_analyze_example(firmware, capsys, monkeypatch):
    argv, shown = _example("## `weaklink analyze`")
    out = _run(argv, firmware["weak-override-in-archive-u85"].elf.parent, capsys, monkeypatch, 0)
    assert_shown(shown, out)


def test_check_example(firmware, capsys, monkeypatch):
    argv, shown = _example("## `weaklink check`")
    out = _run(argv, firmware["weak-custom-u85"].elf.parent, capsys, monkeypatch, 1)
    assert_shown(shown, out)


def test_run_example(firmware, capsys, monkeypatch):
    if shutil.which(QEMU) is None:
        pytest.skip(f"{QEMU} not installed (apt-get install qemu-system-arm)")
    argv, shown = _example("## `weaklink run`")
    elf = firmware["weak-custom-u55"].elf
    argv = [str(elf) if a.endswith("weak-custom-u55.elf") else a for a in argv]
    shown = shown.replace(".cache/fixtures/u55/elf/weak-custom-u55.elf", str(elf))
    out = _run(argv, REPO, capsys, monkeypatch, 0)
    assert_shown(shown, out)
