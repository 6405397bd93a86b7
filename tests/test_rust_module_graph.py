"""No circle between Rust files: the file-level dependency graph of every crate's `src/` is acyclic.

An edge a.rs -> b.rs is a `use` declaration or an inline path (`crate::x::y`, `super::x`, `self::x`)
in a.rs that names an item of b.rs. What is not an edge:
- `mod child;` in a parent: declaring the module tree is not a dependency;
- `pub use child::Item;` in a parent (a facade re-exporting what its children define), unless the
  parent's own code uses `Item`. A path through such a re-export (`crate::tcp::Sender`) is followed
  to the file that defines the item (`tcp/sender.rs`).
Comments and string literals are ignored; `#[cfg(test)]` code counts (it is compiled code too).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

Module = tuple[str, ...]


def strip_comments_and_strings(text: str) -> str:
    """`text` with comments, string and char literals blanked out (newlines kept, so lines still count)."""
    out: list[str] = []
    i, n = 0, len(text)

    def blank(chunk: str) -> str:
        return "".join(c if c == "\n" else " " for c in chunk)

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(blank(text[i:j]))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(blank(text[i:j]))
            i = j
        elif m := re.compile(r'b?r(#*)"').match(text, i):
            if i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_"):
                out.append(c)
                i += 1
                continue
            end = text.find('"' + m.group(1), m.end())
            j = n if end < 0 else end + 1 + len(m.group(1))
            out.append(blank(text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(blank(text[i : j + 1]))
            i = j + 1
        elif m := re.compile(r"'(\\.[^']*|[^'\\\n])'").match(text, i):
            out.append(blank(m.group(0)))
            i = m.end()
        else:
            out.append(c)
            i += 1
    return "".join(out)


def expand_use_tree(tree: str) -> list[tuple[list[str], str | None]]:
    """Paths named by a use tree, each with the name it binds: `a::{b, c::{self, d as e}}` ->
    [(a::b, b), (a::c, c), (a::c::d, e)]; a glob binds no name."""
    tree = re.sub(r"\s+", "", re.sub(r"\s+as\s+", "@", tree)).lstrip(":")

    def split_top(s: str) -> list[str]:
        parts, depth, start = [], 0, 0
        for k, ch in enumerate(s):
            depth += {"{": 1, "}": -1}.get(ch, 0)
            if ch == "," and depth == 0:
                parts.append(s[start:k])
                start = k + 1
        parts.append(s[start:])
        return [p for p in parts if p]

    def walk(prefix: list[str], s: str) -> list[tuple[list[str], str | None]]:
        brace = s.find("{")
        if brace >= 0:
            head = [p for p in s[:brace].split("::") if p]
            inner = s[brace + 1 : s.rindex("}")]
            return [r for part in split_top(inner) for r in walk(prefix + head, part)]
        path, _, alias = s.partition("@")  # `d as e` became `d@e`
        segs = prefix + [p for p in path.split("::") if p]
        if segs and segs[-1] == "self":
            segs = segs[:-1]
            return [(segs, alias or (segs[-1] if segs else None))]
        if segs and segs[-1] == "*":
            return [(segs[:-1], None)]
        return [(segs, alias or (segs[-1] if segs else None))]

    return walk([], tree)


TOKEN = re.compile(
    r"(?P<mod>\bmod\s+(?P<modname>\w+)\s*(?P<modend>[;{]))"
    r"|(?P<use>(?P<pub>\bpub(?:\s*\([^)]*\))?\s+)?\buse\s+(?P<tree>[^;]+);)"
    r"|(?P<path>(?<![\w$])\$?(?:crate|super|self)(?:\s*::\s*\w+)+)"
    r"|(?P<open>\{)|(?P<close>\})"
)


@dataclass
class Reference:
    path: Module  # absolute module path of the item referred to
    line: int
    text: str
    binds: str | None = None  # the name a `use` binds in this file
    public: bool = False


@dataclass
class SourceFile:
    rel: str
    module: Module
    code: str
    children: set[str] = field(default_factory=set)
    refs: list[Reference] = field(default_factory=list)


def module_of(rel: Path) -> Module:
    parts = list(rel.with_suffix("").parts)
    if parts[-1] in ("lib", "main", "mod"):
        parts = parts[:-1]
    return tuple(parts)


def parse(src: Path, path: Path) -> SourceFile:
    rel = path.relative_to(src)
    code = strip_comments_and_strings(path.read_text())
    f = SourceFile(str(rel), module_of(rel), code)
    f.children = {m.group("modname") for m in TOKEN.finditer(code) if m.group("mod")}
    # Inline modules (`mod tests { ... }`) shift what `super` and `self` mean.
    inline: list[tuple[str, int]] = []
    depth = 0
    for m in TOKEN.finditer(code):
        line = code.count("\n", 0, m.start()) + 1
        here = f.module + tuple(name for name, _ in inline)
        if m.group("mod"):
            if m.group("modend") == "{":
                depth += 1
                inline.append((m.group("modname"), depth))
        elif m.group("open"):
            depth += 1
        elif m.group("close"):
            if inline and inline[-1][1] == depth:
                inline.pop()
            depth -= 1
        elif m.group("use"):
            for segs, binds in expand_use_tree(m.group("tree")):
                target = absolute(segs, here, f.children if not inline else set())
                if target is not None:
                    f.refs.append(Reference(target, line, m.group(0).strip(), binds, bool(m.group("pub"))))
        elif m.group("path"):
            segs = re.sub(r"\s+", "", m.group("path")).lstrip("$").split("::")
            target = absolute(segs, here, set())
            if target is not None:
                f.refs.append(Reference(target, line, m.group("path")))
    return f


def absolute(segs: list[str], here: Module, children: set[str]) -> Module | None:
    """The absolute module path of `segs` written in module `here`; None for another crate's path."""
    if not segs:
        return None
    if segs[0] in ("crate", "$crate"):
        return tuple(segs[1:])
    if segs[0] in ("super", "self"):
        base = list(here)
        while segs and segs[0] in ("super", "self"):
            if segs.pop(0) == "super":
                base.pop()
        return tuple(base + segs)
    if segs[0] in children:  # 2018-edition relative path to a child module
        return here + tuple(segs)
    return None


@dataclass
class Edge:
    target: str
    line: int
    text: str


def crate_graph(src: Path) -> dict[str, dict[str, Edge]]:
    """File -> {file it depends on -> the first reference that makes the edge}."""
    files = {f.module: f for f in (parse(src, p) for p in sorted(src.rglob("*.rs")))}

    def is_reexport(f: SourceFile, ref: Reference) -> bool:
        return ref.public and ref.path[: len(f.module)] == f.module and len(ref.path) > len(f.module)

    def resolve(path: Module, seen: frozenset[Module] = frozenset()) -> SourceFile:
        for k in range(len(path), -1, -1):
            if path[:k] in files:
                owner, rest = files[path[:k]], path[k:]
                break
        if rest and (owner.module, rest[0]) not in seen:
            for ref in owner.refs:
                if ref.binds == rest[0] and is_reexport(owner, ref):
                    return resolve(ref.path + rest[1:], seen | {(owner.module, rest[0])})
        return owner

    graph: dict[str, dict[str, Edge]] = {f.rel: {} for f in files.values()}
    for f in files.values():
        uses_outside = re.sub(TOKEN.pattern, lambda m: " " if m.group("use") else m.group(0), f.code)
        for ref in f.refs:
            if is_reexport(f, ref) and not (ref.binds and re.search(rf"\b{re.escape(ref.binds)}\b", uses_outside)):
                continue  # a facade re-export the parent itself does not use
            target = resolve(ref.path).rel
            if target != f.rel:
                graph[f.rel].setdefault(target, Edge(target, ref.line, ref.text))
    return graph


def find_cycle(graph: dict[str, dict[str, Edge]]) -> list[str] | None:
    """A cycle as [a, b, ..., a], or None."""
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def describe(graph: dict[str, dict[str, Edge]], cycle: list[str]) -> str:
    steps = [f"{a}:{graph[a][b].line} `{graph[a][b].text}` -> {b}" for a, b in zip(cycle, cycle[1:])]
    return "circle between Rust files:\n  " + "\n  ".join(steps)


def crate_sources() -> list[Path]:
    return sorted(p for p in (ROOT / "crates").glob("*/src") if p.is_dir())


def test_every_crate_is_found():
    names = {p.parent.name for p in crate_sources()}
    assert {"ccsim-core", "ccsim-cc", "ccsim-py"} <= names


def test_no_circle_between_rust_files():
    for src in crate_sources():
        graph = crate_graph(src)
        cycle = find_cycle(graph)
        assert cycle is None, f"{src.parent.name}: {describe(graph, cycle)}"


def test_graph_sees_the_real_edges():
    """The parser finds the dependencies that exist today (a parser that finds nothing finds no circle)."""
    core = crate_graph(ROOT / "crates/ccsim-core/src")
    assert "tcp/rtt.rs" in core["tcp/sender.rs"]  # use crate::tcp::rtt::RttEstimator
    assert "ranges.rs" in core["tcp/receiver.rs"]  # inline path crate::ranges::insert_merged
    assert "queue/discipline.rs" in core["link.rs"]  # use crate::queue::{QueueDiscipline, ..}, a re-export
    cc = crate_graph(ROOT / "crates/ccsim-cc/src")
    assert "lib.rs" in cc["algorithms/chd.rs"]  # use crate::{AckSample, ...}
    assert "algorithms/delay_probability.rs" in cc["algorithms/chd.rs"]  # use super::delay_probability


def write_crate(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def test_detects_a_factory_beside_its_trait(tmp_path):
    """The shape this test was written against: the queue trait's file builds RED, RED implements it."""
    src = write_crate(tmp_path, {
        "lib.rs": "pub mod queue;\npub mod red;\n",
        "queue.rs": "use crate::red::{Red, RedParams};\npub trait QueueDiscipline {}\n"
                    "pub fn build() -> Box<dyn QueueDiscipline> { Box::new(Red::new()) }\n",
        "red.rs": "use crate::queue::{QueueDiscipline, QueueState};\npub struct Red;\n",
    })
    graph = crate_graph(src)
    cycle = find_cycle(graph)
    assert cycle in (["queue.rs", "red.rs", "queue.rs"], ["red.rs", "queue.rs", "red.rs"])
    assert "queue.rs:1 `use crate::red::{Red, RedParams};` -> red.rs" in describe(graph, cycle)


def test_detects_inline_paths_super_and_test_modules(tmp_path):
    src = write_crate(tmp_path, {
        "lib.rs": "pub mod a;\n",
        "a/mod.rs": "pub mod b;\npub mod c;\nfn f() { let _ = super::a::c::g(); }\n",
        "a/b.rs": "#[cfg(test)]\nmod tests {\n    use super::super::c::g;\n}\n",
        "a/c.rs": "// crate::a::b is only a comment\npub fn g() { let s = \"crate::a::b\"; crate::a::b::h(); }\n",
    })
    graph = crate_graph(src)
    assert graph["a/mod.rs"] == {"a/c.rs": graph["a/mod.rs"]["a/c.rs"]}
    assert set(graph["a/b.rs"]) == {"a/c.rs"}
    assert set(graph["a/c.rs"]) == {"a/b.rs"}
    assert find_cycle(graph) in (["a/b.rs", "a/c.rs", "a/b.rs"], ["a/c.rs", "a/b.rs", "a/c.rs"])


def test_a_facade_reexport_is_no_edge_but_is_followed(tmp_path):
    """lib.rs re-exporting `tcp::Sender` does not depend on it; `crate::tcp::Sender` means tcp/sender.rs."""
    src = write_crate(tmp_path, {
        "lib.rs": "pub mod tcp;\npub mod sim;\npub use sim::Simulation;\npub struct Time;\n",
        "tcp/mod.rs": "pub mod sender;\npub use sender::Sender;\n",
        "tcp/sender.rs": "use crate::Time;\npub struct Sender;\n",
        "sim.rs": "use crate::tcp::Sender;\npub struct Simulation;\n",
    })
    graph = crate_graph(src)
    assert set(graph["sim.rs"]) == {"tcp/sender.rs"}
    assert set(graph["tcp/sender.rs"]) == {"lib.rs"}
    assert graph["lib.rs"] == {} and graph["tcp/mod.rs"] == {}
    assert find_cycle(graph) is None
    # ...but a parent that uses what it re-exports depends on it.
    (src / "lib.rs").write_text("pub mod tcp;\npub mod sim;\npub use sim::Simulation;\npub struct Time;\n"
                                "pub fn run(s: Simulation) {}\n")
    (src / "sim.rs").write_text("use crate::tcp::Sender;\nuse crate::Time;\npub struct Simulation;\n")
    graph = crate_graph(src)
    assert find_cycle(graph) in (["lib.rs", "sim.rs", "lib.rs"], ["sim.rs", "lib.rs", "sim.rs"])
