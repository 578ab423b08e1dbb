"""The C tree's module graph, as any include scan sees it: every csrc .c has its own header (and every header its .c,
so no private header ties files together unseen), every function a .c exports is declared in that header, and the
graph of modules (X.c and X.h -> the modules of the headers they include) has no cycle."""
from __future__ import annotations

import re
from pathlib import Path

from conftest import ROOT

CSRC = ROOT / "csrc"
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# a function definition at file scope: `type name(params) {` (params may span lines), not `static`
DEFINITION = re.compile(r"^(?!static\b)(?!typedef\b)[A-Za-z_][\w \t\*]*?\b([A-Za-z_]\w*)\s*\(([^;{}()]|\([^()]*\))*\)\s*\{",
                        re.M)


def _sources() -> tuple[dict[str, Path], dict[str, Path]]:
    """{module: X.c}, {module: X.h}, a module being a path under csrc without its suffix (`pb/model`); the CUDA path
    (csrc/cuda, built by nvcc) is apart."""
    cs, hs = {}, {}
    for p in sorted(CSRC.rglob("*.[ch]")):
        rel = p.relative_to(CSRC)
        if rel.parts[0] == "cuda":
            continue
        (cs if p.suffix == ".c" else hs)[rel.with_suffix("").as_posix()] = p
    return cs, hs


def _graph() -> dict[str, set[str]]:
    """module -> the modules whose headers its .c or .h includes (every `#include "x.h"` is relative to csrc/)."""
    cs, hs = _sources()
    graph: dict[str, set[str]] = {}
    for mod in cs.keys() | hs.keys():
        deps = set()
        for path in (cs.get(mod), hs.get(mod)):
            if path is None:
                continue
            for inc in INCLUDE.findall(path.read_text()):
                dep = inc.removesuffix(".h")
                assert dep in hs, f"{path.relative_to(ROOT)}: #include \"{inc}\" is not a header under csrc/"
                if dep != mod:
                    deps.add(dep)
        graph[mod] = deps
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        path.append(n)
        for d in sorted(graph[n]):
            if state.get(d) == 1:
                return path[path.index(d):] + [d]
            if d not in state and (found := visit(d)):
                return found
        path.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state and (found := visit(n)):
            return found
    return None


def test_every_c_file_has_its_own_header_and_every_header_its_c_file():
    cs, hs = _sources()
    assert sorted(m + ".c" for m in cs.keys() - hs.keys()) == [], "a .c without its own header"
    assert sorted(m + ".h" for m in hs.keys() - cs.keys()) == [], "a header that no .c of its name implements"


def test_each_c_file_declares_its_functions_in_its_own_header():
    """So that a file calling a function includes the header of the file that defines it, and the include graph
    is the dependency graph."""
    cs, hs = _sources()
    wrong = []
    for mod, c in cs.items():
        own = hs[mod].read_text() if mod in hs else ""  # a missing header: the test above names it
        for m in DEFINITION.finditer(c.read_text()):
            name = m.group(1)
            if not re.search(rf"\b{name}\s*\(", own):
                wrong.append(f"{c.relative_to(ROOT)}: {name}")
    assert wrong == [], "functions defined here but declared elsewhere (or nowhere)"


def test_the_module_graph_has_no_cycle():
    assert _cycle(_graph()) is None


def test_the_scan_sees_a_cycle_and_the_definitions():
    """The checks themselves: a made-up cycle is found, and the definition pattern finds the functions of a file."""
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
    text = ("static int helper(int x) { return x; }\nint sb_one(const char *s,\n           size_t n) {\n}\n"
            "const double *sb_two(void) { return 0; }\ntypedef struct { int x; } t;\n")
    assert [m.group(1) for m in DEFINITION.finditer(text)] == ["sb_one", "sb_two"]
    graph = _graph()
    assert "pb/options" in graph["pb/model"] and "pb/model" not in graph["pb/options"]


def test_the_phrase_table_has_one_face():
    """pb/table.h is the one way to a phrase table: the sentence code includes no backend, no backend knows the model
    or the sentence, and the binarized file's writer and reader share only its format."""
    graph = _graph()
    backends = {"pb/table_mem", "pb/bin_read"}
    assert "pb/table" in graph["pb/lattice"] and not backends & graph["pb/lattice"]
    for b in backends:
        assert "pb/table" in graph[b] and not {"pb/model", "pb/lattice"} & graph[b]
    assert "pb/bin_format" in graph["pb/bin_read"] and "pb/bin_format" in graph["pb/bin_write"]
    assert "pb/bin_write" not in graph["pb/bin_read"] and "pb/bin_read" not in graph["pb/bin_write"]
