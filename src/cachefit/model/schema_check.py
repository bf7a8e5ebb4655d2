"""Check decoded data against a published JSON Schema (src/cachefit/model/schemas/) with
`jsonschema`, and say what is wrong in one line.

The schemas are the published description of the formats cachefit reads (the profile's
readable form, the layout plan, cachefit.toml as parsed TOML). Their messages are part of
the schema, as annotations that validators ignore:

* `x-message` on a (sub)schema: the message when data fails it, a string or an object from
  the failing keyword (`type`, `required`, `additionalProperties`, ...) to a string, with
  `{key}` (the name of the value that schema describes), `{parent}` (the name above it),
  `{value}` (the failing value, repr), `{extra}` (the unexpected keys, for
  `additionalProperties`); the nearest one above the failing keyword applies. For
  `required` it may be an object from the missing key to its message.
* `x-check-order` on the root: the order in which the top-level keys are checked (`""`: the
  root object itself), so that of several errors the first one named is always the same.

`first_error` returns that one error (message and the path of the value in the data), or
None; the loaders turn it into their located `UserError`. It reads only the packaged schema
files; it does not know any format.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import jsonschema

_INTO = {"properties": 2, "patternProperties": 2, "items": 1, "additionalProperties": 1}
"""Schema keywords that descend into the data: how many schema path steps they take."""


@dataclass(frozen=True)
class SchemaError:
    """The first thing wrong with the data: the message, and where (keys and indices)."""

    message: str
    path: tuple[str | int, ...]


@cache
def schema(name: str) -> dict[str, Any]:
    """The published schema `name` (a file of cachefit/model/schemas)."""
    text = resources.files("cachefit.model").joinpath("schemas", name).read_text()
    return json.loads(text)


@cache
def _validator(name: str) -> jsonschema.protocols.Validator:
    root = schema(name)
    cls = jsonschema.validators.validator_for(root)
    cls.check_schema(root)
    return cls(root)


def first_error(name: str, data: Any) -> SchemaError | None:
    """The first error of `data` against the schema `name`, in the schema's check order;
    None when it is valid."""
    root = schema(name)
    errors = list(_validator(name).iter_errors(data))
    if not errors:
        return None
    order = root.get("x-check-order", [])

    def rank(err: jsonschema.ValidationError) -> tuple[int, int, str]:
        top = err.absolute_path[0] if err.absolute_path else _missing(err) or ""
        where = order.index(top) if top in order else len(order)
        return (where, len(err.absolute_path), err.json_path)

    err = min(errors, key=rank)
    return SchemaError(_message(root, err), tuple(err.absolute_path))


def _message(root: dict[str, Any], err: jsonschema.ValidationError) -> str:
    """The `x-message` nearest above the failing keyword, filled in; jsonschema's own
    message when the schema gives none."""
    node: Any = root
    depth = 0
    found: tuple[Any, int] | None = None
    steps = list(err.absolute_schema_path)
    i = 0
    while i < len(steps):
        if isinstance(node, dict) and "x-message" in node:
            found = (node["x-message"], depth)
        key = steps[i]
        while isinstance(node, dict) and key not in node and "$ref" in node:
            node = _resolve(root, node["$ref"])
            if "x-message" in node:
                found = (node["x-message"], depth)
        if not isinstance(node, dict | list):
            break
        if isinstance(node, dict) and key in _INTO and i + 1 <= len(steps):
            depth += 1
            take = _INTO[key]
            node = node[key] if take == 1 else node[key][steps[i + 1]]
            i += take
            continue
        node = node[key]
        i += 1
    if found is None:
        return err.message
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
        value=repr(err.instance), extra=extra)


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
