"""A YAML or JSON document (a suite, an effects file): bytes, hash, and a tree that remembers
where each value was.

YAML is read with a loader that refuses a repeated mapping key and records the
line of every key and list item (docs/suites.md §7); `.json` files are read as strict
JSON (a repeated key refused too), and take their line numbers from the YAML
reading of the same text whenever it yields exactly the same values. Mappings come back as `Map`
and YAML sequences as `Seq`, plain `dict`/`list` subclasses that carry lines and
the source text of scalars, so messages can say "line 12" and "written NO".
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tracelab.errors import SuiteError
from tracelab.limits import read_capped


class Map(dict[Any, Any]):
    """A mapping read from a suite file, with the 1-based line of each key."""

    def __init__(self, *args: Any, line: int | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.line = line
        self.lines: dict[Any, int] = {}
        self.raw: dict[Any, str] = {}
        """Source text of scalar values, by key (YAML only)."""


class Seq(list[Any]):
    """A YAML sequence, with the 1-based line and source text of each item."""

    def __init__(self, *args: Any, line: int | None = None) -> None:
        super().__init__(*args)
        self.line = line
        self.lines: list[int | None] = []
        self.raw: list[str | None] = []


def line_of(container: Any, key: Any = None) -> int | None:
    """The line of `container[key]` (or of the container itself), when it is known."""
    if key is None:
        return getattr(container, "line", None)
    if isinstance(container, Map):
        return container.lines.get(key, container.line)
    if isinstance(container, Seq) and isinstance(key, int) and key < len(container.lines):
        return container.lines[key]
    return getattr(container, "line", None)


def raw_of(container: Any, key: Any) -> str | None:
    """The source text of the scalar at `container[key]` (YAML only)."""
    if isinstance(container, Map):
        return container.raw.get(key)
    if isinstance(container, Seq) and isinstance(key, int) and key < len(container.raw):
        return container.raw[key]
    return None


class _DuplicateKey(Exception):
    def __init__(self, key: Any, line: int | None, first: int | None) -> None:
        super().__init__(key)
        self.key, self.line, self.first = key, line, first


class _LineLoader(yaml.SafeLoader):
    """SafeLoader that refuses repeated keys and records lines (no custom tags, no objects)."""


def _construct_map(loader: _LineLoader, node: yaml.MappingNode) -> Map:
    result = Map(line=node.start_mark.line + 1)
    own = [(k, v) for k, v in node.value if k.tag != "tag:yaml.org,2002:merge"]
    seen: dict[Any, int] = {}
    for key_node, _ in own:
        key = loader.construct_object(key_node, deep=True)
        line = key_node.start_mark.line + 1
        try:
            first = seen.get(key)
        except TypeError:  # an unhashable key such as a list
            raise yaml.constructor.ConstructorError(
                None, None, "a mapping key must be a string", key_node.start_mark
            ) from None
        if first is not None:
            raise _DuplicateKey(key, line, first)
        seen[key] = line
    loader.flatten_mapping(node)  # `<<` merges first, then the node's own keys override
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        result[key] = loader.construct_object(value_node, deep=True)
        result.lines[key] = key_node.start_mark.line + 1
        if isinstance(value_node, yaml.ScalarNode):
            result.raw[key] = value_node.value
    return result


def _construct_seq(loader: _LineLoader, node: yaml.SequenceNode) -> Seq:
    result = Seq(line=node.start_mark.line + 1)
    for item in node.value:
        result.append(loader.construct_object(item, deep=True))
        result.lines.append(item.start_mark.line + 1)
        result.raw.append(item.value if isinstance(item, yaml.ScalarNode) else None)
    return result


_LineLoader.add_constructor("tag:yaml.org,2002:map", _construct_map)
_LineLoader.add_constructor("tag:yaml.org,2002:seq", _construct_seq)


def _fast_loader() -> type[Any] | None:
    """_LineLoader on libyaml's parser, where PyYAML was built with it: the same nodes, lines and
    constructors, parsed about ten times as fast (benchmarks/suite.yaml's 500 lines took 0.12 s
    in Python, a tenth of a `check --since` of 10k new runs)."""
    if not getattr(yaml, "__with_libyaml__", False):
        return None

    class FastLineLoader(yaml.CSafeLoader):
        """_LineLoader on libyaml's parser."""

    FastLineLoader.add_constructor("tag:yaml.org,2002:map", _construct_map)
    FastLineLoader.add_constructor("tag:yaml.org,2002:seq", _construct_seq)
    return FastLineLoader


_FastLineLoader = _fast_loader()


@dataclass(frozen=True)
class Document:
    """A parsed suite (or referenced) file."""

    path: Path
    """The path as the user gave it (messages show it unchanged)."""
    data: Any
    sha256: str
    is_json: bool


def read_document(path: Path, shown: str | None = None, what: str = "suite file") -> Document:
    """Read and parse a YAML or JSON file (`what`: "suite file", "effects file"), refusing
    repeated keys, a file past `limits.MAX_DOCUMENT_BYTES` and nesting past MAX_DEPTH.

    Raises:
        SuiteError: the file cannot be read or parsed; the message names file and line.
    """
    shown = shown or str(path)
    raw = read_capped(path, what, shown, error=SuiteError)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SuiteError(f"{shown}: not valid UTF-8 (byte {exc.start})") from None
    is_json = path.suffix.lower() == ".json"
    data = _parse_json(text, shown) if is_json else _parse_yaml(text, shown)
    _refuse_deep(data, shown)
    if is_json:
        data = _with_lines(data, text)
    _refuse_surrogates(data, shown)
    return Document(path=path, data=data, sha256=hashlib.sha256(raw).hexdigest(), is_json=is_json)


MAX_NODES = 1_000_000
"""The most values a suite may hold once its YAML aliases are expanded. An alias repeats its
anchor's whole value; nested, a few hundred bytes of aliases expand to billions of values (a
"billion laughs") that every later pass over the suite would walk."""


def _expanded_size(root: yaml.Node, shown: str) -> int:
    """How many nodes the document holds with every alias expanded, counting each distinct
    node once (so the count itself stays linear in the file).

    Raises:
        SuiteError: past MAX_NODES, or an alias inside its own anchor.
    """
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        children = _children(node)
        if done:
            on_path.discard(key)
            sizes[key] = min(MAX_NODES + 1, 1 + sum(sizes[id(child)] for child in children))
            continue
        if key in sizes:
            continue
        if key in on_path:
            raise SuiteError(f"{shown}:{node.start_mark.line + 1}: invalid YAML: an alias refers to "
                             "the value that contains it")
        on_path.add(key)
        stack.append((node, True))
        for child in children:
            if id(child) in on_path:
                raise SuiteError(f"{shown}:{child.start_mark.line + 1}: invalid YAML: an alias refers "
                                 "to the value that contains it")
            if id(child) not in sizes:
                stack.append((child, False))
    return sizes[id(root)]


MAX_DEPTH = 64
"""The deepest nesting of lists and mappings a suite or effects file may hold. Every pass over a
suite (the loader, the static sweep, a JSON Schema's compiler) may walk it recursively; a real
suite nests a dozen levels, a real schema a few more."""

_TOO_DEEP = f"lists and mappings nested more than {MAX_DEPTH} deep; a file that deep is refused"


def _refuse_deep(data: Any, shown: str) -> None:
    """Refuse nesting deeper than MAX_DEPTH (walked without recursion)."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            where = f"{shown}:{line}" if (line := line_of(value)) else shown
            raise SuiteError(f"{where}: {_TOO_DEEP}")
        if isinstance(value, dict):
            stack.extend((item, depth + 1) for item in value.values() if isinstance(item, (dict, list)))
        elif isinstance(value, list):
            stack.extend((item, depth + 1) for item in value if isinstance(item, (dict, list)))


def _reader_error(exc: yaml.reader.ReaderError, text: str, shown: str) -> SuiteError:
    """A character YAML refuses (a control character, U+FFFE, U+FFFF), by line and column."""
    line = text.count("\n", 0, exc.position) + 1
    column = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
    char = exc.character if isinstance(exc.character, int) else ord(exc.character)
    return SuiteError(f"{shown}:{line}: invalid YAML: the character U+{char:04X} (column {column}) is not "
                      "allowed in YAML; write it as an escape in a double-quoted string (\\u{char:04X})")


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _parse_yaml(text: str, shown: str) -> Any:
    if _FastLineLoader is not None:
        fast = _FastLineLoader(text)
        try:
            node = fast.get_single_node()
            if node is None:
                return None
            if _expanded_size(node, shown) <= MAX_NODES:
                return fast.construct_document(node)
        except Exception:  # noqa: BLE001, S110 -- refused below, with PyYAML's own message and line
            pass
        finally:
            fast.dispose()
    try:
        loader = _LineLoader(text)
    except yaml.reader.ReaderError as exc:
        raise _reader_error(exc, text, shown) from None
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if _expanded_size(node, shown) > MAX_NODES:
            raise SuiteError(f"{shown}: its YAML aliases expand to more than {MAX_NODES:,} values; "
                             "a suite that large is refused (write the repeated parts out, or use "
                             "`defaults`)")
        return loader.construct_document(node)
    except _DuplicateKey as dup:
        raise SuiteError(
            f"{shown}:{dup.line}: key {dup.key!r} repeats the key of line {dup.first}; "
            "a mapping key may appear once"
        ) from None
    except RecursionError:
        raise SuiteError(f"{shown}: {_TOO_DEEP}") from None
    except yaml.reader.ReaderError as exc:
        raise _reader_error(exc, text, shown) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{shown}:{mark.line + 1}" if mark else shown
        problem = exc.problem or exc.context or "invalid YAML"
        raise SuiteError(f"{where}: invalid YAML: {problem}") from None
    except yaml.YAMLError as exc:
        raise SuiteError(f"{shown}: invalid YAML: {exc}") from None
    finally:
        loader.dispose()


def _refuse_surrogates(data: Any, shown: str) -> None:
    """Refuse a string holding a lone surrogate (an escape such as ``"\\uD800"``): it is no
    character, and cannot be written as UTF-8 to a report, a store or DuckDB."""
    stack: list[tuple[Any, int | None]] = [(data, line_of(data))]
    while stack:
        value, line = stack.pop()
        if isinstance(value, str):
            if any("\ud800" <= char <= "\udfff" for char in value):
                where = f"{shown}:{line}" if line else shown
                raise SuiteError(f"{where}: a string holds a lone surrogate escape (\\uD800 to "
                                 "\\uDFFF), which is not a character; write the character itself")
        elif isinstance(value, dict):
            stack.extend((key, line_of(value, key) or line) for key in value)
            stack.extend((item, line_of(value, key) or line) for key, item in value.items())
        elif isinstance(value, list):
            stack.extend((item, line_of(value, i) or line) for i, item in enumerate(value))


def _with_lines(data: Any, text: str) -> Any:
    """The YAML reading of JSON `text` (which has lines) when it equals `data` exactly (JSON
    allows characters YAML refuses, such as U+FFFF: such a file has no lines)."""
    try:
        loader = _LineLoader(text)
    except yaml.YAMLError:
        return data
    try:
        lined = loader.get_single_data()
    except (yaml.YAMLError, _DuplicateKey, RecursionError):
        return data
    finally:
        loader.dispose()
    return lined if _same(data, lined) else data


def _same(a: Any, b: Any) -> bool:
    """Equal values of equal types, all the way down (so 1 is not 1.0 and not true)."""
    if type(a) is not type(b) and not (isinstance(a, dict) and isinstance(b, dict)) and not (
        isinstance(a, list) and isinstance(b, list)
    ):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _json_object(pairs: list[tuple[str, Any]]) -> Map:
    result = Map()
    for key, value in pairs:
        if key in result:
            raise _DuplicateKey(key, None, None)
        result[key] = value
    return result


def _parse_json(text: str, shown: str) -> Any:
    try:
        return json.loads(text, object_pairs_hook=_json_object, parse_constant=_refuse_constant)
    except _DuplicateKey as dup:
        raise SuiteError(f"{shown}: key {dup.key!r} appears twice in one object") from None
    except json.JSONDecodeError as exc:
        raise SuiteError(f"{shown}:{exc.lineno}: invalid JSON: {exc.msg}") from None
    except RecursionError:
        raise SuiteError(f"{shown}: {_TOO_DEEP}") from None
    except ValueError as exc:
        raise SuiteError(f"{shown}: invalid JSON: {exc}") from None
