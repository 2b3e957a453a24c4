// End to end in a real VS Code (code-server) driven by headless Chromium.
//
// Usage: node vscode-e2e.mjs <code-server> <vsix> <folder to copy> <artifacts> <python> [<images>]
// Prints one JSON object with what each step observed; screenshots go to <artifacts>. With
// <images> (the README's docs/images, scripts/vscode_screenshots.sh), the status item is pinned
// to the status bar first, and the diagnostic, hover and quick-fix shots are also written there
// as vscode-diagnostic.png, vscode-hover.png and vscode-quickfix.png.
import { copyFileSync, cpSync } from "node:fs";
import { join } from "node:path";
import {
  openFromExplorer, problemRows, QUIET, runInVSCode, screenshots, showProblems, toasts, toggleProblems, userFolders,
} from "./lib.mjs";

const [codeServer, vsix, sourceFolder, artifacts, python, images] = process.argv.slice(2);
const folders = userFolders("jaxtarget-code-", artifacts, {
  "security.workspace.trust.enabled": false,
  ...QUIET,
  "editor.hover.delay": 200,
  "jaxtarget.interpreter": [python],
  // no chat view beside the editor, and no AI entries among the quick fixes
  "chat.disableAIFeatures": true,
  "workbench.secondarySideBar.defaultVisibility": "hidden",
});
cpSync(sourceFolder, folders.workspace, { recursive: true });
const take = screenshots(artifacts);
/** A screenshot to <artifacts>, and with <images> also there as `image`. */
async function shot(page, name, image) {
  await take(page, name);
  if (images && image) {
    copyFileSync(join(artifacts, name), join(images, image));
  }
}

/** Pin the extension's language status item (the effective targets) to the status bar. */
async function pinStatus(page) {
  await page.locator("#status\\.languageStatus").hover();
  const pin = page.locator(".hover-language-status .element", { hasText: "JAX:" }).locator(".codicon-pin");
  await pin.click({ timeout: 20000 });
  await page.mouse.move(700, 300);
  await page.locator(".statusbar-item", { hasText: "JAX:" }).first().waitFor({ timeout: 20000 });
}

await runInVSCode({ codeServer, vsix, folders, artifacts, settle: 3000, logOnFailure: false }, async (page, result) => {
  // open the example from the Explorer
  await openFromExplorer(page, "pipeline.py");
  await page.waitForSelector(".editor-instance .monaco-editor .view-lines", { timeout: 30000 });

  // 1. the squiggle and the Problems entry for JT001
  await page.waitForSelector(".editor-instance .monaco-editor .squiggly-error", { timeout: 120000 });
  if (images) {
    await pinStatus(page);
  }
  await showProblems(page);
  await page.waitForTimeout(800);
  const problems = await problemRows(page);
  result.steps.diagnostic = { ok: problems.some((t) => t.includes("JT001")), problems };
  await shot(page, "01-diagnostic.png", "vscode-diagnostic.png");

  // 2. hover on psend
  await toggleProblems(page);
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
  await page.waitForTimeout(800); // the hover's fade-in
  await shot(page, "02-hover.png", "vscode-hover.png");

  // 3. quick fix on the same diagnostic
  await page.mouse.move(10, 10);
  await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
  await page.keyboard.press("Control+.");
  await page.waitForSelector(".action-widget .monaco-list-row, .context-view .action-label", { timeout: 30000 });
  await page.waitForTimeout(800);
  const titles = await page.$$eval(".action-widget .monaco-list-row, .context-view .action-label", (rows) =>
    rows.map((r) => r.textContent),
  );
  await shot(page, "03-quickfix.png", "vscode-quickfix.png");
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

  // 4. JAX Target: Probe backend from the command palette: a progress notification, then a
  // result that names itself, whose button opens the full report
  await page.keyboard.press("F1");
  await page.waitForSelector(".quick-input-widget input", { timeout: 20000 });
  await page.keyboard.type("JAX Target: Probe backend");
  await page.waitForTimeout(800);
  await page.keyboard.press("Enter");
  const named = "JAX Target: psend+precv lower on cuda, rocm; not on cpu, tpu (jax ";
  await page.waitForFunction(
    (text) =>
      [...document.querySelectorAll(".notifications-toasts .notification-list-item-message")].some((n) =>
        n.textContent.includes(text),
      ),
    named,
    { timeout: 120000 },
  );
  const shown = await toasts(page);
  await page.locator(".notifications-toasts .monaco-button", { hasText: "Open report" }).first().click();
  await page.waitForFunction(
    () => document.querySelector(".editor-instance .monaco-editor .view-lines")?.textContent.includes("ppermute:"),
    null,
    { timeout: 30000 },
  );
  const report = await page.$eval(".editor-instance .monaco-editor .view-lines", (e) => e.textContent);
  const tab = await page.$eval(".tabs-container .tab.active", (e) => e.textContent);
  result.steps.probe = {
    ok:
      shown.some((t) => t.includes(named) && t.includes("ppermute lowers on all")) &&
      tab.includes("backend-probe.txt") &&
      report.includes("psend+precv:"),
    toasts: shown,
    tab,
  };
  await shot(page, "05-probe.png");
});
