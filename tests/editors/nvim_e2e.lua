-- Headless Neovim 0.7+: start jaxtarget, open a file, wait for diagnostics and hover, print JSON.
local server_cmd = vim.fn.json_decode(vim.env.JAXTARGET_CMD)
local file = vim.env.JAXTARGET_FILE
local out = vim.env.JAXTARGET_OUT
local result = { diagnostics = {}, hover = nil, error = nil }

vim.cmd('edit ' .. vim.fn.fnameescape(file))
local bufnr = vim.api.nvim_get_current_buf()
local client_id = vim.lsp.start_client({
  name = 'jaxtarget',
  cmd = server_cmd,
  root_dir = vim.fn.fnamemodify(file, ':h'),
  init_options = { targetBackends = { 'cpu', 'tpu' } },
})
vim.lsp.buf_attach_client(bufnr, client_id)

local function run()
local ok = vim.wait(60000, function()
  return #vim.diagnostic.get(bufnr) > 0
end, 100)
if not ok then
  result.error = 'no diagnostics within 60 s'
else
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(result.diagnostics, {
      lnum = d.lnum, col = d.col, end_col = d.end_col, message = d.message,
      code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code), source = d.source,
      severity = d.severity,
    })
  end
  local first = vim.diagnostic.get(bufnr)[1]
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    position = { line = first.lnum, character = first.col + 1 },
  }
  local responses = vim.lsp.buf_request_sync(bufnr, 'textDocument/hover', params, 30000)
  for _, resp in pairs(responses or {}) do
    if resp.result and resp.result.contents then
      result.hover = resp.result.contents.value or resp.result.contents
    end
  end
  local actions = vim.lsp.buf_request_sync(bufnr, 'textDocument/codeAction', {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    range = { start = { line = first.lnum, character = first.col }, ['end'] = { line = first.lnum, character = first.end_col } },
    context = { diagnostics = vim.lsp.diagnostic.get_line_diagnostics(bufnr, first.lnum) },
  }, 30000)
  result.actions = {}
  for _, resp in pairs(actions or {}) do
    for _, a in ipairs(resp.result or {}) do table.insert(result.actions, a.title) end
  end
end
end

local ran, err = pcall(run)
if not ran then result.error = tostring(err) end
local fh = io.open(out, 'w')
fh:write(vim.fn.json_encode(result))
fh:close()
vim.lsp.stop_client(client_id, true)
vim.cmd('qa!')
