"""write_memory and edit_memory: writes answered with what the store's check finds."""

from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal

from mcp.types import CallToolResult
from pydantic import Field, Strict

from memory_ls.core.operations.report import answer_with_findings, index_note
from memory_ls.core.rules.errors import TooLarge
from memory_ls.core.store import Store
from memory_ls.mcp.answers import answer
from memory_ls.mcp.results import EditResult, SaveResult
from memory_ls.mcp.tools.context import ExpectedVersion, Name, Scope, Tags, ToolContext
from memory_ls.mcp.wording import save_reason

# Serena's `default_max_tool_answer_chars`: the content limit of write_memory(max_chars=-1).
SERENA_DEFAULT_MAX_CHARS = 150_000
# A replacement this much shorter than what it replaced was probably meant as an addition.
SHRINK_WARNING_RATIO = 0.5


def check_max_chars(memory_name: str, content: str, max_chars: int) -> None:
    """Serena's write_memory limit and words (repl/api/mem_api.py), before the store's bytes."""
    limit = SERENA_DEFAULT_MAX_CHARS if max_chars == -1 else max_chars
    if len(content) > limit:
        raise TooLarge(
            f"Content for {memory_name} is too long. Max length is {limit} characters. "
            "Please make the content shorter."
        )


def sizes(result: Mapping[str, Any]) -> str:
    """Bytes before and after, and the new version (and the one replaced)."""
    before, after = result["bytesBefore"], result["bytesAfter"]
    if before is None:
        return f"{after} bytes, version {result['version']}"
    text = f"{before} -> {after} bytes, version {result['previousVersion']} -> {result['version']}"
    if after < before * SHRINK_WARNING_RATIO:
        text += (
            "; the new content is much shorter than what it replaced: if you meant to add "
            "to the memory, restore it and use edit_memory"
        )
    return text


def checked_answer(store: Store, result: dict[str, Any], head: str) -> CallToolResult:
    """A write's answer: what happened, then what the check finds in the memory now."""
    result, findings = answer_with_findings(store, result)
    return answer(f"{head}\n{findings}" if findings else head, result)


def write_memory(ctx: ToolContext) -> Callable[..., Any]:
    """The write_memory tool: Serena's parameters, then memory-ls's own."""

    def write_memory(
        memory_name: Name,
        content: Annotated[str, Field(description="The Markdown text of the memory (UTF-8).")],
        max_chars: Annotated[
            int,
            Strict(),
            Field(description=f"The longest content accepted; -1: {SERENA_DEFAULT_MAX_CHARS}."),
        ] = -1,
        tags: Tags = None,
        scope: Annotated[
            Scope | None,
            Field(description='"global" writes to the personal global folder; default project.'),
        ] = None,
        expected_version: ExpectedVersion = None,
        create_only: Annotated[
            bool,
            Strict(),
            Field(description="Refuse (exists) rather than replace a memory of this name."),
        ] = False,
    ) -> Annotated[CallToolResult, SaveResult]:
        def act(store: Store) -> CallToolResult:
            check_max_chars(memory_name, content, max_chars)
            # Checked against the version this session read, unless told one; create_only
            # replaces nothing, so it also recreates a memory deleted since it was read.
            result = ctx.versions.guarded(
                store,
                memory_name,
                scope,
                expected_version,
                lambda version: store.save(
                    memory_name,
                    content,
                    tags,
                    scope,
                    expected_version=version,
                    create_only=create_only,
                ),
                check=not create_only,
            )
            why = save_reason(result, store.config)
            if result["routedBy"] == "existing":
                head = f"Saved {result['name']}: replaced in place at {result['path']} ({why})"
            else:
                head = f"Saved {result['name']}: created at {result['path']} ({why})"
            note = index_note(result)
            head = f"{head}; {sizes(result)}." + (f" {note}" if note else "")
            return checked_answer(store, result, head)

        return ctx.stores.run(act)

    return write_memory


def edit_memory(ctx: ToolContext) -> Callable[..., Any]:
    """The edit_memory tool: Serena's needle and replacement, in place."""

    def edit_memory(
        memory_name: Name,
        needle: Annotated[
            str, Field(description='The text to find, or a regular expression in mode "regex".')
        ],
        repl: Annotated[
            str, Field(description="The replacement, verbatim; in regex mode $!1 is group 1.")
        ],
        mode: Annotated[
            Literal["literal", "regex"],
            Field(description='"literal" or "regex" (Python syntax, MULTILINE and DOTALL).'),
        ],
        allow_multiple_occurrences: Annotated[
            bool,
            Strict(),
            Field(description="Replace every match; otherwise more than one match is refused."),
        ] = False,
        expected_version: ExpectedVersion = None,
    ) -> Annotated[CallToolResult, EditResult]:
        def act(store: Store) -> CallToolResult:
            result = ctx.versions.guarded(
                store,
                memory_name,
                None,
                expected_version,
                lambda version: store.edit(
                    memory_name,
                    needle=needle,
                    replacement=repl,
                    mode=mode,
                    allow_multiple=allow_multiple_occurrences,
                    expected_version=version,
                ),
            )
            count = result["replacements"]
            head = (
                f"Edited {result['name']} in place at {result['path']} "
                f"({count} replacement{'' if count == 1 else 's'}; {sizes(result)})."
            )
            return checked_answer(store, result, head)

        return ctx.stores.run(act)

    return edit_memory
