"""Store diagnostics (SPEC 3.2) as plain data, shared by the language server and `check`.

What lives here: `base`, the `Diagnostic`, the names a check asks about (`NameIndex`),
severities and reading a file to check; one module per family of checks: `memory_checks`
(a memory file and its references: names, prefixes, routing, size, frontmatter, merge
conflicts), `duplicates` (near-duplicates, shadowing), `supersede` (supersede relations),
`repository` (context budget, stale paths), `line_scans` (an open document's scans kept
from one version to the next, and secrets); `text`, every check of one text at once.

May import: the storage, the rules and `memory_ls.config`; inside, each module only those
below it in the import-linter contract (text, the families, line_scans, base).
"""

from memory_ls.core.services.diagnostics.base import (
    READ_LIMIT_FACTOR,
    SEVERITY_ORDER,
    Diagnostic,
    NameIndex,
    Names,
    apply_severities,
    expand_paths,
    read_for_check,
)
from memory_ls.core.services.diagnostics.duplicates import (
    NEAR_DUPLICATES_NAMED,
    near_duplicate_diagnostic,
    shadow_map,
    store_duplicates,
)
from memory_ls.core.services.diagnostics.line_scans import (
    LineScans,
    PathMemo,
    ReferenceMemo,
    SecretMemo,
    secret_diagnostics,
)
from memory_ls.core.services.diagnostics.memory_checks import (
    conflict_diagnostics,
    memory_diagnostics,
    reference_diagnostics,
)
from memory_ls.core.services.diagnostics.repository import (
    repository_diagnostics,
    repository_snapshot,
    stale_path_diagnostic,
)
from memory_ls.core.services.diagnostics.supersede import (
    read_declaration,
    supersede_counts,
    supersede_diagnostics,
)
from memory_ls.core.services.diagnostics.text import editor_encoding_problem, text_diagnostics

__all__ = [
    "NEAR_DUPLICATES_NAMED",
    "READ_LIMIT_FACTOR",
    "SEVERITY_ORDER",
    "Diagnostic",
    "LineScans",
    "NameIndex",
    "Names",
    "PathMemo",
    "ReferenceMemo",
    "SecretMemo",
    "apply_severities",
    "conflict_diagnostics",
    "editor_encoding_problem",
    "expand_paths",
    "memory_diagnostics",
    "near_duplicate_diagnostic",
    "read_declaration",
    "read_for_check",
    "reference_diagnostics",
    "repository_diagnostics",
    "repository_snapshot",
    "secret_diagnostics",
    "shadow_map",
    "stale_path_diagnostic",
    "store_duplicates",
    "supersede_counts",
    "supersede_diagnostics",
    "text_diagnostics",
]
