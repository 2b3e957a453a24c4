// Workspace trust, end to end in a real VS Code (code-server) driven by headless Chromium.
//
// Usage: node vscode-trust-e2e.mjs <code-server> <vsix> <artifacts> <python> <marker>
// The folder opens in Restricted Mode: the server must still analyse it, and the interpreter
// its pyproject.toml names (a wrapper that appends to <marker>, outside the folder) must not
// run until the folder is trusted. Prints one JSON object with what each step observed.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  command, extensionLog, logLines, openFromExplorer, problemsShow, pythonEnv, QUIET, runInVSCode, screenshots,
  SEND_PY, shellQuote, showProblems, toasts, toggleProblems, userFolders, waitFor,
} from "./lib.mjs";

const [codeServer, vsix, artifacts, python, marker] = process.argv.slice(2);
// No jaxtarget.interpreter here: a user-level one would outrank the pyproject.toml one even
// once trusted. The server starts with `python3`; VIRTUAL_ENV makes the real python the one
// it analyses against while the folder is untrusted.
const folders = userFolders("jaxtarget-trust-", artifacts, {
  "security.workspace.trust.enabled": true,
  "security.workspace.trust.startupPrompt": "never",
  "security.workspace.trust.banner": "always",
  ...QUIET,
});
const { userData, workspace } = folders;
mkdirSync(join(workspace, "bin"), { recursive: true });
writeFileSync(
  join(workspace, "pyproject.toml"),
  '[tool.jaxtarget]\ntargets = ["cpu"]\ninterpreter = ["bin/tools-python.sh"]\n',
);
const wrapper = join(workspace, "bin", "tools-python.sh");
writeFileSync(
  wrapper,
  `#!/bin/sh\necho "ran $$" >> ${shellQuote(marker)}\nPY=${shellQuote(python)}\nexec "$PY" "$@"\n`,
);
chmodSync(wrapper, 0o755);
writeFileSync(join(workspace, "send.py"), SEND_PY);

const shot = screenshots(artifacts);
const starts = () => logLines(userData, "Starting jaxtarget");
const markerLines = () => (existsSync(marker) ? readFileSync(marker, "utf8").split("\n").filter(Boolean) : []);

/** The Problems panel's rows once it lists JT001; the panel is hidden again. */
async function problems(page) {
  await showProblems(page);
  const rows = await problemsShow(page, true, 30000);
  await toggleProblems(page);
  return rows;
}

const options = { codeServer, vsix, folders, artifacts, env: pythonEnv(python), workspaceTrust: true, settle: 3000 };
await runInVSCode(options, async (page, result) => {
  // a trust modal, if this VS Code shows one despite startupPrompt "never": stay restricted
  const modal = page.locator(".monaco-dialog-box .monaco-button", { hasText: "No, I don't trust the authors" });
  if (await modal.count()) {
    await modal.first().click();
  }
  const restricted = await page
    .locator(".statusbar-item", { hasText: "Restricted Mode" })
    .first()
    .waitFor({ timeout: 30000 })
    .then(() => true, () => false);

  await openFromExplorer(page, "send.py");
  await page.waitForSelector(".editor-instance .monaco-editor .view-lines", { timeout: 30000 });

  // 1. Restricted Mode: the server analyses, the pyproject.toml interpreter does not run
  await page.waitForSelector(".editor-instance .monaco-editor .squiggly-error", { timeout: 120000 });
  const before = await problems(page);
  await shot(page, "01-restricted.png");
  result.steps.restricted = {
    ok: restricted && before.some((t) => t.includes("JT001")) && !existsSync(marker),
    restrictedMode: restricted,
    markerExists: existsSync(marker),
    starts: starts(),
    problems: before,
    toasts: await toasts(page),
  };

  // 2. trust the folder from the Workspace Trust editor
  await command(page, "Workspaces: Manage Workspace Trust", "Manage Workspace Trust");
  const trustButton = page.locator(".workspace-trust-editor .monaco-button", { hasText: /^Trust$/ }).first();
  await trustButton.waitFor({ timeout: 30000 });
  await shot(page, "02-trust-editor.png");
  await trustButton.click();
  await page
    .locator(".statusbar-item", { hasText: "Restricted Mode" })
    .first()
    .waitFor({ state: "detached", timeout: 30000 });

  // 3. the server restarts trusted: the pyproject.toml interpreter runs, the finding is back
  await waitFor(() => markerLines().length > 0 && starts().length >= 2, 120000, "the trusted restart");
  // close the (modal) Workspace Trust editor: Escape when it has focus, else its close button
  const trustModal = page.locator(".monaco-modal-editor-block");
  await page.keyboard.press("Escape");
  if (!(await trustModal.waitFor({ state: "detached", timeout: 5000 }).then(() => true, () => false))) {
    await trustModal.locator(".codicon-close, [aria-label^='Close']").first().click();
    await trustModal.waitFor({ state: "detached", timeout: 30000 });
  }
  await page.waitForSelector(".editor-instance .monaco-editor .squiggly-error", { timeout: 120000 });
  const after = await problems(page);
  // let a second restart, if one is coming, show itself in the log and the marker
  await page.waitForTimeout(3000);
  await shot(page, "03-trusted.png");
  result.steps.trusted = {
    ok: after.some((t) => t.includes("JT001")) && existsSync(marker),
    markerLines: markerLines(),
    starts: starts(),
    problems: after,
    toasts: await toasts(page),
  };
  result.extensionLog = extensionLog(userData).slice(-4000);
});
