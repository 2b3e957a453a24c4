// Settings applied live, the status item, the effective configuration and restarts, end to
// end in a real VS Code (code-server) driven by headless Chromium, without the Python extension.
//
// Usage: node vscode-settings-e2e.mjs <code-server> <vsix> <artifacts> <python>
// The workspace's .venv/bin/python (a wrapper that runs <python>) is the interpreter the client
// must find by itself. Prints one JSON object with what each step observed.
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [codeServer, vsix, artifacts, python] = process.argv.slice(2);
const require = createRequire(import.meta.url);
const { chromium } = require(process.env.PLAYWRIGHT_CORE ?? "playwright-core");

const result = { steps: {}, error: null };
const home = mkdtempSync(join(tmpdir(), "jaxtarget-settings-"));
const userData = join(home, "user");
const workspace = join(home, "workspace");
const extensions = join(home, "extensions");
mkdirSync(join(workspace, ".venv", "bin"), { recursive: true });
mkdirSync(join(workspace, ".vscode"), { recursive: true });
mkdirSync(join(userData, "User"), { recursive: true });
mkdirSync(artifacts, { recursive: true });

const quote = (s) => `'${s.replace(/'/g, `'\\''`)}'`;
const venvPython = join(workspace, ".venv", "bin", "python");
writeFileSync(venvPython, `#!/bin/sh\nexec ${quote(python)} "$@"\n`);
chmodSync(venvPython, 0o755);
writeFileSync(join(workspace, "send.py"), 'from jax import lax\n\nx = 1.0\nlax.psend(x, "i", [(0, 1)])\n');
const workspaceSettings = join(workspace, ".vscode", "settings.json");
const setTargets = (targets) =>
  writeFileSync(workspaceSettings, JSON.stringify({ "jaxtarget.targetBackends": targets }, null, 2));
setTargets(["cpu"]);

writeFileSync(
  join(userData, "User", "settings.json"),
  JSON.stringify({
    "security.workspace.trust.enabled": false,
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": false,
    "extensions.ignoreRecommendations": true,
    "telemetry.telemetryLevel": "off",
    "update.mode": "none",
  }),
);

const install = spawnSync(
  process.execPath,
  [codeServer, "--user-data-dir", userData, "--extensions-dir", extensions, "--install-extension", vsix],
  { encoding: "utf8" },
);
result.steps.install = { ok: install.status === 0, output: (install.stdout + install.stderr).slice(-500) };

const port = 20000 + Math.floor(Math.random() * 20000);
const server = spawn(
  process.execPath,
  [
    codeServer, "--auth", "none", "--bind-addr", `127.0.0.1:${port}`, "--user-data-dir", userData,
    "--extensions-dir", extensions, "--disable-telemetry", "--disable-update-check",
    "--disable-workspace-trust", workspace,
  ],
  { detached: true, stdio: ["ignore", "pipe", "pipe"] },
);
let serverLog = "";
server.stdout.on("data", (d) => (serverLog += d));
server.stderr.on("data", (d) => (serverLog += d));

async function shot(page, name) {
  await page.screenshot({ path: join(artifacts, name) });
}

/** The extension's own output channel, as VS Code logs it under the user data folder. */
function extensionLog() {
  const logs = join(userData, "logs");
  if (!existsSync(logs)) {
    return "";
  }
  return readdirSync(logs, { recursive: true })
    .filter((f) => f.endsWith("JAX Target.log") || f.endsWith("jaxtarget.log"))
    .map((f) => readFileSync(join(logs, f), "utf8"))
    .join("\n");
}

const logLines = (text) => extensionLog().split("\n").filter((l) => l.includes(text));
const starts = () => logLines("Starting jaxtarget");
const statuses = () => logLines("effective targets:");

const rows = (page) =>
  page.$$eval(".markers-panel .monaco-list-row", (rs) => rs.map((r) => r.textContent));
const toasts = (page) =>
  page.$$eval(".notifications-toasts .notification-list-item-message", (ns) => ns.map((n) => n.textContent));

/** Wait until the open Problems panel does (or does not) list a JT001 finding. */
async function problemsShow(page, jt001) {
  await page.waitForFunction(
    (want) =>
      [...document.querySelectorAll(".markers-panel .monaco-list-row")].some((r) => r.textContent.includes("JT001")) ===
      want,
    jt001,
    { timeout: 60000 },
  );
  return rows(page);
}

async function command(page, title) {
  await page.keyboard.press("F1");
  await page.waitForSelector(".quick-input-widget input", { timeout: 20000 });
  await page.keyboard.type(title);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first().waitFor({ timeout: 20000 });
  await page.keyboard.press("Enter");
}

let browser;
try {
  await waitFor(async () => {
    try {
      const r = await fetch(`http://127.0.0.1:${port}/healthz`);
      return r.ok;
    } catch {
      return false;
    }
  }, 60000, "code-server");
  browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: [
      "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
      "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
    ],
  });
  const page = await browser.newPage({ viewport: { width: 1400, height: 860 } });
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`);
  await page.waitForSelector(".monaco-workbench", { timeout: 90000 });

  const row = page.locator(".explorer-folders-view .monaco-list-row", { hasText: "send.py" });
  await row.waitFor({ timeout: 60000 });
  await row.dblclick();
  await page.locator(".tabs-container .tab", { hasText: "send.py" }).waitFor({ timeout: 30000 });
  await page.waitForSelector(".editor-instance .monaco-editor .squiggly-error", { timeout: 120000 });
  await page.keyboard.press("Control+Shift+M");
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
  const log = extensionLog();
  const shown = await toasts(page);
  result.steps.restart = {
    ok: !log.includes("exited with code 0") && !shown.some((t) => /stopped|exited|error/i.test(t)),
    toasts: shown,
    exitLines: log.split("\n").filter((l) => l.includes("exited")),
  };
  await shot(page, "04-restarted.png");
  result.extensionLog = log.slice(-4000);
} catch (err) {
  result.error = String(err && err.stack ? err.stack : err);
  result.serverLog = serverLog.slice(-3000);
  result.extensionLog = extensionLog().slice(-3000);
  try {
    const pages = browser ? browser.contexts().flatMap((c) => c.pages()) : [];
    if (pages[0]) {
      await shot(pages[0], "failure.png");
    }
  } catch {
    // nothing more to show
  }
} finally {
  if (browser) {
    await browser.close();
  }
  try {
    process.kill(-server.pid, "SIGKILL");
  } catch {
    // already gone
  }
}
console.log(JSON.stringify(result));

async function waitFor(check, timeout, what) {
  const end = Date.now() + timeout;
  while (Date.now() < end) {
    if (await check()) {
      return;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what}`);
}
