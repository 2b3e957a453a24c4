// No interpreter anywhere (no Python extension, no setting, no .venv): the user is told once,
// and the message's button picks one. End to end in code-server driven by headless Chromium.
//
// Usage: node vscode-interpreter-e2e.mjs <code-server> <vsix> <artifacts> <python>
// Prints one JSON object with what each step observed.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  command, extensionLog, logLines, openFromExplorer, pythonEnv, QUIET, runInVSCode, screenshots, SEND_PY,
  userFolders, waitFor,
} from "./lib.mjs";

const [codeServer, vsix, artifacts, python] = process.argv.slice(2);
const folders = userFolders("jaxtarget-settings-", artifacts, { "security.workspace.trust.enabled": false, ...QUIET });
const { userData, workspace } = folders;
mkdirSync(workspace, { recursive: true });
writeFileSync(join(workspace, "send.py"), SEND_PY);
const workspaceSettings = join(workspace, ".vscode", "settings.json");

const shot = screenshots(artifacts);
const starts = () => logLines(userData, "Starting jaxtarget");
const statuses = () => logLines(userData, "effective targets:");

const NOTICE = "no Python interpreter is selected";
const notices = (page) =>
  page.$$eval(".notifications-list-container .notification-list-item-message, .notifications-toasts .notification-list-item-message", (ns) =>
    ns.map((n) => n.textContent),
  );

// python3 on PATH is the fallback the message names (VIRTUAL_ENV makes the server analyse with it)
await runInVSCode({ codeServer, vsix, folders, artifacts, env: pythonEnv(python) }, async (page, result) => {
  await openFromExplorer(page, "send.py", { tab: false });

  // 1. the message, with its button
  const toast = page.locator(".notifications-toasts .notification-toast", { hasText: NOTICE });
  await toast.waitFor({ timeout: 120000 });
  const buttons = await toast.locator(".monaco-button").allTextContents();
  await shot(page, "01-notice.png");
  result.steps.notice = { ok: buttons.includes("Select interpreter"), buttons, starts: starts() };

  // 2. a restart does not say it again
  await command(page, "JAX Target: Restart server");
  await waitFor(() => starts().length === 2 && statuses().length >= 2, 120000, "the restart");
  await command(page, "Notifications: Show Notifications");
  await page.waitForSelector(".notifications-center", { timeout: 20000 });
  const all = (await notices(page)).filter((t) => t.includes(NOTICE));
  result.steps.once = { ok: all.length === 1, notices: all, starts: starts() };
  await shot(page, "02-once.png");

  // 3. the button picks an interpreter, which becomes the setting and restarts the server
  await page.locator(".notifications-center .monaco-button", { hasText: "Select interpreter" }).first().click();
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ timeout: 30000 });
  // the dialog fills in its starting folder first; the path typed then replaces it
  await page.waitForFunction(() => document.querySelector(".quick-input-widget input")?.value.endsWith("/"), null, {
    timeout: 30000,
  });
  // the dialog may still rewrite its value (its folder listing arrives late): type the path
  // until it stays, then accept it
  let typed = "";
  for (let attempt = 0; attempt < 5 && typed !== python; attempt++) {
    await input.fill(python);
    await page.waitForTimeout(1000);
    typed = await input.inputValue();
  }
  if (typed !== python) {
    throw new Error(`the picker kept rewriting the typed path: ${typed}`);
  }
  await page.locator(".quick-input-widget .monaco-button", { hasText: "Use this interpreter" }).click();
  await waitFor(() => starts().some((l) => l.includes(`${python} (setting)`)), 120000, "the picked interpreter");
  await waitFor(() => existsSync(workspaceSettings), 30000, "the workspace setting");
  const written = JSON.parse(readFileSync(workspaceSettings, "utf8"));
  await shot(page, "03-picked.png");
  result.steps.picked = {
    ok: JSON.stringify(written["jaxtarget.interpreter"]) === JSON.stringify([python]),
    written,
    starts: starts(),
  };
  result.extensionLog = extensionLog(userData).slice(-4000);
});
