"""What the flattening steps share: the hierarchy, the source, and what each step decided.

`FlatState` is plain data. Each step module (select_members, rename_refs, ctor_defs,
init_functions, clone_members, clone_definitions, target_class, drop_bases) reads it and adds
to it; `transform.plan_unit` creates it and runs the steps in order. `Ctx` says how references
in one piece of hierarchy code are rewritten; `Facts` is what units of one build exchange;
`FlattenPlan` is the result for one unit. Nothing here computes an edit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import clang.cindex as ci

from cachefit.edits import Edit, EditList
from cachefit.flatten import cx
from cachefit.flatten.checks import OutsideUse
from cachefit.flatten.cx import Key
from cachefit.flatten.layout import TargetLayout
from cachefit.flatten.model import ClassInfo, Hierarchy, Member
from cachefit.frontend.clang_records import qualified_decl_name

if TYPE_CHECKING:
    from cachefit.flatten.ctor_defs import CtorDef


@dataclass(frozen=True)
class Ctx:
    """How references in a piece of hierarchy code are resolved and rewritten."""

    cls: ClassInfo                  # the class the code is a member of
    ctor_of: ClassInfo | None       # the class being constructed/destroyed (ctor/dtor code)
    params: tuple[Key | None, ...]  # template parameters of the code, mapped to cls.args
    t_spell: str                    # how to write the target's name here


@dataclass
class Facts:
    """What one unit learned that others must agree on: renamed copies of hidden members,
    and which base constructors/destructors do nothing (known where they are defined)."""

    renames: dict[Key, str] = field(default_factory=dict)
    empty: dict[Key, bool] = field(default_factory=dict)

    def merge(self, other: Facts) -> bool:
        """Add `other`'s facts; return whether anything was new."""
        new = False
        for k, v in other.renames.items():
            if k not in self.renames:
                self.renames[k] = v
                new = True
        for k, v in other.empty.items():
            if k not in self.empty:
                self.empty[k] = v
                new = True
        return new


@dataclass
class FlattenPlan:
    """What `transform.plan_unit` produced for one translation unit."""

    edits: EditList
    report: dict
    warnings: list[str] = field(default_factory=list)
    facts: Facts = field(default_factory=Facts)


@dataclass
class FlatState:
    """The inputs of the steps, how the target is named, and what the steps decided."""

    # inputs
    h: Hierarchy
    src: cx.Source
    main_file: str
    outside: OutsideUse
    layout: TargetLayout | None
    include_target: str | None      # header to #include where the target is not visible
    seeds: Facts                    # what other units of the build learned
    # the target and how code names it
    target: ClassInfo
    t_file: str
    t_qualified: str                # ns::Outer::T
    t_ns_spell: str                 # Outer::T: the name in the target's namespace
    t_namespaces: list[str]
    template_classes: dict[Key | None, ClassInfo]   # template bases by their template
    hier_names: set[str]            # every name the hierarchy declares (for new names)
    # decisions of the steps
    edits: EditList = field(default_factory=EditList)
    warnings: list[str] = field(default_factory=list)
    visible: dict[str, ClassInfo] = field(default_factory=dict)  # name -> class lookup finds
    copied: list[Member] = field(default_factory=list)           # step 1: kept members
    dropped: list[Member] = field(default_factory=list)          # step 1: hidden members
    renames: dict[Key, str] = field(default_factory=dict)        # step 3: renamed copies
    queue: list[Member] = field(default_factory=list)            # regions still to rewrite
    init_names: dict[Key, str] = field(default_factory=dict)     # step 4: init functions
    empty_known: dict[Key, bool] = field(default_factory=dict)   # step 4: empty, decided here
    included: set[str] = field(default_factory=set)              # files given an #include
    # caches of computed answers
    region_cache: dict[tuple[Key | None, bool], list[Edit]] = field(default_factory=dict)
    ctor_cache: dict[Key | None, CtorDef | None] = field(default_factory=dict)
    empty_cache: dict[Key, bool] = field(default_factory=dict)
    enclosing_cache: dict[str, dict[Key, ci.Cursor]] = field(default_factory=dict)
    scope_names: dict[str, tuple[ci.Cursor, ci.Cursor]] | None = None

    @classmethod
    def create(cls, h: Hierarchy, src: cx.Source, main_file: str, outside: OutsideUse,
               layout: TargetLayout | None, include_target: str | None,
               seeds: Facts | None) -> FlatState:
        tdecl = h.target.decl
        t_qualified = qualified_decl_name(tdecl)
        t_namespaces = cx.namespaces(tdecl, semantic=True)
        named_ns = [n for n in t_namespaces if n]
        return cls(
            h=h, src=src, main_file=main_file, outside=outside, layout=layout,
            include_target=include_target, seeds=seeds or Facts(), target=h.target,
            t_file=cx.file_of(tdecl), t_qualified=t_qualified,
            t_ns_spell="::".join(t_qualified.split("::")[len(named_ns):]),
            t_namespaces=t_namespaces,
            template_classes={cx.key_of(c.template): c for c in h.classes.values()
                              if c.template is not None},
            hier_names=set(h.names()) | {c.name for c in h.classes.values()})
