"""`make lint`: no two files of the Rust crate (rust/) depend on each other through their paths.

It builds the file-level dependency graph of the crate and reports every strongly connected
component of more than one file (a circle of `use`s), with the items that make each edge; it
exits 1 if there is one. The rules:

- The module tree is read from rust/lib.rs: `mod x;` declarations (with `#[path]`) give the
  files, inline `mod x { ... }` blocks belong to their file. Test code is left out: every item
  under `#[cfg(test)]` (a `mod tests { ... }` block, a `mod x_tests;` file, a test helper fn or
  module such as writer/test_tables.rs) is blanked before parsing, so a circle through tests
  does not count. Comments and string literals are blanked too.
- What a file uses: every `use` tree in it (module level or inside a function, relative ones
  such as `pub use reader::X` in a mod.rs included), every path in its code that starts with
  `crate::`, `super::` or `self::`, and every `a::b` path whose first name is in scope (a
  child module or an imported name, e.g. `reader::read_parquet` after `use super::reader;`).
  A glob import (`use super::*`) uses each name of the target module that appears in the file.
- Each path is resolved segment by segment to the file that *defines* the item it names (fn,
  struct, enum, union, trait, type, const, static, macro_rules!); the segments after the item
  (an enum variant, an associated fn) do not matter. Imports and re-exports are followed to the
  definition, so `crate::spec::Schema` is an edge to spec/schema.rs, not to spec/mod.rs.
- A `pub use` (a re-export) is not a use of the item by itself: it makes an edge only when the
  re-exported name is also used in the file's code. So a mod.rs that re-exports its children
  makes no edge to them, while a child that uses an item defined in its parent's mod.rs makes an
  edge to mod.rs.
- A path that ends at a module (`use super::reader;`) makes no edge; the paths through it do.
  Where a module and an item share a name (`mod merge_append;` and the fn it re-exports), the
  last segment of a path is the item. A path to a name the script cannot find (e.g. one a macro
  makes) counts against the file of the last module it reached; a name outside the crate
  (`std::`, `arrow_array::`) is ignored.
- An edge A -> B exists when A uses an item defined in B and A is not B. Only paths count: a
  method call or a trait impl without a path to its item is no edge.

Python 3.11 standard library only. `--graph` prints every edge.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CRATE_ROOT = ROOT / "rust" / "lib.rs"

# An item's name (`const fn f` is matched at `fn`; `'static` is a lifetime).
DEF_RE = re.compile(
    r"(?<![\w'])(?:fn|struct|enum|union|trait|type|const|static)\s+(?:mut\s+)?(?!fn\b)([A-Za-z_]\w*)"
    r"|(?<![\w'])macro_rules!\s*([A-Za-z_]\w*)"
)
MOD_RE = re.compile(r"(?<![\w'])mod\s+([A-Za-z_]\w*)\s*([;{])")
USE_RE = re.compile(r"(?<![\w:])(pub(?:\s*\([^)]*\))?\s+)?use\s+([^;]*);")
PATH_RE = re.compile(r"(?<![\w:$])([A-Za-z_]\w*)((?:::[A-Za-z_]\w*)+)")
RAW_STRING_RE = re.compile(r"b?r(#*)\"")
ATTRIBUTE_RE = re.compile(r"\s*#!?\[")
# `#[path = "x.rs"]` (and other attributes, a visibility) right before a `mod x;`.
PATH_ATTR_RE = re.compile(r"#\[path\s*=\s*\"([^\"]*)\"\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\s*\([^)]*\))?\s+)?$")
ITEM_START_RE = re.compile(
    r"\s*(?:pub(?:\s*\([^)]*\))?\s+)?(?:(?:unsafe|async|extern(?:\s+\"\s*\")?)\s+)*(\w+)"
)


def is_ident(c: str) -> bool:
    return c.isalnum() or c == "_"


def blank(text: str, start: int, end: int) -> str:
    """The text with [start, end) replaced by spaces, newlines kept (offsets and lines stay)."""
    return text[:start] + re.sub(r"[^\n]", " ", text[start:end]) + text[end:]


def strip_comments_and_strings(src: str) -> str:
    """Comments, string literals and char literals blanked (quotes kept), same length as `src`."""
    out = list(src)
    i, n = 0, len(src)

    def wipe(a: int, b: int) -> None:
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            wipe(i, j)
            i = j
        elif src.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if src.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif src.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            wipe(i, j)
            i = j
        elif (m := RAW_STRING_RE.match(src, i)) and (i == 0 or not is_ident(src[i - 1])):
            close = '"' + m.group(1)
            j = src.find(close, m.end())
            j = n if j < 0 else j
            wipe(m.end(), j)
            i = j + len(close)
        elif c == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            wipe(i + 1, j)
            i = j + 1
        elif c == "'":
            # A char literal ('x', '\n', '\u{1F600}') or a lifetime ('a, 'static).
            if src.startswith("\\", i + 1):
                j = src.find("'", i + 3)
                wipe(i + 1, j)
                i = j + 1
            elif i + 2 < n and src[i + 2] == "'":
                wipe(i + 1, i + 2)
                i += 3
            else:
                i += 1
        else:
            i += 1
    return "".join(out)


def matching(text: str, i: int) -> int:
    """The index just past the bracket that closes the one at `i`."""
    pairs = {"{": "}", "(": ")", "[": "]"}
    stack = [pairs[text[i]]]
    j = i + 1
    while stack:
        if j >= len(text):
            raise ValueError(f"unbalanced bracket at offset {i}")
        ch = text[j]
        if ch in pairs:
            stack.append(pairs[ch])
        elif ch == stack[-1]:
            stack.pop()
        j += 1
    return j


def item_end(text: str, i: int) -> int:
    """The end of the item that starts at `i` (after its attributes)."""
    while True:
        m = ATTRIBUTE_RE.match(text, i)
        if not m:
            break
        i = matching(text, m.end() - 1)
    kind = ITEM_START_RE.match(text, i)
    ends_at_semicolon = kind is not None and kind.group(1) in {"use", "const", "static", "type", "let"}
    j = i
    while j < len(text):
        ch = text[j]
        if ch == ";":
            return j + 1
        if ch in "([":
            j = matching(text, j)
        elif ch == "{":
            j = matching(text, j)
            if not ends_at_semicolon:
                return j
        else:
            j += 1
    return j


def strip_test_code(text: str) -> str:
    """Every item under `#[cfg(test)]` blanked, attribute included."""
    while (m := re.search(r"#\[cfg\(test\)\]", text)) is not None:
        text = blank(text, m.start(), item_end(text, m.end()))
    return text


Seen = frozenset[tuple[object, ...]]  # the imports a resolution has followed (no loops)


@dataclass
class Use:
    offset: int  # in the file
    path: list[str]
    name: str  # the name it binds, "*" for a glob
    public: bool  # `pub use` / `pub(crate) use`: a re-export


@dataclass
class Module:
    path: tuple[str, ...]
    file: Path
    parent: Module | None
    start: int = 0  # offset of `text` in its file
    text: str = ""  # this module's own text: its file's, with child inline modules blanked
    children: dict[str, Module] = field(default_factory=dict)
    defs: set[str] = field(default_factory=set)
    imports: dict[str, list[str]] = field(default_factory=dict)  # bound name -> path
    globs: list[list[str]] = field(default_factory=list)  # `use path::*`
    uses: list[Use] = field(default_factory=list)


def parse_use_tree(tree: str, prefix: list[str]) -> list[tuple[list[str], str]]:
    """(path, bound name) for each leaf of a use tree; the name is "*" for a glob."""
    tree = " ".join(tree.split()).strip()
    if tree.startswith("::"):
        return []  # `use ::dependency::...`
    if tree.endswith("}") and "{" in tree:
        brace = tree.index("{")
        head, body = tree[:brace], tree[brace + 1 : -1]
        base = prefix + [s.strip() for s in head.split("::") if s.strip()]
        leaves, depth, start = [], 0, 0
        for k, ch in enumerate(body + ","):
            depth += (ch == "{") - (ch == "}")
            if ch == "," and depth == 0:
                leaves += parse_use_tree(body[start:k], base)
                start = k + 1
        return leaves
    if not tree:
        return []
    path, _, alias = tree.partition(" as ")
    segs = prefix + [s.strip() for s in path.split("::") if s.strip()]
    if segs and segs[-1] == "self":
        segs = segs[:-1]
    if segs and segs[-1] == "*":
        return [(segs[:-1], "*")]
    return [(segs, alias.strip() or (segs[-1] if segs else ""))]


Resolved = tuple[str, "Module"]


class Crate:
    def __init__(self, root_file: Path) -> None:
        self.sources: dict[Path, str] = {}
        self.modules: list[Module] = []
        self.root = self._load_file(root_file, (), None)

    def _load_file(self, file: Path, path: tuple[str, ...], parent: Module | None) -> Module:
        raw = file.read_text()
        text = strip_test_code(strip_comments_and_strings(raw))
        self.sources[file] = text
        module = Module(path, file, parent)
        self._parse(module, raw, text, 0, len(text))
        return module

    def _parse(self, module: Module, raw: str, text: str, start: int, end: int) -> None:
        """Fill `module` from text[start:end], its body; recurse into its child modules."""
        self.modules.append(module)
        module.start = start
        region = text[start:end]
        depth = 0
        inline: list[tuple[int, int]] = []
        depths = []
        for ch in region:
            depths.append(depth)
            depth += (ch == "{") - (ch == "}")
        for m in MOD_RE.finditer(region):
            if depths[m.start()] != 0:
                continue
            name = m.group(1)
            if m.group(2) == "{":
                body = start + m.end() - 1
                close = matching(text, body)
                child = Module((*module.path, name), module.file, module)
                module.children[name] = child
                self._parse(child, raw, text, body + 1, close - 1)
                inline.append((m.start(), close - start))
            else:
                attrs = PATH_ATTR_RE.search(region[: m.start()])
                directory = module.file.parent
                if attrs:
                    child_file = directory / raw[start + attrs.start(1) : start + attrs.end(1)]
                elif module.file.name in ("lib.rs", "mod.rs"):
                    child_file = directory / f"{name}.rs"
                    if not child_file.exists():
                        child_file = directory / name / "mod.rs"
                else:
                    child_file = directory / module.file.stem / f"{name}.rs"
                module.children[name] = self._load_file(child_file, (*module.path, name), module)
        for a, b in inline:
            region = blank(region, a, b)
        module.text = region
        for m in DEF_RE.finditer(region):
            name = m.group(1) or m.group(2)
            if depths[m.start()] == 0 and name != "_":
                module.defs.add(name)
        for m in USE_RE.finditer(region):
            public = m.group(1) is not None
            for path, name in parse_use_tree(m.group(2), []):
                if name == "*":
                    module.globs.append(path)
                else:
                    module.imports.setdefault(name, path)
                module.uses.append(Use(start + m.start(), path, name, public))

    # Resolution. A path resolves to ("def", the module defining its item), ("module", the module
    # it names), ("unresolved", the last module it reached) or None (outside the crate).

    def resolve(self, ctx: Module, segs: list[str], seen: Seen = frozenset()) -> Resolved | None:
        mod = ctx
        if segs and segs[0] == "crate":
            mod, segs = self.root, segs[1:]
        elif segs and segs[0] in ("self", "super"):
            while segs and segs[0] in ("self", "super"):
                if segs[0] == "super":
                    if mod.parent is None:
                        return None
                    mod = mod.parent
                segs = segs[1:]
        elif not segs or self.lookup(ctx, segs[0], seen) is None:
            return None  # a name of another crate (std, a dependency), a local, a generic
        for k, seg in enumerate(segs):
            found = self.lookup(mod, seg, seen, last=k == len(segs) - 1)
            if found is None:
                return ("unresolved", mod)
            kind, where, target = found
            if kind == "module":
                mod = where
            elif kind == "def":
                return ("def", where)
            else:  # an import: follow it with the rest of the path
                key = (id(where), *target, *segs[k + 1 :])
                if key in seen:
                    return None
                return self.resolve(where, [*target, *segs[k + 1 :]], seen | {key})
        return ("module", mod)

    def lookup(
        self, mod: Module, name: str, seen: Seen, last: bool = False
    ) -> tuple[str, Module, list[str]] | None:
        """`name` in `mod`: ("module", child, []), ("def", mod, []) or ("import", mod, path).
        A module and an item may share a name (`mod merge_append;` and its re-exported fn
        `merge_append`): the item when the name ends the path, the module when more follows."""
        if name in mod.children and not (last and (name in mod.defs or name in mod.imports)):
            return ("module", mod.children[name], [])
        if name in mod.defs:
            return ("def", mod, [])
        if name in mod.imports:
            return ("import", mod, mod.imports[name])
        for glob in mod.globs:
            key = (id(mod), "*", *glob, name)
            if key in seen:
                continue
            target = self.resolve(mod, glob, seen | {key})
            if target and target[0] == "module":
                found = self.lookup(target[1], name, seen | {key}, last)
                if found is not None:
                    return found
        return None


def used_in(name: str, code: str) -> bool:
    """Whether `name` appears in `code` other than as a later path segment or a method."""
    return re.search(rf"(?<![\w:.]){re.escape(name)}\b", code) is not None


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def build_graph(crate: Crate) -> dict[Path, dict[Path, list[str]]]:
    """file -> used file -> reasons ("line N: path")."""
    graph: dict[Path, dict[Path, list[str]]] = defaultdict(lambda: defaultdict(list))

    def add(mod: Module, offset: int, segs: list[str]) -> None:
        found = crate.resolve(mod, segs)
        if found is None or found[0] == "module":
            return  # outside the crate, or a module (the paths through it count)
        target = found[1].file
        if target != mod.file:
            text = crate.sources[mod.file]
            graph[mod.file][target].append(f"{line_of(text, offset)}: {'::'.join(segs)}")

    for mod in crate.modules:
        code = mod.text
        for m in USE_RE.finditer(code):
            code = blank(code, m.start(), m.end())
        for m in MOD_RE.finditer(code):
            code = blank(code, m.start(), m.end())
        for use in mod.uses:
            if use.name == "*":
                target = crate.resolve(mod, use.path)
                if target and target[0] == "module":
                    tmod = target[1]
                    for name in tmod.defs | set(tmod.imports) | set(tmod.children):
                        if used_in(name, code):
                            add(mod, use.offset, [*use.path, name])
            elif not use.public or used_in(use.name, code):  # else a re-export only
                add(mod, use.offset, use.path)
        for m in PATH_RE.finditer(code):
            segs = [m.group(1), *m.group(2).split("::")[1:]]
            add(mod, mod.start + m.start(), segs)
    return graph


def cycles(graph: dict[Path, dict[Path, list[str]]]) -> list[list[Path]]:
    """Tarjan's strongly connected components of more than one node."""
    index: dict[Path, int] = {}
    low: dict[Path, int] = {}
    stack: list[Path] = []
    on_stack: set[Path] = set()
    found: list[list[Path]] = []
    counter = 0

    def visit(v: Path) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component: list[Path] = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def main(argv: list[str]) -> int:
    crate = Crate(CRATE_ROOT)
    graph = build_graph(crate)

    def rel(p: Path) -> str:
        return p.relative_to(ROOT).as_posix()

    if "--graph" in argv:
        for a in sorted(graph):
            for b in sorted(graph[a]):
                print(f"{rel(a)} -> {rel(b)}  ({'; '.join(graph[a][b][:3])})")
    found = cycles(graph)
    for component in found:
        print(f"circular use dependencies between {len(component)} files of the Rust crate:")
        members = set(component)
        for a in component:
            for b in sorted(graph[a]):
                if b in members:
                    print(f"  {rel(a)} -> {rel(b)}: line {', line '.join(graph[a][b][:4])}")
    if found:
        print("Move the shared items to the lower file (or a new one) so the files form no circle.")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
