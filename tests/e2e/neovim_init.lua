-- memory-ls in Neovim 0.7+ (init.lua). Markdown buffers attach to one shared client;
-- complete with <C-x><C-o> after `[[` or `mem:`, diagnostics show as you type.
local memory_ls
vim.api.nvim_create_autocmd("FileType", {
  pattern = "markdown",
  callback = function(args)
    memory_ls = memory_ls or vim.lsp.start_client({
      name = "memory-ls",
      cmd = { "memory-ls", "serve" }, -- or { "python3", "-m", "memory_ls" }
      root_dir = vim.fn.getcwd(),
      init_options = { additionalFolders = { "shared/feature", "shared/spec" } },
      settings = { memoryLs = { diagnostics = { ["unknown-prefix"] = "hint" } } },
    })
    vim.lsp.buf_attach_client(args.buf, memory_ls)
    vim.bo[args.buf].omnifunc = "v:lua.vim.lsp.omnifunc"
  end,
})
