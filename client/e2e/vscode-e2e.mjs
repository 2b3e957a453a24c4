// End to end in a real VS Code (code-server) driven by headless Chromium.
//
// Usage: node vscode-e2e.mjs <code-server> <vsix> <folder to copy> <artifacts> <python>
// Prints one JSON object with what each step observed; screenshots go to <artifacts>.
import { spawn, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [codeServer, vsix, sourceFolder, artifacts, python] = process.argv.slice(2);
const require = createRequire(import.meta.url);
const { chromium } = require(process.env.PLAYWRIGHT_CORE ?? "playwright-core");

const result = { steps: {}, error: null };
const home = mkdtempSync(join(tmpdir(), "jaxtarget-code-"));
const userData = join(home, "user");
const workspace = join(home, "workspace");
cpSync(sourceFolder, workspace, { recursive: true });
const extensions = join(home, "extensions");
mkdirSync(join(userData, "User"), { recursive: true });
mkdirSync(artifacts, { recursive: true });
writeFileSync(
  join(userData, "User", "settings.json"),
  JSON.stringify({
    "security.workspace.trust.enabled": false,
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": false,
    "extensions.ignoreRecommendations": true,
    "telemetry.telemetryLevel": "off",
    "update.mode": "none",
    "editor.hover.delay": 200,
    "jaxtarget.interpreter": [python],
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

let browser;
try {
  await waitFor(async () => {
    try {
      const r = await fetch(`http://127.0.0.1:${port}/healthz`);
      return r.ok;
    } catch {
      return false;
    }
  }, 60000);
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

  // open the example from the Explorer
  const row = page.locator(".explorer-folders-view .monaco-list-row", { hasText: "pipeline.py" });
  await row.waitFor({ timeout: 60000 });
  await row.dblclick();
  await page.locator(".tabs-container .tab", { hasText: "pipeline.py" }).waitFor({ timeout: 30000 });
  await page.waitForSelector(".editor-instance .monaco-editor .view-lines", { timeout: 30000 });

  // 1. the squiggle and the Problems entry for JT001
  const squiggle = await page.waitForSelector(".editor-instance .monaco-editor .squiggly-error", {
    timeout: 120000,
  });
  await page.keyboard.press("Control+Shift+M");
  await page.waitForSelector(".markers-panel .monaco-list-row", { timeout: 30000 });
  await page.waitForTimeout(800);
  const problems = await page.$$eval(".markers-panel .monaco-list-row", (rows) => rows.map((r) => r.textContent));
  result.steps.diagnostic = { ok: problems.some((t) => t.includes("JT001")), problems };
  await shot(page, "01-diagnostic.png");

  // 2. hover on psend
  await page.keyboard.press("Control+Shift+M");
  await page.waitForTimeout(500);
  const box = await (await page.waitForSelector(".editor-instance .monaco-editor .squiggly-error")).boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  const hover = await page.waitForSelector(".monaco-hover:not(.hidden)", { timeout: 30000 });
  await page.waitForFunction(
    () => [...document.querySelectorAll(".monaco-hover")].some((h) => h.textContent.includes("Backend support")),
    null,
    { timeout: 30000 },
  );
  const hoverText = await hover.textContent();
  // jaxtarget's hover (after VS Code's own diagnostic part) leads with the verdict for the
  // targets, and the support table is not repeated as a one-liner
  const verdict = hoverText.indexOf("✗ Fails on cpu, tpu (targets cpu, cuda, rocm, tpu)");
  result.steps.hover = {
    ok: verdict >= 0 && verdict < hoverText.indexOf("Backend support") && !hoverText.includes("cpu ✗ ·"),
    text: hoverText,
  };
  await shot(page, "02-hover.png");

  // 3. quick fix on the same diagnostic
  await page.mouse.move(10, 10);
  await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
  await page.keyboard.press("Control+.");
  await page.waitForSelector(".action-widget .monaco-list-row, .context-view .action-label", { timeout: 30000 });
  await page.waitForTimeout(800);
  const titles = await page.$$eval(".action-widget .monaco-list-row, .context-view .action-label", (rows) =>
    rows.map((r) => r.textContent),
  );
  await shot(page, "03-quickfix.png");
  const index = titles.findIndex((t) => t.includes("Fall back to lax.ppermute"));
  await page.locator(".action-widget .monaco-list-row", { hasText: "Fall back to lax.ppermute" }).click();
  await page.waitForFunction(
    () => document.querySelector(".editor-instance .monaco-editor .view-lines")?.textContent.includes("ppermute"),
    null,
    { timeout: 30000 },
  );
  await page.waitForTimeout(1500);
  const editorText = await page.$eval(".editor-instance .monaco-editor .view-lines", (e) => e.textContent);
  result.steps.quickfix = {
    ok: index >= 0 && editorText.includes("has_gpu_backend()") && editorText.includes("ppermute"),
    titles,
  };
  await shot(page, "04-fixed.png");

  // 4. JAX Target: Probe backend from the command palette
  await page.keyboard.press("F1");
  await page.waitForSelector(".quick-input-widget input", { timeout: 20000 });
  await page.keyboard.type("JAX Target: Probe backend");
  await page.waitForTimeout(800);
  await page.keyboard.press("Enter");
  await page.waitForFunction(
    () => [...document.querySelectorAll(".notifications-toasts .notification-list-item-message")].some((n) =>
      n.textContent.includes("cuda ✓"),
    ),
    null,
    { timeout: 120000 },
  );
  const toasts = await page.$$eval(".notifications-toasts .notification-list-item-message", (ns) =>
    ns.map((n) => n.textContent),
  );
  result.steps.probe = { ok: toasts.some((t) => t.includes("cpu ✗ · cuda ✓ · rocm ✓ · tpu ✗")), toasts };
  await shot(page, "05-probe.png");
} catch (err) {
  result.error = String(err && err.stack ? err.stack : err);
  result.serverLog = serverLog.slice(-3000);
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

async function waitFor(check, timeout) {
  const end = Date.now() + timeout;
  while (Date.now() < end) {
    if (await check()) {
      return;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error("timed out waiting for code-server");
}
