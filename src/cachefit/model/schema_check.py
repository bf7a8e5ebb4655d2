"""Check decoded data against a published JSON Schema (src/cachefit/model/schemas/) with
`jsonschema`, and say what is wrong in one line.

The schemas are the published description of the formats cachefit reads (the profile's
readable form, the layout plan, cachefit.toml as parsed TOML). Their messages are part of
the schema, as annotations that validators ignore:

* `x-message` on a (sub)schema: the message when data fails it, a string or an object from
  the failing keyword (`type`, `required`, `additionalProperties`, ...) to a string, with
  `{key}` (the name of the value that schema describes), `{parent}` (the name above it),
  `{path}` and `{parent_path}` (where that value and the one above it are, written
  `types["tcb"].fields[0]`: `.name` for a property, `["name"]` for a key of a map, `[i]`
  for an item), `{value}` (the failing value, repr), `{extra}` (the unexpected keys, for
  `additionalProperties`); the nearest one above the failing keyword applies. For
  `required` it may be an object from the missing key to its message.
* `x-fix` on a (sub)schema: what to do about an error below it (the nearest applies);
  the loader has its own when the schema gives none.
* `x-check-order` on an object's schema: the order in which its keys are checked (`""`
  on the root: the root object itself); keys it does not name come after, in the order of
  `properties`, then a map's keys in the order of the data. Of several errors the first
  one in this order is named, so it is always the same one.

"integer" means an integer of the data (a JSON number without a fraction or exponent, a
TOML integer), not a float that happens to be whole, and never a boolean.

`first_error` returns that one error (message, fix and the path of the value in the data),
or None; the loaders turn it into their located `UserError`. It reads only the packaged
schema files; it does not know any format.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jsonschema

_INTO = {"properties": 2, "patternProperties": 2, "items": 1, "prefixItems": 2,
         "additionalProperties": 1}
"""Schema keywords that descend into the data: how many schema path steps they take."""
_MAP = ("patternProperties", "additionalProperties")
"""Of those, the ones whose data key is a map's key (written `["key"]` in a path)."""


@dataclass(frozen=True)
class SchemaError:
    """The first thing wrong with the data: the message, and where (keys and indices)."""

    message: str
    path: tuple[str | int, ...]
    fix: str | None = None
    """The schema's `x-fix` for it, None when it gives none."""


@cache
def schema(name: str) -> dict[str, Any]:
    """The published schema `name` (a file of cachefit/model/schemas)."""
    text = resources.files("cachefit.model").joinpath("schemas", name).read_text()
    return json.loads(text)


def _is_integer(_checker: Any, instance: Any) -> bool:
    return isinstance(instance, int) and not isinstance(instance, bool)


@cache
def _validator(name: str) -> jsonschema.protocols.Validator:
    # imported here: jsonschema takes 35 ms to import, and a command that only writes
    # formats (`cachefit trace` on a fresh run) never checks one
    import jsonschema
    root = schema(name)
    base = jsonschema.validators.validator_for(root)
    base.check_schema(root)
    cls = jsonschema.validators.extend(
        base, type_checker=base.TYPE_CHECKER.redefine("integer", _is_integer))
    return cls(root)


def first_error(name: str, data: Any) -> SchemaError | None:
    """The first error of `data` against the schema `name`, in the schema's check order;
    None when it is valid."""
    root = schema(name)
    errors = list(_validator(name).iter_errors(data))
    if not errors:
        return None
    order = root.get("x-check-order", [])

    def rank(err: jsonschema.ValidationError) -> tuple[Any, ...]:
        top = err.absolute_path[0] if err.absolute_path else _missing(err) or ""
        where = order.index(top) if top in order else len(order)
        return (where, _data_order(root, data, err), len(err.absolute_path), err.json_path)

    err = min(errors, key=rank)
    text, fix = _message(root, err)
    return SchemaError(text, tuple(err.absolute_path), fix)


def _data_order(root: dict[str, Any], data: Any,
                err: jsonschema.ValidationError) -> tuple[int, ...]:
    """Where the failing value comes in the check order: per step of its path (and the
    missing key of a `required` error), the key's place in `x-check-order`, else in
    `properties`, else in the data (a map's keys), or the item's index."""
    node: Any = root
    out: list[int] = []
    steps: list[str | int] = list(err.absolute_path)
    missing = _missing(err)
    if missing is not None:
        steps.append(missing)
    for step in steps:
        while isinstance(node, dict) and "$ref" in node:
            node = _resolve(root, node["$ref"])
        if not isinstance(node, dict):
            node = {}
        if isinstance(step, int):
            out.append(step)
            prefix = node.get("prefixItems", [])
            node = prefix[step] if step < len(prefix) else node.get("items", {})
        else:
            order = [k for k in node.get("x-check-order", []) if k]
            props = list(node.get("properties", {}))
            if step in order:
                out.append(order.index(step))
            elif step in props:
                out.append(len(order) + props.index(step))
            else:
                keys = list(data) if isinstance(data, dict) else []
                out.append(len(order) + len(props) + (keys.index(step) if step in keys
                                                       else len(keys)))
            node = node.get("properties", {}).get(step, node.get("additionalProperties", {}))
        data = data[step] if _has(data, step) else None
    return tuple(out)


def _has(data: Any, step: str | int) -> bool:
    if isinstance(step, int):
        return isinstance(data, list) and step < len(data)
    return isinstance(data, dict) and step in data


def _message(root: dict[str, Any], err: jsonschema.ValidationError) -> tuple[str, str | None]:
    """The `x-message` nearest above the failing keyword, filled in (jsonschema's own
    message when the schema gives none), and the nearest `x-fix`."""
    node: Any = root
    depth = 0
    found: tuple[Any, int] | None = None
    fix: str | None = None
    kinds: list[str] = []          # per data step: "prop", "map" or "item"
    steps = list(err.absolute_schema_path)
    i = 0

    def notes(at: dict[str, Any]) -> None:
        nonlocal found, fix
        if "x-message" in at:
            found = (at["x-message"], depth)
        fix = at.get("x-fix", fix)

    while i < len(steps):
        if isinstance(node, dict):
            notes(node)
        key = steps[i]
        while isinstance(node, dict) and key not in node and "$ref" in node:
            node = _resolve(root, node["$ref"])
            notes(node)
        if not isinstance(node, dict | list):
            break
        if isinstance(node, dict) and key in _INTO and i + 1 <= len(steps):
            depth += 1
            kinds.append("map" if key in _MAP else
                         "item" if key in ("items", "prefixItems") else "prop")
            take = _INTO[key]
            node = node[key] if take == 1 else node[key][steps[i + 1]]
            i += take
            continue
        node = node[key]
        i += 1
    if found is None:
        return err.message, fix
    text, at = found
    if isinstance(text, dict):
        text = text.get(err.validator, text.get("*", err.message))
    if isinstance(text, dict):         # "required": a message per missing key
        text = text.get(_missing(err) or "", err.message)
    path = list(err.absolute_path)
    extra = ""
    if err.validator == "additionalProperties" and isinstance(err.instance, dict):
        known = err.schema.get("properties", {})
        extra = ", ".join(sorted(k for k in err.instance if k not in known))
    return str(text).format(
        key=path[at - 1] if at >= 1 else "", parent=path[at - 2] if at >= 2 else "",
        path=_written(path[:at], kinds), parent_path=_written(path[:at - 1], kinds),
        value=repr(err.instance), extra=extra), fix


def _written(path: list[Any], kinds: list[str]) -> str:
    """A data path as `types["tcb"].fields[0]` (`kinds`: how each step was reached)."""
    out = ""
    for step, kind in zip(path, kinds, strict=False):
        if kind == "item":
            out += f"[{step}]"
        elif kind == "map":
            out += f'["{step}"]'
        else:
            out += f".{step}" if out else str(step)
    return out


def _missing(err: jsonschema.ValidationError) -> str | None:
    """The first missing key of a `required` error."""
    if err.validator != "required" or not isinstance(err.instance, dict):
        return None
    return next((k for k in err.validator_value if k not in err.instance), None)


def _resolve(root: dict[str, Any], ref: str) -> dict[str, Any]:
    """A local reference (`#/$defs/name`) of `root`."""
    node: Any = root
    for part in ref.removeprefix("#/").split("/"):
        node = node[part]
    return node
