-- Drives Neovim's own LSP client (0.7 and later: start_client and
-- buf_attach_client, which predate vim.lsp.start) against the language
-- server, headless, and writes what it saw as JSON for nvim_test.go.
--
-- The configuration file (KOBANA_NVIM_CONFIG) gives the document to open,
-- the server command and environment, where to ask for completion, and
-- where to write the result.
local cfg = vim.fn.json_decode(table.concat(vim.fn.readfile(os.getenv('KOBANA_NVIM_CONFIG')), '\n'))
local out = {}

local ok, err = pcall(function()
  vim.cmd('edit ' .. vim.fn.fnameescape(cfg.doc))
  local bufnr = vim.api.nvim_get_current_buf()
  local uri = vim.uri_from_bufnr(bufnr)
  local last = nil
  local client_id = vim.lsp.start_client({
    name = 'kobana',
    cmd = cfg.cmd,
    cmd_env = cfg.env,
    root_dir = cfg.root,
    handlers = {
      ['textDocument/publishDiagnostics'] = function(e, result, ctx, config)
        last = result
        return vim.lsp.diagnostic.on_publish_diagnostics(e, result, ctx, config)
      end,
    },
  })
  assert(client_id, 'vim.lsp.start_client failed')
  assert(vim.lsp.buf_attach_client(bufnr, client_id), 'vim.lsp.buf_attach_client failed')

  -- 1. The diagnostics of the document as opened.
  assert(vim.wait(20000, function() return last ~= nil and #last.diagnostics > 0 end, 10), 'no diagnostics arrived')
  out.diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(out.diagnostics, { lnum = d.lnum, col = d.col, end_col = d.end_col, severity = d.severity, code = d.code, message = d.message })
  end

  -- 2. Completion inside a placeholder.
  local res = vim.lsp.buf_request_sync(bufnr, 'textDocument/completion',
    { textDocument = { uri = uri }, position = cfg.completion_at }, 20000)
  out.completion = {}
  for _, r in pairs(res or {}) do
    local items = r.result and (r.result.items or r.result) or {}
    for _, it in ipairs(items) do table.insert(out.completion, it.label) end
  end

  -- 3. The quick fix of the first diagnostic, applied the way the editor
  -- applies it; the buffer change goes back to the server as didChange.
  local diag = last.diagnostics[1]
  local actions = vim.lsp.buf_request_sync(bufnr, 'textDocument/codeAction',
    { textDocument = { uri = uri }, range = diag.range, context = { diagnostics = { diag } } }, 20000)
  for _, r in pairs(actions or {}) do
    for _, action in ipairs(r.result or {}) do
      if out.action == nil and action.edit then
        vim.lsp.util.apply_workspace_edit(action.edit, 'utf-16')
        out.action = action.title
      end
    end
  end
  assert(out.action, 'no quick fix was offered')
  assert(vim.wait(20000, function() return #last.diagnostics == 0 end, 10), 'the diagnostics did not clear after the fix')
  out.text = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
end)
if not ok then
  out.error = tostring(err)
end
vim.fn.writefile({ vim.fn.json_encode(out) }, cfg.out)
vim.cmd('qa!')
