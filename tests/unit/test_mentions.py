"""Which memories mention a path or a symbol (core/operations/mentions.py), through the full-text
index and by reading every memory, on real files."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest
from store_helpers import Workspace

from memory_ls.core import Store
from memory_ls.core.operations.mentions import memories_about, parse_target
from memory_ls.core.rules.errors import InvalidArguments
from memory_ls.core.services.search import SearchIndex

About = Callable[..., dict[str, Any]]

CART_NOTES = """\
---
tags: [shop]
note: frontmatter mentions src/shop/cart.py and is no mention
---
# Cart notes

The total is computed in `src/shop/cart.py:42`.
See [the cart](../../src/shop/cart.py#L10) for details.
Written from the root: [cart](src/shop/cart.py).
Run `./src/shop/cart.py` or `python src/shop/cart.py --check`.
In prose: src/shop/cart.py, then nothing.
```
src/shop/cart.py in a fence is code, not a mention
```
Nothing here.
"""


@pytest.fixture
def store(ws: Workspace) -> Store:
    """A store whose workspace has src/shop/cart.py and src/lib/cart.py."""
    ws.write(ws.root / "src" / "shop" / "cart.py", "class Cart: ...\n")
    ws.write(ws.root / "src" / "lib" / "cart.py", "")
    return ws.store(["team"])


@pytest.fixture(params=["index", "scan"])
def about(request: pytest.FixtureRequest, store: Store) -> About:
    """memories_about through the full-text index (proved to answer), or reading every memory."""
    if request.param == "scan":
        return lambda target, **kw: memories_about(store, target, **kw)
    index = SearchIndex(store.config, live=False)
    indexed = Store(store.config, index)

    def through_index(target: str, **kw: Any) -> dict[str, Any]:
        assert index.files_with_phrases([["cart"]]) is not None, "the index must answer"
        return memories_about(indexed, target, **kw)

    return through_index


def _lines(result: dict[str, Any], name: str) -> list[tuple[int, str]]:
    memory = next(m for m in result["memories"] if m["name"] == name)
    return [(line["line"], line["match"]) for line in memory["lines"]]


def _names(result: dict[str, Any]) -> list[str]:
    return [m["name"] for m in result["memories"]]


def _notes(ws: Workspace) -> None:
    ws.write(ws.primary / "cart_notes.md", CART_NOTES)


def test_every_way_of_writing_the_path(ws: Workspace, about: About) -> None:
    _notes(ws)
    result = about("src/shop/cart.py")
    assert _names(result) == ["cart_notes"]
    memory = result["memories"][0]
    assert memory["title"] == "Cart notes"
    assert memory["match"] == "path"
    assert memory["moreLines"] == 0
    # Code with a location, a link from the memory's folder, one from the root, `./`,
    # a command, prose; not the frontmatter, not the fenced block.
    assert _lines(result, "cart_notes") == [(i, "path") for i in (7, 8, 9, 10, 11)]
    assert memory["lines"][0]["text"] == "The total is computed in `src/shop/cart.py:42`."


@pytest.mark.parametrize(
    "target",
    ["src/shop/cart.py", "./src/shop/cart.py", "`src/shop/cart.py`", "src/shop/cart.py:12"],
)
def test_forms_of_the_target(ws: Workspace, about: About, target: str) -> None:
    _notes(ws)
    assert _lines(about(target), "cart_notes")[0] == (7, "path")


def test_an_absolute_target_inside_the_workspace(ws: Workspace, store: Store, about: About) -> None:
    _notes(ws)
    absolute = os.path.join(store.config.root, "src", "shop", "cart.py")
    assert about(absolute)["targetPath"] == "src/shop/cart.py"
    assert _lines(about(absolute), "cart_notes")[0] == (7, "path")


def test_exact_path_before_same_name_before_symbol(store: Store, about: About) -> None:
    store.save("exact", "Totals: [cart](../../src/shop/cart.py).\n")
    store.save("elsewhere", "The other one, `src/lib/cart.py`.\n")
    store.save("partial", "Half a path: `shop/cart.py`.\n")
    store.save("module", "Import it: `from shop.cart import Cart`.\n")
    store.save("unrelated", "The cart page, `src/shop/carts.py` and `cart.pyc`.\n")
    result = about("src/shop/cart.py")
    assert _names(result) == ["exact", "partial", "elsewhere", "module"]
    assert [m["match"] for m in result["memories"]] == ["path", "name", "name", "symbol"]


def test_a_file_name_finds_it_everywhere(store: Store, about: About) -> None:
    store.save("shop", "In `src/shop/cart.py`.\n")
    store.save("lib", "In [lib](../../src/lib/cart.py).\n")
    store.save("bare", "Just `cart.py` here.\n")
    result = about("cart.py")
    assert sorted(_names(result)) == ["bare", "lib", "shop"]
    assert {m["match"] for m in result["memories"] if m["name"] != "bare"} == {"name"}


def test_a_partial_path_without_extension(store: Store, about: About) -> None:
    store.save("shop", "In `src/shop/cart.py`.\n")
    store.save("lib", "In `src/lib/cart.py`.\n")
    store.save("other", "In `src/shop/cartography.py`.\n")
    result = about("shop/cart")
    assert _names(result) == ["shop", "lib"]  # two segments in common, then one


def test_symbols_in_inline_code(store: Store, about: About) -> None:
    store.save("call", "Call `Cart.total()` for the sum.\n")
    store.save("qualified", "It is `shop.cart.Cart.total`.\n")
    store.save("rust", "Like `Cart::total` in Rust.\n")
    store.save("longer", "Not `Cart.totals` nor `MyCart.total` nor `cart.total`.\n")
    store.save("prose", "Cart.total in prose is no code.\n")
    result = about("Cart.total")
    assert sorted(_names(result)) == ["call", "qualified", "rust"]
    assert {m["match"] for m in result["memories"]} == {"symbol"}
    assert _names(about("Cart.total()")) == _names(result)


def test_a_folder_finds_what_is_inside(store: Store, about: About) -> None:
    store.save("folder", "All of `src/shop/` is the shop.\n")
    store.save("file", "In [cart](../../src/shop/cart.py).\n")
    store.save("elsewhere", "In `vendor/shop/x.py`.\n")
    result = about("src/shop")
    assert _names(result) == ["folder", "file"]
    assert [m["match"] for m in result["memories"]] == ["path", "inside"]


def test_a_percent_encoded_link(ws: Workspace, store: Store, about: About) -> None:
    ws.write(ws.root / "docs" / "my notes.md", "")
    store.save("linked", "See [notes](../../docs/my%20notes.md).\n")
    assert _lines(about("docs/my notes.md"), "linked") == [(1, "path")]


def test_limit_says_how_many_more(store: Store, about: About) -> None:
    for number in range(5):
        store.save(f"note{number}", "In `src/shop/cart.py`.\n" * (number + 1))
    result = about("src/shop/cart.py", limit=2)
    assert _names(result) == ["note4", "note3"]  # more mentioning lines first
    assert result["more"] == 3
    assert result["memories"][0]["moreLines"] == 0
    many = "\n".join(f"Line {i}: `src/shop/cart.py`" for i in range(8)) + "\n"
    store.save("note4", many)
    memory = about("src/shop/cart.py", limit=1)["memories"][0]
    assert (len(memory["lines"]), memory["moreLines"]) == (5, 3)


def test_a_shadowed_memory_is_not_listed(ws: Workspace, store: Store, about: About) -> None:
    store.save("notes", "Primary: `src/shop/cart.py`.\n")
    ws.write(ws.root / "team" / "notes.md", "Shadowed: `src/shop/cart.py`.\n")
    ws.write(ws.root / "team" / "team_only.md", "Shared: `src/shop/cart.py`.\n")
    result = about("src/shop/cart.py")
    assert sorted(
        (m["name"], os.path.basename(os.path.dirname(m["path"]))) for m in result["memories"]
    ) == [
        ("notes", "memories"),
        ("team_only", "team"),
    ]


def test_files_changed_since_indexing(ws: Workspace, store: Store) -> None:
    index = SearchIndex(store.config, live=False)
    indexed = Store(store.config, index)
    store.save("before", "In `src/shop/cart.py`.\n")
    store.save("later", "Nothing yet.\n")
    assert _names(memories_about(indexed, "src/shop/cart.py")) == ["before"]
    # Changed behind the index's back, mtimes kept apart from the first indexing.
    path = ws.primary / "before.md"
    path.write_text("No longer.\n", encoding="utf-8")
    os.utime(path, ns=(1, 1))
    later = ws.primary / "later.md"
    later.write_text("Now: [cart](../../src/shop/cart.py) twice `src/shop/cart.py`.\n")
    os.utime(later, ns=(2, 2))
    ws.write(ws.primary / "new" / "one.md", "Also `src/shop/cart.py`.\n")
    result = memories_about(indexed, "src/shop/cart.py")
    assert _names(result) == ["new/one", "later"] or _names(result) == ["later", "new/one"]
    assert set(_names(result)) == {"later", "new/one"}
    os.remove(later)
    assert _names(memories_about(indexed, "src/shop/cart.py")) == ["new/one"]


def test_unsaved_texts_win_over_the_disk(store: Store) -> None:
    indexed = Store(store.config, SearchIndex(store.config, live=False))
    memory = store.save("draft", "Nothing yet.\n")
    texts = {memory["path"]: "# Draft\nNow about `src/shop/cart.py`.\n"}
    result = memories_about(indexed, "src/shop/cart.py", texts=texts)
    assert _lines(result, "draft") == [(2, "path")]
    assert memories_about(indexed, "src/shop/cart.py")["memories"] == []


@pytest.mark.parametrize(
    "target", ["", "  ", "../outside.py", "/elsewhere/x.py", "`__`", ".", "\ud800x.py"]
)
def test_targets_that_name_nothing_are_refused(store: Store, target: str) -> None:
    with pytest.raises(InvalidArguments):
        memories_about(store, target)


@pytest.mark.parametrize("limit", [0, -1, True, "3"])
def test_a_bad_limit_is_refused(store: Store, limit: object) -> None:
    with pytest.raises(InvalidArguments):
        memories_about(store, "cart.py", limit)


def test_parse_target_words() -> None:
    target = parse_target("src/shop/cart.py", "/work")
    assert target.phrases == (("cart", "py"), ("shop", "cart"))
    assert target.symbol is not None and target.symbol.search("`from shop.cart import`")
    assert parse_target("Cart::total", "/work").phrases == (("cart", "total"),)
