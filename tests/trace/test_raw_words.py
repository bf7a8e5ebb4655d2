"""The bulk reading of `seq`/`sum` lines (cachefit.trace.raw_words, issue 26): exact values
of canonical lines, one Access per distinct word, and for lines not in the canonical form
the same result or the same error as the word-by-word parser of cachefit.trace.raw_trace."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from cachefit.errors import UserError
from cachefit.model.profile import Access
from cachefit.trace import raw_trace
from cachefit.trace.raw_trace import RawSequence, parse_raw
from cachefit.trace.raw_words import WordTable

HEAD = "cachefit-raw 2\npid 1\ninvocations 3\nrecorded 9\ntype 0 obj\nentry 0 3 op\n"


def _raw(tmp_path: Path, lines: str, name: str = "cachefit-1.raw") -> Path:
    path = tmp_path / name
    path.write_bytes((HEAD + lines + "end\n").encode())
    return path


def test_canonical_lines_exact_values(tmp_path: Path) -> None:
    raw = parse_raw(_raw(tmp_path, "seq 0 0 2 3 0:0:4:r 1:8:8:w 0:0:4:r\n"
                                   "sum 0 -1 1 3 0:0:4:r:620 0:5944:8:w:3 2:16:1:r:12345678\n"))
    assert raw.sequences == [
        RawSequence(0, 0, 2, (Access(0, 0, 4, "r"), Access(1, 8, 8, "w"),
                              Access(0, 0, 4, "r")), None),
        RawSequence(0, -1, 1, (Access(0, 0, 4, "r"), Access(0, 5944, 8, "w"),
                               Access(2, 16, 1, "r")), (620, 3, 12345678)),
    ]
    seq, summary = raw.sequences
    # one Access per distinct word in the file, a literal's and a summary's alike
    assert seq.accesses[0] is seq.accesses[2] is summary.accesses[0]


def test_table_refuses_what_is_not_canonical() -> None:
    table = WordTable()
    assert table.sequence("0 0 1 2 0:0:4:r 0:4:4:w", False) is not None
    for rest, summary in [
        ("0 0 1 2 0:0:4:r  0:4:4:w", False),      # two spaces
        ("0 0 1 2 0:0:4:r\t0:4:4:w", False),      # a tab
        ("0 0 1 1 0:0:4:x", False),               # no mode
        ("0 0 1 0", False),                       # no words (the word-by-word parser reads it)
        ("0 0 1 1 0:0:4:r:05", True),             # JSON has no leading zero
        ("0 0 1 1 0:0:4:r:+5", True),
        ("0 0 1 1 0:0:4:r:5,6", True),            # one token, two JSON numbers
        ("0 0 1 1 0:0:4:r:1e3", True),
        ("0 0 1 1 0:0:4:r:5\r", True),
        ("0 0 1 2 0:0:4:r:5", True),              # fewer words than said
    ]:
        assert table.sequence(rest, summary) is None, rest


@pytest.mark.parametrize("line, expected", [
    ("seq 0 0 2  2 0:0:4:r\t0:4:4:w \n",
     RawSequence(0, 0, 2, (Access(0, 0, 4, "r"), Access(0, 4, 4, "w")), None)),
    ("seq 0 0 1 1 007:+8:1_6:w\n", RawSequence(0, 0, 1, (Access(7, 8, 16, "w"),), None)),
    ("sum 0 0 1 2 0:0:4:r:05 0:4:4:w:-3\n",
     RawSequence(0, 0, 1, (Access(0, 0, 4, "r"), Access(0, 4, 4, "w")), (5, -3))),
    ("sum 0 0 1 1 0:0:4:r:7\t\r\n", RawSequence(0, 0, 1, (Access(0, 0, 4, "r"),), (7,))),
    ("seq 0 0 4 0\n", RawSequence(0, 0, 4, (), None)),
])
def test_other_forms_read_word_by_word(tmp_path: Path, line: str,
                                       expected: RawSequence) -> None:
    assert parse_raw(_raw(tmp_path, line)).sequences == [expected]


@pytest.mark.parametrize("line, message", [
    ("seq 0 0 2 3 0:0:4:r 0:4:4:w\n", "sequence says 3 accesses, has 2"),
    ("sum 0 0 1 1 0:0:4:r:5 0:4:4:w:6\n", "sequence says 1 accesses, has 2"),
    ("seq 0 0 1 1 0:0:4:x\n", "bad access mode in 0:0:4:x"),
    ("sum 0 0 1 1 0:0:4:r\n", "invalid literal for int() with base 10: 'r'"),
    ("sum 0 0 1 1 0:0:4:r:5,6\n", "invalid literal for int() with base 10: '5,6'"),
    ("seq 0 0 1\n", "sequence line too short"),
    ("seq 0 0 1 1 0:0:r\n", "not enough values to unpack (expected 4, got 3)"),
])
def test_malformed_lines_keep_their_errors(tmp_path: Path, line: str, message: str) -> None:
    path = _raw(tmp_path, "seq 0 0 1 1 0:0:4:r\n" + line)
    with pytest.raises(UserError) as exc:
        parse_raw(path)
    assert exc.value.what == f"{path}:8: not a cachefit raw trace: {message}"


def _mutations(rng: random.Random) -> list[str]:
    """Canonical lines and lines with one character changed, inserted or removed."""
    out = []
    alphabet = "0123456789:rw -\t+x,"
    for _ in range(400):
        summary = rng.random() < 0.5
        n = rng.randint(1, 4)
        words = [f"{rng.randint(0, 2)}:{rng.choice([0, 4, 8, 16])}:{rng.choice([1, 4, 8])}:"
                 f"{rng.choice('rw')}" + (f":{rng.randint(1, 99)}" if summary else "")
                 for _ in range(n)]
        line = f"{'sum' if summary else 'seq'} 0 0 {rng.randint(1, 9)} {n} {' '.join(words)}"
        if rng.random() < 0.8:
            i = rng.randrange(4, len(line) + 1)
            op = rng.randrange(3)
            c = rng.choice(alphabet)
            line = (line[:i] + c + line[i + 1:] if op == 0 else
                    line[:i] + c + line[i:] if op == 1 else line[:i] + line[i + 1:])
        out.append(line)
    return out


def _outcome(path: Path) -> object:
    try:
        return parse_raw(path).sequences
    except UserError as exc:
        return exc.what


def test_bulk_and_word_by_word_agree_on_mutated_lines(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever a line holds, the parser gives what the word-by-word parser alone gives
    (the same sequences or the same error), with the bulk path taking each line first."""
    lines = _mutations(random.Random(26))
    paths = [_raw(tmp_path, f"{line}\n", f"cachefit-{i}.raw") for i, line in enumerate(lines)]
    bulk = WordTable.sequence
    taken = []

    def counted(self: WordTable, rest: str, summary: bool) -> object:
        got = bulk(self, rest, summary)
        taken.append(got is not None)
        return got

    monkeypatch.setattr(raw_trace.WordTable, "sequence", counted)
    with_bulk = [_outcome(p) for p in paths]
    monkeypatch.setattr(raw_trace.WordTable, "sequence", lambda *_args: None)
    alone = [_outcome(p) for p in paths]
    assert with_bulk == alone
    # every kind of outcome is exercised: read in bulk, read word by word, refused
    read = sum(isinstance(o, list) for o in alone)
    assert 100 < sum(taken) < read < 400


@pytest.mark.parametrize("enabled", [True, False])
def test_cycle_collector_is_restored(tmp_path: Path, enabled: bool) -> None:
    """Reading raw traces pauses Python's cycle collector and leaves it as it was, also
    when the file is refused."""
    import gc

    good = _raw(tmp_path, "seq 0 0 1 1 0:0:4:r\n")
    bad = _raw(tmp_path, "seq 0 0 1 2 0:0:4:r\n", "cachefit-2.raw")
    seen: list[bool] = []
    table_sequence = WordTable.sequence

    def spy(self: WordTable, rest: str, summary: bool) -> object:
        seen.append(gc.isenabled())
        return table_sequence(self, rest, summary)

    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(raw_trace.WordTable, "sequence", spy)
            raw_trace.profile_from_raw([good])
            assert gc.isenabled() is enabled
            with pytest.raises(UserError):
                parse_raw(bad)
            assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()
    assert seen == [False, False]
