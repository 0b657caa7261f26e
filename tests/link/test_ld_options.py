"""GNU ld 2.40's option table (weaklink/data/gnu_ld_options.txt) against the installed ld, the
parser over every row, the options that decide how unresolved symbols are reported, and
@FILE response files read as ld reads them."""
from __future__ import annotations

import os
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

from weaklink import toolchain
from weaklink.errors import UsageError
from weaklink.resolve import cmdline, ldoptions, response_files
from weaklink.resolve.gnu.oracle import differences

# A value for each option whose value the model reads; any word does for the rest.
VALUES = {"--defsym": "s=1", "--unresolved-symbols": "report-all", "-z start-stop-visibility":
          "hidden", "--sort-section": "alignment", "--orphan-handling": "place",
          "--target2": "rel", "--vfp11-denorm-fix": "scalar", "--compress-debug-sections": "none",
          "--ctf-share-types": "share-unconflicted", "--hash-style": "sysv", "-a": "archive",
          "--stub-group-size": "1", "--hash-size": "31", "--max-cache-size": "4096",
          "--spare-dynamic-tags": "5"}
# ld refuses these without a partner (a group to end, a state to pop)
BEFORE = {"-)": ["-("], "--pop-state": ["--push-state"]}
AFTER = {"-(": ["-)"], "--push-state": ["--pop-state"]}
UNPROBED = {"-R": "its value is an input ld opens (-t lists it)",
            "--no-define-common": "ld 2.40 refuses it without -shared",
            "-G": "a separate word is taken only when it is a number"}


def spellings(row):
    """Every way ld accepts the row's names: long ones after one dash and after two."""
    for name in row.names:
        if name.startswith("-z "):
            yield ("-z", name[3:])
            continue
        bare = name.lstrip("-").rstrip("=")
        if len(bare) == 1:
            yield (name,)
            continue
        yield ("--" + bare,)
        if not row.two_dashes:
            yield ("-" + bare,)


def _words(row, spelling, value):
    if spelling[0] == "-z":
        return ["-z", spelling[1] + (f"={value}" if row.arity == "value" else "")]
    return [*spelling, value] if row.arity == "value" else [*spelling]


def _rows(*resolutions):
    return [r for r in ldoptions.rows() if r.resolution in resolutions and r.key != "-z"]


@pytest.fixture(scope="module")
def probe_dir(tmp_path_factory):
    if not toolchain.available():
        pytest.skip("arm-none-eabi toolchain not installed")
    d = tmp_path_factory.mktemp("probe")
    (d / "p.s").write_text(".global _start\n.text\n_start: nop\n")
    subprocess.run([toolchain.tool("as"), "p.s", "-o", "probe.o"], cwd=d, check=True)
    return d


def test_every_row_has_the_arity_the_real_ld_gives_it(probe_dir):
    """`ld -t OPTION probe.o`: -t lists probe.o when ld read it as an input, so it is
    listed exactly when the option takes no separate value."""
    def run(row, spelling):
        key = row.names[0] if spelling[0] != "-z" else "-z " + spelling[1]
        words = ["-z", spelling[1] + ("=" + VALUES.get(key, "1") if row.arity == "value" else "")] \
            if spelling[0] == "-z" else list(spelling)
        argv = [toolchain.tool("ld"), "-t", *BEFORE.get(row.key, []), *words, "probe.o",
                *AFTER.get(row.key, []), "-o", os.devnull]
        p = subprocess.run(argv, cwd=probe_dir, capture_output=True, text=True)
        loaded = "probe.o" in p.stdout.splitlines()
        want = row.arity != "value" or spelling[0] == "-z"
        bad = "unrecognized option" in p.stderr or "ambiguous" in p.stderr
        return None if loaded == want and not bad else (words, row.arity, p.stderr[:200])

    jobs = [(r, s) for r in _rows("modelled", "none", "refused") if r.key not in UNPROBED
            for s in spellings(r)]
    with ThreadPoolExecutor(2) as pool:
        wrong = [w for w in pool.map(lambda a: run(*a), jobs) if w]
    assert len(jobs) > 400 and wrong == []


@pytest.mark.parametrize("row", _rows("modelled", "none"), ids=lambda r: r.key)
def test_every_option_is_accepted_and_its_value_is_no_input(row):
    key = row.key
    value = VALUES.get(key, "v.o")
    for spelling in spellings(row):
        forms = [_words(row, spelling, value)]
        if row.arity in ("value", "optional") and spelling[0] != "-z":
            forms.append([f"{spelling[0]}={value}" if len(spelling[0]) > 2
                          else spelling[0] + value])
        for words in forms:
            args = [*BEFORE.get(key, []), *words, "main.o", *AFTER.get(key, [])]
            opts = cmdline.parse(args)
            files = [i.arg for i in cmdline.flat(opts.inputs) if i.kind == "file"]
            assert files == ["main.o"], words
            if row.resolution == "none":
                assert opts.no_effect[-1][0] == " ".join(words)


@pytest.mark.parametrize("row", _rows("refused", "exits"), ids=lambda r: r.key)
def test_options_the_model_does_not_follow_are_refused(row):
    words = _words(row, next(spellings(row)), "v.o")
    with pytest.raises(UsageError, match="not modelled|exits without linking"):
        cmdline.parse([*words, "main.o"])


def test_every_modelled_option_has_an_action():
    assert {r.key for r in _rows("modelled")} | {"-z muldefs", "-z defs", "-z undefs"} \
        == set(cmdline._ACTIONS)


def test_getopt_long_only_spellings():
    parse = cmdline.parse
    assert parse(["-omagic", "m.o"]).output == "magic"              # -o magic, not --omagic
    assert [i.arg for i in parse(["-library", "m.o"]).inputs][0] == "ibrary"   # -l ibrary
    assert parse(["--gc-sec", "m.o"]).gc_sections                     # a unique prefix
    assert parse(["-zmuldefs", "m.o"]).muldefs
    assert parse(["-z", "nosuchkeyword", "m.o"]).no_effect[0][0] == "-z nosuchkeyword"
    with pytest.raises(UsageError, match="ambiguous"):
        parse(["--no-warn", "m.o"])
    with pytest.raises(UsageError, match="unrecognized ld option '--frobnicate'"):
        parse(["--frobnicate"])
    assert [i.arg for i in parse(["--", "-x.o"]).inputs] == ["-x.o"]


UNDEF = ".global _start\n.text\n.thumb\n_start: bl missing\n"
TWICE = ".global tsym\n.text\ntsym: nop\n"


@pytest.mark.parametrize("opts", [
    [], ["--warn-unresolved-symbols"], ["--noinhibit-exec"], ["-w"],
    ["--ignore-unresolved-symbol", "missing"], ["--unresolved-symbols=ignore-all"],
    ["--unresolved-symbols=ignore-in-shared-libs"], ["-z", "undefs"], ["-z", "defs"],
    ["--no-undefined", "-z", "undefs"], ["-z", "undefs", "--unresolved-symbols=report-all"],
    ["--warn-unresolved-symbols", "--error-unresolved-symbols"],
    ["--warn-unresolved-symbols", "--fatal-warnings"], ["-w", "--fatal-warnings"],
    ["--unresolved-symbols=ignore-all", "--warn-unresolved-symbols"]])
def test_reporting_options_agree_with_the_real_ld(sc, opts):
    """Each was in the ignored list before, where the model failed links ld lets through."""
    sc.asm("u.o", UNDEF)
    sc.asm("t.o", TWICE)
    sc.asm("t2.o", TWICE)
    for inputs in (["u.o"], ["u.o", "t.o", "t2.o"]):
        args = [*opts, *inputs]
        model, real = sc.link(args, cref=True), sc.ld(args)
        assert differences(model, real, args=args) == [], args
        warned = "warning: undefined reference" in real.stderr
        assert warned == any("undefined reference" in w.message for w in model.warnings)


RSP_NAMES = ["a b.o", "c'd.o", 'e"f.o', "g\\h.o", "plain.o"]


def test_response_files_are_read_as_ld_reads_them(sc):
    """Quotes, backslashes and a nested @FILE: the model's inputs are the files ld opens."""
    for i, name in enumerate(RSP_NAMES):
        sc.asm(name, f".global s{i}\n.text\ns{i}: nop\n" + (
            ".global _start\n_start: nop\n" if i == 0 else ""))
    (sc.root / "inner.rsp").write_text("'g\\\\h.o'\n\tplain.o\n")
    (sc.root / "outer.rsp").write_text('"a b.o" c\\\'d.o \'e"f.o\' @inner.rsp\n')
    opts = cmdline.parse(["@outer.rsp"], cwd=str(sc.root))
    assert [i.arg for i in opts.inputs] == RSP_NAMES
    p = subprocess.run([toolchain.tool("ld"), "-t", "@outer.rsp", "-o", os.devnull],
                       cwd=sc.root, capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout.splitlines() == RSP_NAMES
    assert response_files.split("x '' y") == ["x", "", "y"]
    assert cmdline.parse(["@nothere.rsp"]).inputs[0].arg == "@nothere.rsp"   # as ld does


def test_a_response_file_that_names_itself_is_one_line(tmp_path):
    (tmp_path / "loop.rsp").write_text("@loop.rsp\n")
    with pytest.raises(UsageError, match="nested more than"):
        response_files.expand(["@loop.rsp"], str(tmp_path))
