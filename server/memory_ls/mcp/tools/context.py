"""What every tool needs: the store of each call and the tool names as offered."""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Literal

from pydantic import Field

from memory_ls.mcp.session import SessionVersions
from memory_ls.mcp.stores import StoreFactory


@dataclass(frozen=True)
class ToolContext:
    """The store factory, the offered tool names (a --tool-prefix may change them), and
    the versions of the memories this session read (one process is one session)."""

    stores: StoreFactory
    names: Mapping[str, str]
    versions: SessionVersions = field(default_factory=SessionVersions)


Scope = Literal["project", "global"]
ListScope = Literal["project", "global", "all"]
Name = Annotated[str, Field(description="The memory name, e.g. `FEATURE_auth`, `auth/login`.")]
Tags = Annotated[list[str] | None, Field(description="Tags to store in the frontmatter.")]
TagFilter = Annotated[
    list[str] | None, Field(description="Only memories that have all of these tags.")
]
ExpectedVersion = Annotated[
    str | None,
    Field(description="The version a read answered: refuse if the memory changed since."),
]
