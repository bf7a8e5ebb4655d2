"""Edit lists: byte-range replacements computed first, checked, and applied at once.

A transformation collects `Edit`s (replace bytes ``[start, end)`` of a file by a text; an
insertion is an empty range) in an `EditList`, then applies them in one go. Edits on one file
must not overlap; insertions at the same offset keep the order in which they were added, and
identical edits (the same range and text, e.g. computed twice from two translation units that
include the same header) count once. Results are written with `write_atomic` (temporary file
in the same directory, then rename), so a file is never left half-written, and shown with
`unified_diff` in a form `git apply` accepts.

This module knows nothing about C++: offsets are byte offsets, as libclang reports them.
"""

from __future__ import annotations

import difflib
import os
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from cachefit.atomic_files import is_special_file, new_file_mode
from cachefit.errors import Location, UnsafeTransformation, UserError
from cachefit.interrupts import held


class EditConflict(UnsafeTransformation):
    """Two edits of one file overlap (or contradict each other)."""


@dataclass(frozen=True)
class Edit:
    """Replace bytes ``[start, end)`` of `file` by `text` (``start == end``: insert)."""

    file: str
    start: int
    end: int
    text: str
    why: str = ""          # a short note for conflict messages and debugging

    def __post_init__(self) -> None:
        if not 0 <= self.start <= self.end:
            raise ValueError(f"bad edit range [{self.start}, {self.end}) in {self.file}")

    @property
    def is_insertion(self) -> bool:
        return self.start == self.end

    def contains(self, other: Edit) -> bool:
        """Whether `other` changes bytes this replacement replaces (so this one subsumes it).

        An insertion at either boundary of the range is outside it.
        """
        if self.file != other.file or self.is_insertion or self is other:
            return False
        if other.is_insertion:
            return self.start < other.start < self.end
        return (self.start <= other.start and other.end <= self.end
                and (self.start, self.end) != (other.start, other.end))


@dataclass
class EditList:
    """The edits of one or more files, applied together."""

    edits: list[Edit] = field(default_factory=list)

    def add(self, edit: Edit) -> None:
        self.edits.append(edit)

    def replace(self, file: str, start: int, end: int, text: str, why: str = "") -> None:
        self.add(Edit(file, start, end, text, why))

    def insert(self, file: str, offset: int, text: str, why: str = "") -> None:
        self.add(Edit(file, offset, offset, text, why))

    def delete(self, file: str, start: int, end: int, why: str = "") -> None:
        self.add(Edit(file, start, end, "", why))

    def extend(self, edits: Iterable[Edit]) -> None:
        for e in edits:
            self.add(e)

    def __len__(self) -> int:
        return len(self.edits)

    def __iter__(self) -> Iterator[Edit]:
        return iter(self.edits)

    def files(self) -> list[str]:
        return sorted({e.file for e in self.edits})

    def for_file(self, file: str) -> list[Edit]:
        """The edits of `file`, deduplicated and sorted; raise EditConflict on overlap."""
        return normalize([e for e in self.edits if e.file == file])

    def apply(self, originals: dict[str, bytes]) -> dict[str, bytes]:
        """New contents of every edited file; `originals` maps each file to its bytes."""
        out: dict[str, bytes] = {}
        for f in self.files():
            if f not in originals:
                raise KeyError(f"no original contents given for {f}")
            out[f] = apply_edits(originals[f], self.for_file(f))
        return out


def drop_contained(edits: Iterable[Edit]) -> list[Edit]:
    """Remove edits that lie inside another edit's replaced range (the outer edit wins)."""
    edits = list(edits)
    replacements = [e for e in edits if not e.is_insertion]
    return [e for e in edits if not any(r.contains(e) for r in replacements)]


def normalize(edits: list[Edit]) -> list[Edit]:
    """Deduplicate identical edits, sort by position and check that none overlap.

    Insertions at one offset keep their order of addition and go before a replacement
    starting at that offset; an insertion strictly inside a replaced range is a conflict.
    """
    seen: set[tuple[int, int, str]] = set()
    unique: list[tuple[int, Edit]] = []
    for i, e in enumerate(edits):
        key = (e.start, e.end, e.text)
        if key in seen:
            continue
        seen.add(key)
        unique.append((i, e))
    ordered = [e for _, e in sorted(unique, key=lambda p: (p[1].start, not p[1].is_insertion,
                                                           p[1].end, p[0]))]
    last: Edit | None = None
    for e in ordered:
        if last is not None and e.start < last.end:
            raise EditConflict(
                f"overlapping edits in {e.file}: bytes {last.start}-{last.end} "
                f"({last.why or 'edit'}) and {e.start}-{e.end} ({e.why or 'edit'})",
                "this is a bug in the transformation: report it with the input",
                Location(e.file))
        if not e.is_insertion:
            last = e
    return ordered


def apply_edits(data: bytes, edits: list[Edit]) -> bytes:
    """Apply sorted, non-overlapping `edits` (see `normalize`) to `data`."""
    parts: list[bytes] = []
    pos = 0
    for e in edits:
        if e.end > len(data):
            raise ValueError(f"edit [{e.start}, {e.end}) beyond the end of {e.file}")
        parts.append(data[pos:e.start])
        parts.append(e.text.encode())
        pos = e.end
    parts.append(data[pos:])
    return b"".join(parts)


def apply_to_slice(data: bytes, start: int, end: int, edits: Iterable[Edit]) -> str:
    """The text of ``data[start:end]`` with those `edits` applied that lie inside it.

    Edits that straddle the slice boundary raise EditConflict; edits outside are ignored.
    Used to copy a piece of source with local rewrites (e.g. renamed identifiers) applied.
    """
    inside: list[Edit] = []
    for e in edits:
        if e.is_insertion:
            if not start <= e.start < end:
                continue
        elif e.end <= start or e.start >= end:
            continue
        if e.start < start or e.end > end:
            raise EditConflict(f"an edit at bytes {e.start}-{e.end} ({e.why or 'edit'}) "
                               f"straddles the copied range {start}-{end}",
                               "this is a bug in the transformation: report it with the input")
        inside.append(Edit(e.file, e.start - start, e.end - start, e.text, e.why))
    piece = data[start:end]
    return apply_edits(piece, normalize(inside)).decode()


def write_atomic(path: str, data: bytes) -> None:
    """Write `data` to `path` as `write_all_atomic` does."""
    write_all_atomic({path: data})


def write_all_atomic(contents: dict[str, bytes]) -> None:
    """Write several files, each through a temporary file in its directory and a rename,
    all temporary files first: a failure before the renames leaves every file as it was.

    A symbolic link is followed (the file it names is rewritten, the link stays). An
    existing file keeps its permission bits; a new one gets 0666 less the umask, as a
    shell redirection would. A device or FIFO (`-o /dev/stdout`) is written in place.
    A path that cannot be written (a missing or read-only directory, a directory named as
    the file) raises UserError naming it, before any file is touched when that can be
    seen beforehand (the rename itself failing is the only later case). An interrupt
    (Ctrl-C) leaves every file old, or, once the renames have begun, every file new."""
    targets = {path: path if is_special_file(path) else os.path.realpath(path)
               for path in contents}
    for path, target in targets.items():
        if is_special_file(target):
            continue
        if os.path.isdir(target):
            raise UserError(f"cannot write {path}: it is a directory",
                            "name a file to write, not a directory")
        if not os.path.isdir(os.path.dirname(target)):
            raise UserError(f"cannot write {path}: its directory does not exist",
                            "create the directory first or name another file")
    mode_of_new = new_file_mode()
    staged: list[tuple[str, str]] = []
    try:
        try:
            for path, data in contents.items():
                target = targets[path]
                if is_special_file(target):
                    continue
                with held():        # removed in the end when its name is known
                    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(target) + ".",
                                               suffix=".tmp", dir=os.path.dirname(target))
                    staged.append((tmp, target))
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                    fh.flush()
                    os.fsync(fh.fileno())
                try:
                    mode = os.stat(target).st_mode & 0o7777
                except FileNotFoundError:
                    mode = mode_of_new
                os.chmod(tmp, mode)
            for path, data in contents.items():
                if is_special_file(targets[path]):
                    with open(targets[path], "wb") as fh:
                        fh.write(data)
            with held():            # all renamed, or none
                for tmp, target in staged:
                    os.replace(tmp, target)
                staged = []
        except OSError as exc:
            name = exc.filename if isinstance(exc.filename, str) else "a file"
            raise UserError(f"cannot write {name}: {exc.strerror or exc}",
                            "check that its directory exists and is writable") from exc
    finally:
        for tmp, _ in staged:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass


def display_path(path: str, cwd: str | None = None) -> str:
    """`path` relative to `cwd` when inside it, else relative to its git work tree, else as is."""
    cwd = os.path.abspath(cwd or os.getcwd())
    ap = os.path.abspath(path)
    if ap == cwd or ap.startswith(cwd.rstrip(os.sep) + os.sep):
        return os.path.relpath(ap, cwd)
    top = _git_toplevel(os.path.dirname(ap))
    if top and ap.startswith(top.rstrip(os.sep) + os.sep):
        return os.path.relpath(ap, top)
    return ap


def diff_path(path: str, cwd: str | None = None) -> str:
    """`path` as a diff header names it: relative to its git work tree, as `git diff` writes
    paths (so `git apply` at the top applies every file, and in a subdirectory the files
    below it, whatever directory the diff was made in); outside a work tree, as
    `display_path` (relative to `cwd` when inside it, for `patch -p1` there)."""
    ap = os.path.abspath(path)
    top = _git_toplevel(os.path.dirname(ap))
    if top and ap.startswith(top.rstrip(os.sep) + os.sep):
        return os.path.relpath(ap, top)
    return display_path(path, cwd)


def _git_toplevel(directory: str) -> str | None:
    d = directory
    while True:
        if os.path.exists(os.path.join(d, ".git")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def unified_diff(old: bytes, new: bytes, path: str, context: int = 3) -> str:
    """A unified diff of one file with ``a/PATH`` and ``b/PATH`` headers (`git apply` format).

    A last line without a newline gets the ``\\ No newline at end of file`` marker.
    """
    if old == new:
        return ""
    a = old.decode(errors="surrogateescape").splitlines(keepends=True)
    b = new.decode(errors="surrogateescape").splitlines(keepends=True)
    out: list[str] = []
    for line in difflib.unified_diff(a, b, f"a/{path}", f"b/{path}", n=context):
        if line.startswith(("--- ", "+++ ")):
            out.append(line.rstrip("\n").rstrip("\t") + "\n")
        elif line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n\\ No newline at end of file\n")
    return "".join(out).encode(errors="surrogateescape").decode(errors="replace")


def unified_diffs(originals: dict[str, bytes], contents: dict[str, bytes],
                  cwd: str | None = None) -> str:
    """The diffs of every changed file, in path order, named as `diff_path` says."""
    parts = []
    for f in sorted(contents):
        old = originals.get(f, b"")
        if contents[f] != old:
            parts.append(unified_diff(old, contents[f], diff_path(f, cwd)))
    return "".join(parts)
