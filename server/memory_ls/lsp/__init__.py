"""The language server: one module per LSP feature, each with `register(server)`."""
