"""Where the new member order comes from: `--order`, alphabetical, or a profile's entry.

Parses an explicit order (`a,b,c`), builds the alphabetical order (fields that must move
together stay together, placed by their smallest name) and finds the record's entry in a
loaded profile (`cachefit.model.profile.Profile`). It neither reads files, analyses code,
calls the optimizer (cachefit.reorder.decide does) nor edits text.
"""

from __future__ import annotations

from cachefit.errors import Location, UserError
from cachefit.frontend.member_units import RecordBody
from cachefit.model import Record
from cachefit.model.profile import FieldSpan, Profile, TypeProfile
from cachefit.model.type_names import key_matches


def alphabetical_order(body: RecordBody) -> list[str]:
    """Fields sorted by name; units that cannot be split keep their fields together."""
    groups: list[tuple[str, ...]] = []
    for u in body.units:
        if u.is_padding:
            continue
        if u.splittable or len(u.fields) == 1:
            groups += [(f,) for f in u.fields]
        else:
            groups.append(u.fields)
    groups.sort(key=lambda g: (min(g).lower(), min(g)))
    return [n for g in groups for n in g]


def parse_order(spec: str, body: RecordBody) -> list[str]:
    """`--order`: `alphabetical`, or field names separated by commas."""
    if spec.strip() == "alphabetical":
        return alphabetical_order(body)
    names = [n.strip() for n in spec.split(",") if n.strip()]
    if not names:
        raise UserError("--order is empty", "give field names separated by commas, or "
                        "'alphabetical'")
    return names


def empty_profile_entry(record: Record) -> TypeProfile:
    """A profile type without accesses: lets the optimizer predict offsets and size."""
    return TypeProfile(record.name, record.size,
                       [FieldSpan(f.name, f.offset, f.size) for f in record.fields])


def profile_entry(profile: Profile, path: str, record: Record,
                  asked: str) -> tuple[TypeProfile, int]:
    """The type of `profile` (read from `path`, named in errors) for the record (by
    qualified or given name) and its line size."""
    types = profile.types
    found = profile.name_of(record.name) or profile.name_of(asked) or \
        next((n for n in types if key_matches(n, asked)), None)
    if found is not None:
        return _same_record(path, found, types[found], record), profile.cache_line
    known = ", ".join(sorted(types)) or "none"
    raise UserError(f"the profile {path} has no entry for {record.name}",
                    f"it has: {known}; trace the program that uses {record.name}")


def _same_record(path: str, name: str, entry: TypeProfile, record: Record) -> TypeProfile:
    """`entry`, unless the profile traced another record of that name: one with fields, none
    of which the record has (a changed record keeps some names; those of its fields that
    the profile lacks are cold). `cachefit profile merge` refuses such profiles too."""
    stored = [f.name for f in entry.fields]
    if stored and not set(stored) & {f.name for f in record.fields}:
        ext = record.extent
        shown = ", ".join(stored[:6]) + (", ..." if len(stored) > 6 else "")
        raise UserError(
            f"the profile {path} traced a different record named {name}: none of its "
            f"{len(stored)} fields ({shown}) is a field of {record.name}",
            "trace the program built from this source, or name the record the profile is for",
            Location(ext.file, ext.begin_line, ext.begin_col) if ext else Location(path))
    return entry
