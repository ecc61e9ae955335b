"""What every tool needs: the store of each call and the tool names as offered."""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import Field

from memory_ls.mcp.stores import StoreFactory


@dataclass(frozen=True)
class ToolContext:
    """The store factory and the offered tool names (a --tool-prefix may change them)."""

    stores: StoreFactory
    names: Mapping[str, str]


Scope = Literal["project", "global"]
ListScope = Literal["project", "global", "all"]
Name = Annotated[str, Field(description="The memory name, e.g. `FEATURE_auth`, `auth/login`.")]
Tags = Annotated[list[str] | None, Field(description="Tags to store in the frontmatter.")]
TagFilter = Annotated[
    list[str] | None, Field(description="Only memories that have all of these tags.")
]
ExpectedVersion = Annotated[
    str | None,
    Field(
        description="The version a read answered: refuse (version-conflict) if the memory "
        "changed since, so nobody's edit is lost."
    ),
]
