"""memory-ls: the store, language server and command-line tool for agents' Markdown memories."""

__version__ = "0.1.0"
