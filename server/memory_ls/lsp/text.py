"""Positions: the core counts code points, the client counts in its negotiated encoding."""

from __future__ import annotations

from lsprotocol import types

from memory_ls.lsp.server import MemoryServer


def client_column(ls: MemoryServer, line_text: str, column: int) -> int:
    """A code-point column of a line in the client's units (UTF-16 unless negotiated)."""
    prefix = line_text[:column]
    if prefix.isascii():  # one unit a character in every encoding (pygls counts them one by one)
        return len(prefix)
    return int(ls.workspace.position_codec.client_num_units(prefix))


def client_range(
    ls: MemoryServer, lines: list[str], line: int, start: int, end_line: int, end: int
) -> types.Range:
    """A code-point range in `lines` as an LSP range."""
    first = lines[line] if 0 <= line < len(lines) else ""
    last = lines[end_line] if 0 <= end_line < len(lines) else ""
    return types.Range(
        start=types.Position(line=line, character=client_column(ls, first, start)),
        end=types.Position(line=end_line, character=client_column(ls, last, end)),
    )
