// No interpreter anywhere (no Python extension, no setting, no .venv): the user is told once,
// and the message's button picks one. End to end in code-server driven by headless Chromium.
//
// Usage: node vscode-interpreter-e2e.mjs <code-server> <vsix> <artifacts> <python>
// Prints one JSON object with what each step observed.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

const [codeServer, vsix, artifacts, python] = process.argv.slice(2);
const require = createRequire(import.meta.url);
const { chromium } = require(process.env.PLAYWRIGHT_CORE ?? "playwright-core");

const result = { steps: {}, error: null };
const home = mkdtempSync(join(tmpdir(), "jaxtarget-settings-"));
const userData = join(home, "user");
const workspace = join(home, "workspace");
const extensions = join(home, "extensions");
mkdirSync(workspace, { recursive: true });
mkdirSync(join(userData, "User"), { recursive: true });
mkdirSync(artifacts, { recursive: true });

writeFileSync(join(workspace, "send.py"), 'from jax import lax\n\nx = 1.0\nlax.psend(x, "i", [(0, 1)])\n');
const workspaceSettings = join(workspace, ".vscode", "settings.json");

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

// python3 on PATH is the fallback the message names (PATH alone does not reach the extension
// host: code-server takes it from the login shell, VIRTUAL_ENV makes the server analyse with it)
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
    "--extensions-dir", extensions, "--disable-telemetry", "--disable-update-check",
    "--disable-workspace-trust", workspace,
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

const logLines = (text) => extensionLog().split("\n").filter((l) => l.includes(text));
const starts = () => logLines("Starting jaxtarget");
const statuses = () => logLines("effective targets:");

async function command(page, title) {
  await page.keyboard.press("F1");
  await page.waitForSelector(".quick-input-widget input", { timeout: 20000 });
  await page.keyboard.type(title);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first().waitFor({ timeout: 20000 });
  await page.keyboard.press("Enter");
}

const NOTICE = "no Python interpreter is selected";
const notices = (page) =>
  page.$$eval(".notifications-list-container .notification-list-item-message, .notifications-toasts .notification-list-item-message", (ns) =>
    ns.map((n) => n.textContent),
  );

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
  await input.fill(python);
  await page.waitForFunction((want) => document.querySelector(".quick-input-widget input")?.value === want, python, {
    timeout: 30000,
  });
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
