"""The server's compile cache: code objects come back as compile() would make them."""

from __future__ import annotations

import ast
import builtins
import gc
from pathlib import Path

from memory_ls.lsp import startup
from memory_ls.lsp.startup import _CompileCache

SOURCE = "def f(x: int) -> int:\n    return x + 1\n"


def run(code: object) -> dict[str, object]:
    namespace: dict[str, object] = {}
    exec(code, namespace)
    return namespace


def test_a_second_start_takes_the_code_from_the_file(tmp_path: Path) -> None:
    path = tmp_path / "compiled.marshal"
    first = _CompileCache(path)
    made = first.compile(SOURCE, "<generated f>", "exec")
    assert first.compiled == 1
    first.save()

    second = _CompileCache(path)
    again = second.compile(SOURCE, "<generated f>", "exec")
    assert second.compiled == 0
    assert again == made
    assert again.co_filename == "<generated f>"
    assert run(again)["f"](1) == 2  # type: ignore[operator]


def test_the_callers_future_imports_still_apply(tmp_path: Path) -> None:
    cache = _CompileCache(tmp_path / "compiled.marshal")
    # This module has `from __future__ import annotations`: annotations stay text, as
    # compile() called from here would have them.
    inherited = run(cache.compile(SOURCE, "<f>", "exec"))["f"]
    assert inherited.__annotations__ == {"x": "int", "return": "int"}  # type: ignore[attr-defined]
    plain = run(cache.compile(SOURCE, "<f>", "exec", dont_inherit=True))["f"]
    assert plain.__annotations__ == {"x": int, "return": int}  # type: ignore[attr-defined]
    assert cache.compiled == 2  # two different compilations, two entries


def test_asts_and_bytes_are_passed_through(tmp_path: Path) -> None:
    cache = _CompileCache(tmp_path / "compiled.marshal")
    tree = cache.compile(SOURCE, "<f>", "exec", ast.PyCF_ONLY_AST)
    assert isinstance(tree, ast.Module)
    assert run(cache.compile(SOURCE.encode(), "<f>", "exec"))["f"]
    cache.save()
    assert not (tmp_path / "compiled.marshal").exists()  # nothing cacheable was used


def test_a_damaged_file_is_made_again(tmp_path: Path) -> None:
    path = tmp_path / "compiled.marshal"
    path.write_bytes(b"\x00not marshal data at all")
    cache = _CompileCache(path)
    assert cache.known == {}
    cache.compile(SOURCE, "<f>", "exec")
    cache.save()
    assert len(_CompileCache(path).known) == 1


def test_only_what_a_start_used_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "compiled.marshal"
    old = _CompileCache(path)
    old.compile("a = 1", "<old>", "exec")
    old.save()
    new = _CompileCache(path)
    new.compile("b = 2", "<new>", "exec")
    new.save()
    assert [code.co_filename for code in _CompileCache(path).known.values()] == ["<new>"]


def test_begin_and_end_restore_compile_and_collection(tmp_path: Path) -> None:
    real = builtins.compile
    startup.begin(tmp_path / "compiled.marshal")
    try:
        assert builtins.compile is not real
        assert not gc.isenabled()
        assert run(compile("x = 40 + 2", "<begun>", "exec"))["x"] == 42
    finally:
        startup.end()
        gc.unfreeze()  # end() froze what this test process holds
    assert builtins.compile is real
    assert gc.isenabled()
