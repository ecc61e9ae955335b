-- Drives memory-ls from a real Neovim (0.7 API): completion after `[[` and one command.
-- Inputs come from the environment; the results are written as JSON to MLS_OUT.
local root = os.getenv("MLS_ROOT")
local out_path = os.getenv("MLS_OUT")
local results = {}

local function finish(ok)
  vim.fn.writefile({ vim.fn.json_encode(results) }, out_path)
  vim.cmd(ok and "qa!" or "cq!")
end

-- The client is started here, or (MLS_CMD unset) by the user's init.lua when a Markdown
-- buffer opens.
local function start_or_find(buf)
  local cmd = os.getenv("MLS_CMD")
  if cmd then
    local client_id = vim.lsp.start_client({
      name = "memory-ls",
      cmd = vim.fn.json_decode(cmd),
      root_dir = root,
      init_options = vim.fn.json_decode(os.getenv("MLS_INIT")),
    })
    assert(client_id, "the client did not start")
    vim.lsp.buf_attach_client(buf, client_id)
    return client_id
  end
  -- A client is listed for the buffer only once it has initialized.
  local found
  vim.wait(15000, function()
    for id, client in pairs(vim.lsp.buf_get_clients(buf)) do
      if client.name == "memory-ls" then
        found = id
      end
    end
    return found ~= nil
  end, 20)
  return found or error("init.lua attached no memory-ls client")
end

local function run()
  vim.cmd("edit " .. vim.fn.fnameescape(root .. "/notes/from_neovim.md"))
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "See [[pro" })
  local client_id = start_or_find(buf)
  results.omnifunc = vim.bo[buf].omnifunc
  local ready = vim.wait(15000, function()
    local client = vim.lsp.get_client_by_id(client_id)
    return client ~= nil and client.initialized == true
  end, 20)
  assert(ready, "the server never finished initializing")

  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = { line = 0, character = #"See [[pro" },
  }
  -- The first answers may come while the server still scans the store: ask until names come.
  local items = {}
  vim.wait(15000, function()
    local responses = vim.lsp.buf_request_sync(buf, "textDocument/completion", params, 5000)
    local response = responses and responses[client_id]
    local list = response and response.result
    items = (list and (list.items or list)) or {}
    return #items > 0
  end, 50)
  results.completion = items

  local command = vim.lsp.buf_request_sync(buf, "workspace/executeCommand", {
    command = "memory.route",
    arguments = { { name = "SPEC_from_neovim" } },
  }, 10000)
  results.route = command and command[client_id] and command[client_id].result

  vim.lsp.stop_client(client_id)
  vim.wait(5000, function()
    return vim.lsp.get_client_by_id(client_id) == nil
  end, 20)
end

local ok, err = pcall(run)
if not ok then
  results.error = tostring(err)
end
finish(ok)
