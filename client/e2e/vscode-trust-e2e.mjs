// Workspace trust, end to end in a real VS Code (code-server) driven by headless Chromium.
//
// Usage: node vscode-trust-e2e.mjs <code-server> <vsix> <artifacts> <python> <marker>
// The folder opens in Restricted Mode: the server must still analyse it, and the interpreter
// its pyproject.toml names (a wrapper that appends to <marker>, outside the folder) must not
// run until the folder is trusted. Prints one JSON object with what each step observed.
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

const [codeServer, vsix, artifacts, python, marker] = process.argv.slice(2);
const require = createRequire(import.meta.url);
const { chromium } = require(process.env.PLAYWRIGHT_CORE ?? "playwright-core");

const result = { steps: {}, error: null };
const home = mkdtempSync(join(tmpdir(), "jaxtarget-trust-"));
const userData = join(home, "user");
const workspace = join(home, "workspace");
const extensions = join(home, "extensions");
mkdirSync(join(workspace, "bin"), { recursive: true });
mkdirSync(join(userData, "User"), { recursive: true });
mkdirSync(artifacts, { recursive: true });

const quote = (s) => `'${s.replace(/'/g, `'\\''`)}'`;
writeFileSync(
  join(workspace, "pyproject.toml"),
  '[tool.jaxtarget]\ntargets = ["cpu"]\ninterpreter = ["bin/tools-python.sh"]\n',
);
const wrapper = join(workspace, "bin", "tools-python.sh");
writeFileSync(
  wrapper,
  `#!/bin/sh\necho "ran $$" >> ${quote(marker)}\nPY=${quote(python)}\nexec "$PY" "$@"\n`,
);
chmodSync(wrapper, 0o755);
writeFileSync(join(workspace, "send.py"), 'from jax import lax\n\nx = 1.0\nlax.psend(x, "i", [(0, 1)])\n');

// No jaxtarget.interpreter here: a user-level one would outrank the pyproject.toml one even
// once trusted. The server starts with `python3`; VIRTUAL_ENV makes the real python the one
// it analyses against while the folder is untrusted (PATH alone does not reach the
// extension host: code-server takes it from the login shell).
writeFileSync(
  join(userData, "User", "settings.json"),
  JSON.stringify({
    "security.workspace.trust.enabled": true,
    "security.workspace.trust.startupPrompt": "never",
    "security.workspace.trust.banner": "always",
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": false,
    "extensions.ignoreRecommendations": true,
    "telemetry.telemetryLevel": "off",
    "update.mode": "none",
  }),
);
const env = { ...process.env, PATH: `${dirname(python)}:${process.env.PATH}`, VIRTUAL_ENV: dirname(dirname(python)) };

const install = spawnSync(
  process.execPath,
  [codeServer, "--user-data-dir", userData, "--extensions-dir", extensions, "--install-extension", vsix],
  { encoding: "utf8", env },
);
result.steps.install = { ok: install.status === 0, output: (install.stdout + install.stderr).slice(-500) };

const port = 20000 + Math.floor(Math.random() * 20000);
const server = spawn(
  process.execPath,
  [
    codeServer, "--auth", "none", "--bind-addr", `127.0.0.1:${port}`, "--user-data-dir", userData,
    "--extensions-dir", extensions, "--disable-telemetry", "--disable-update-check", workspace,
  ],
  { detached: true, stdio: ["ignore", "pipe", "pipe"], env },
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

const starts = () => extensionLog().split("\n").filter((l) => l.includes("Starting jaxtarget"));
const markerLines = () => (existsSync(marker) ? readFileSync(marker, "utf8").split("\n").filter(Boolean) : []);

async function problems(page) {
  await page.keyboard.press("Control+Shift+M");
  await page.waitForSelector(".markers-panel .monaco-list-row", { timeout: 30000 });
  await page.waitForFunction(
    () => [...document.querySelectorAll(".markers-panel .monaco-list-row")].some((r) => r.textContent.includes("JT001")),
    null,
    { timeout: 30000 },
  );
  const rows = await page.$$eval(".markers-panel .monaco-list-row", (rs) => rs.map((r) => r.textContent));
  await page.keyboard.press("Control+Shift+M");
  return rows;
}

const toasts = (page) =>
  page.$$eval(".notifications-toasts .notification-list-item-message", (ns) => ns.map((n) => n.textContent));

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
  await page.waitForTimeout(3000);
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

  const row = page.locator(".explorer-folders-view .monaco-list-row", { hasText: "send.py" });
  await row.waitFor({ timeout: 60000 });
  await row.dblclick();
  await page.locator(".tabs-container .tab", { hasText: "send.py" }).waitFor({ timeout: 30000 });
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
  await page.keyboard.press("F1");
  await page.waitForSelector(".quick-input-widget input", { timeout: 20000 });
  await page.keyboard.type("Workspaces: Manage Workspace Trust");
  await page
    .locator(".quick-input-list .monaco-list-row", { hasText: "Manage Workspace Trust" })
    .first()
    .waitFor({ timeout: 20000 });
  await page.keyboard.press("Enter");
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
  result.extensionLog = extensionLog().slice(-4000);
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
