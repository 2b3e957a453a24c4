// Settings applied live, the status item, the effective configuration and restarts, end to
// end in a real VS Code (code-server) driven by headless Chromium, without the Python extension.
//
// Usage: node vscode-settings-e2e.mjs <code-server> <vsix> <artifacts> <python>
// The workspace's .venv/bin/python (a wrapper that runs <python>) is the interpreter the client
// must find by itself. Prints one JSON object with what each step observed.
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  command, extensionLog, logLines, openFromExplorer, problemsShow, QUIET, runInVSCode, screenshots, SEND_PY,
  shellQuote, toasts, toggleProblems, userFolders, waitFor,
} from "./lib.mjs";

const [codeServer, vsix, artifacts, python] = process.argv.slice(2);
const folders = userFolders("jaxtarget-settings-", artifacts, { "security.workspace.trust.enabled": false, ...QUIET });
const { userData, workspace } = folders;
mkdirSync(join(workspace, ".venv", "bin"), { recursive: true });
mkdirSync(join(workspace, ".vscode"), { recursive: true });

const venvPython = join(workspace, ".venv", "bin", "python");
writeFileSync(venvPython, `#!/bin/sh\nexec ${shellQuote(python)} "$@"\n`);
chmodSync(venvPython, 0o755);
writeFileSync(join(workspace, "send.py"), SEND_PY);
const workspaceSettings = join(workspace, ".vscode", "settings.json");
const setTargets = (targets) =>
  writeFileSync(workspaceSettings, JSON.stringify({ "jaxtarget.targetBackends": targets }, null, 2));
setTargets(["cpu"]);

const shot = screenshots(artifacts);
const starts = () => logLines(userData, "Starting jaxtarget");
const statuses = () => logLines(userData, "effective targets:");

await runInVSCode({ codeServer, vsix, folders, artifacts }, async (page, result) => {
  await openFromExplorer(page, "send.py");
  await page.waitForSelector(".editor-instance .monaco-editor .squiggly-error", { timeout: 120000 });
  await toggleProblems(page);
  await page.waitForSelector(".markers-panel", { timeout: 30000 });

  // 1. the workspace's .venv found without the Python extension; the status shows the server's targets
  const cpu = await problemsShow(page, true);
  await waitFor(() => statuses().some((l) => l.includes("effective targets: cpu (")), 60000, "the cpu status");
  await shot(page, "01-cpu.png");
  result.steps.venv = { ok: starts().some((l) => l.includes(`${venvPython} (workspace-venv)`)), starts: starts() };
  result.steps.cpu = { ok: cpu.some((t) => t.includes("JT001")), problems: cpu, statuses: statuses() };

  // 2. targets changed in the workspace settings: the problems follow, with no restart
  setTargets(["cuda"]);
  const cuda = await problemsShow(page, false);
  await waitFor(() => statuses().some((l) => l.includes("effective targets: cuda (")), 60000, "the cuda status");
  await shot(page, "02-cuda.png");
  result.steps.cuda = { ok: starts().length === 1, problems: cuda, starts: starts(), statuses: statuses() };

  setTargets(["cpu", "tpu"]);
  const back = await problemsShow(page, true);
  await waitFor(() => statuses().some((l) => l.includes("effective targets: cpu, tpu (")), 60000, "the cpu, tpu status");
  result.steps.back = { ok: starts().length === 1 && back.some((t) => t.includes("JT001")), problems: back };

  // 3. the effective configuration: a read-only document naming each value's layer
  await command(page, "JAX Target: Show effective configuration");
  const tab = page.locator(".tabs-container .tab", { hasText: "effective-configuration" });
  await tab.waitFor({ timeout: 30000 });
  await page.waitForFunction(
    () => document.querySelector(".editor-instance .monaco-editor .view-lines")?.textContent.includes("targetBackends"),
    null,
    { timeout: 30000 },
  );
  // the rendered lines in their on-screen order (the DOM keeps them in any order)
  const configLines = await page.$$eval(".editor-instance .monaco-editor .view-lines .view-line", (ls) =>
    ls
      .map((l) => [parseFloat(l.style.top), l.textContent.replace(/\u00a0/g, " ")])
      .sort((a, b) => a[0] - b[0])
      .map((x) => x[1]),
  );
  const line = (pattern) => configLines.some((l) => pattern.test(l));
  const tabs = await page.$$eval(".tabs-container .tab", (ts) => ts.map((t) => ({ text: t.textContent, dirty: t.classList.contains("dirty") })));
  await page.keyboard.type("x");
  const readOnly = await page
    .locator(".monaco-editor-overlaymessage", { hasText: /read-only|Cannot edit/i })
    .first()
    .waitFor({ timeout: 10000 })
    .then(() => true, () => false);
  await shot(page, "03-configuration.png");
  result.steps.configuration = {
    ok:
      line(/^jaxtarget\.targetBackends +\["cpu","tpu"\] +workspace settings$/) &&
      line(/^jaxtarget\.ignore +\[\] +default$/) &&
      line(/^effective targets cpu, tpu$/) &&
      !tabs.some((t) => t.dirty || t.text.includes("Untitled")) &&
      readOnly,
    lines: configLines,
    tabs,
    readOnly,
  };

  // 4. restart: a stop on purpose is no error, nothing pops up, the log stays unopened
  await command(page, "JAX Target: Restart server");
  await waitFor(() => starts().length === 2 && statuses().length >= 4, 120000, "the restart");
  await page.waitForSelector(".editor-instance .monaco-editor .squiggly-error", { timeout: 120000 }).catch(() => undefined);
  const log = extensionLog(userData);
  const shown = await toasts(page);
  result.steps.restart = {
    ok: !log.includes("exited with code 0") && !shown.some((t) => /stopped|exited|error/i.test(t)),
    toasts: shown,
    exitLines: log.split("\n").filter((l) => l.includes("exited")),
  };
  await shot(page, "04-restarted.png");
  result.extensionLog = log.slice(-4000);
});
