"""TypeScript declarations of Python ``TypedDict`` schemas, for the JS view (issue 14).

The view model (:mod:`turnfold.render.nodes`) and the widget's messages
(:mod:`turnfold.transport`) are declared once, in Python; the JS view reads the same shapes from
``.d.ts`` files generated from them, which ``tsc --strict`` checks the JS against. Tests keep
each generated file equal to what :func:`typescript` writes now, so the two sides cannot drift.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

if sys.version_info >= (3, 11):
    from typing import NotRequired
else:  # pragma: no cover - Python 3.10
    from typing_extensions import NotRequired


def typescript(
    classes: Sequence[type],
    unions: Mapping[str, object],
    *,
    source: str,
    imports: Mapping[str, tuple[Sequence[type], Mapping[str, object]]] | None = None,
) -> str:
    """``classes`` as ``export interface``s and ``unions`` as ``export type``s, in order.

    ``source`` names the Python module they come from (for the header); ``imports`` maps a
    ``.d.ts`` module path (``"./nodes"``) to the classes and unions the declarations may refer
    to from there.
    """
    names = _Names(classes, unions, imports or {})
    out = [
        f"// Generated from {source} by `python -m {_module(source)}`; do not edit: the tests\n"
        "// fail when the two differ. Read by tsc --strict through the JS view's JSDoc imports.\n"
    ]
    for path, (imported_classes, imported_unions) in (imports or {}).items():
        imported = [c.__name__ for c in imported_classes] + list(imported_unions)
        out.append(f'import type {{ {", ".join(imported)} }} from "{path}";\n')
    for cls in classes:
        out.append(f"export interface {cls.__name__} {{")
        for name, hint in get_type_hints(cls, include_extras=True).items():
            optional = get_origin(hint) is NotRequired
            if optional:
                (hint,) = get_args(hint)
            out.append(f"  {name}{'?' if optional else ''}: {names.of(hint)};")
        out.append("}\n")
    for name, union in unions.items():
        out.append(f"export type {name} = {names.of(union, named=False)};\n")
    return "\n".join(out)


def _module(source: str) -> str:
    return source.removeprefix("src/").removesuffix(".py").replace("/", ".")


class _Names:
    """The TypeScript spelling of each annotation, by the names the declarations know."""

    def __init__(
        self,
        classes: Sequence[type],
        unions: Mapping[str, object],
        imports: Mapping[str, tuple[Sequence[type], Mapping[str, object]]],
    ) -> None:
        self.classes = set(classes)
        self.unions = dict(unions)
        for imported_classes, imported_unions in imports.values():
            self.classes.update(imported_classes)
            self.unions.update(imported_unions)

    def of(self, hint: Any, *, named: bool = True) -> str:
        """``hint`` in TypeScript; a known union by its name unless ``named`` is False."""
        origin = get_origin(hint)
        if named:
            for name, union in self.unions.items():
                if hint == union:
                    return name
        if hint is str:
            return "string"
        if hint is bool:
            return "boolean"
        if hint is bytes:  # a binary trait: ipywidgets hands the JS a DataView
            return "DataView"
        if hint is int or hint is float:
            return "number"
        if hint is type(None):
            return "null"
        if hint is Any or hint is object:
            return "unknown"
        if origin is Literal:
            return " | ".join(f'"{value}"' for value in get_args(hint))
        if origin is Union or origin is types.UnionType:
            return " | ".join(self._members(list(get_args(hint)), named=named))
        if origin is list:
            (item,) = get_args(hint)
            inner = self.of(item)
            return f"({inner})[]" if " " in inner else f"{inner}[]"
        if origin is dict:
            key, value = get_args(hint)
            return f"Record<{self.of(key)}, {self.of(value)}>"
        if isinstance(hint, type) and hint in self.classes:
            return hint.__name__
        raise TypeError(f"no TypeScript type for {hint!r}")

    def _members(self, args: list[Any], *, named: bool) -> list[str]:
        """The members of a union; Python flattens ``TopNode | None`` into the classes of
        ``TopNode`` and ``None``, so a known union among them is written by its name again."""
        spelled: list[str] = []
        if named:
            # The largest first: AnyNode holds TopNode's members, and is the one meant.
            largest = sorted(self.unions.items(), key=lambda item: -len(get_args(item[1])))
            for name, union in largest:
                members = list(get_args(union))
                if len(members) > 1 and all(m in args for m in members):
                    at = args.index(members[0])
                    args = [a for a in args if a not in members]
                    args.insert(at, _Named(name))
        for arg in args:
            spelled.append(arg.name if isinstance(arg, _Named) else self.of(arg))
        return spelled


class _Named:
    """A union already written by its name, in the members of a larger one."""

    def __init__(self, name: str) -> None:
        self.name = name
