// What the code-server end-to-end scripts share: the folders and settings of a fresh VS Code,
// code-server with the .vsix installed, headless Chromium on its workbench, reading the
// Problems panel and the notifications, screenshots, polling, and the teardown.
//
// A script prepares its folders (`userFolders`), writes its workspace, then hands its scenario to
// `runInVSCode`, which prints the one JSON object the Python tests parse (tests/code_server.py).
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

const require = createRequire(import.meta.url);
const { chromium } = require(process.env.PLAYWRIGHT_CORE ?? "playwright-core");

/** User settings that keep the workbench quiet: no start editor, tips, recommendations, telemetry or updates. */
export const QUIET = {
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "extensions.ignoreRecommendations": true,
  "telemetry.telemetryLevel": "off",
  "update.mode": "none",
};

/** A module with one JT001 finding (lax.psend) wherever cpu is a target. */
export const SEND_PY = 'from jax import lax\n\nx = 1.0\nlax.psend(x, "i", [(0, 1)])\n';

/** `s` quoted for sh. */
export const shellQuote = (s) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * A fresh home under the temporary folder (named `prefix`...) with the user data, workspace and
 * extensions folders code-server uses, the user settings written and `artifacts` made. The
 * workspace folder itself is the script's to make.
 */
export function userFolders(prefix, artifacts, settings) {
  const home = mkdtempSync(join(tmpdir(), prefix));
  const folders = {
    home,
    userData: join(home, "user"),
    workspace: join(home, "workspace"),
    extensions: join(home, "extensions"),
  };
  mkdirSync(join(folders.userData, "User"), { recursive: true });
  mkdirSync(artifacts, { recursive: true });
  writeFileSync(join(folders.userData, "User", "settings.json"), JSON.stringify(settings));
  return folders;
}

/**
 * The environment with `python`'s folder first on PATH and its environment as VIRTUAL_ENV
 * (PATH alone does not reach the extension host: code-server takes it from the login shell).
 */
export const pythonEnv = (python) => ({
  ...process.env,
  PATH: `${dirname(python)}:${process.env.PATH}`,
  VIRTUAL_ENV: dirname(dirname(python)),
});

/** Poll `check` every 250 ms until it holds; throws "timed out waiting for <what>" after `timeout` ms. */
export async function waitFor(check, timeout, what) {
  const end = Date.now() + timeout;
  while (Date.now() < end) {
    if (await check()) {
      return;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** `shot(page, name)`: a screenshot of the page to `artifacts`/`name`. */
export const screenshots = (artifacts) =>
  async function shot(page, name) {
    await page.screenshot({ path: join(artifacts, name) });
  };

/** The extension's own output channel, as VS Code logs it under the user data folder. */
export function extensionLog(userData) {
  const logs = join(userData, "logs");
  if (!existsSync(logs)) {
    return "";
  }
  return readdirSync(logs, { recursive: true })
    .filter((f) => f.endsWith("JAX Target.log") || f.endsWith("jaxtarget.log"))
    .map((f) => readFileSync(join(logs, f), "utf8"))
    .join("\n");
}

/** The lines of the extension's log that contain `text`. */
export const logLines = (userData, text) =>
  extensionLog(userData)
    .split("\n")
    .filter((l) => l.includes(text));

/** Run a command from the palette (F1): type `title`, wait for a row listing `listed`, Enter. */
export async function command(page, title, listed = title) {
  await page.keyboard.press("F1");
  await page.waitForSelector(".quick-input-widget input", { timeout: 20000 });
  await page.keyboard.type(title);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: listed }).first().waitFor({ timeout: 20000 });
  await page.keyboard.press("Enter");
}

/** Double-click `name` in the Explorer; unless `tab` is false, wait for its editor tab. */
export async function openFromExplorer(page, name, { tab = true } = {}) {
  const row = page.locator(".explorer-folders-view .monaco-list-row", { hasText: name });
  await row.waitFor({ timeout: 60000 });
  await row.dblclick();
  if (tab) {
    await page.locator(".tabs-container .tab", { hasText: name }).waitFor({ timeout: 30000 });
  }
}

const PROBLEM_ROWS = ".markers-panel .monaco-list-row";

/** Show or hide the Problems panel. */
export const toggleProblems = (page) => page.keyboard.press("Control+Shift+M");

/** Show the Problems panel and wait for its first row. */
export async function showProblems(page) {
  await toggleProblems(page);
  await page.waitForSelector(PROBLEM_ROWS, { timeout: 30000 });
}

/** The text of each row of the Problems panel. */
export const problemRows = (page) => page.$$eval(PROBLEM_ROWS, (rs) => rs.map((r) => r.textContent));

/** Wait until the open Problems panel does (or does not) list a JT001 finding; its rows then. */
export async function problemsShow(page, jt001, timeout = 60000) {
  await page.waitForFunction(
    ([selector, want]) =>
      [...document.querySelectorAll(selector)].some((r) => r.textContent.includes("JT001")) === want,
    [PROBLEM_ROWS, jt001],
    { timeout },
  );
  return problemRows(page);
}

/** The text of each notification toast. */
export const toasts = (page) =>
  page.$$eval(".notifications-toasts .notification-list-item-message", (ns) => ns.map((n) => n.textContent));

/**
 * Install `vsix`, start code-server on `folders`, open its workbench on the workspace in headless
 * Chromium (then wait `settle` ms), and run `scenario(page, result)`, which records each step in
 * `result.steps`. A failure is recorded as `result.error` with the server's log (and, with
 * `logOnFailure`, the extension's) and failure.png in `artifacts`. Then the browser closes, the
 * server is killed, and `result` is printed as one line of JSON.
 *
 * `env` is the environment of the install and the server (default: this process's);
 * `workspaceTrust` leaves workspace trust on (code-server's --disable-workspace-trust is not given).
 */
export async function runInVSCode(
  { codeServer, vsix, folders, artifacts, env, workspaceTrust = false, settle = 0, logOnFailure = true },
  scenario,
) {
  const { userData, workspace, extensions } = folders;
  const shot = screenshots(artifacts);
  const result = { steps: {}, error: null };

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
      ...(workspaceTrust ? [] : ["--disable-workspace-trust"]), workspace,
    ],
    { detached: true, stdio: ["ignore", "pipe", "pipe"], env },
  );
  let serverLog = "";
  server.stdout.on("data", (d) => (serverLog += d));
  server.stderr.on("data", (d) => (serverLog += d));

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
    if (settle) {
      await page.waitForTimeout(settle);
    }
    await scenario(page, result);
  } catch (err) {
    result.error = String(err && err.stack ? err.stack : err);
    result.serverLog = serverLog.slice(-3000);
    if (logOnFailure) {
      result.extensionLog = extensionLog(userData).slice(-3000);
    }
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
}
