// A Jupyter notebook in a real VS Code (code-server) driven by headless Chromium: VS Code's own
// ipynb support opens it in the notebook editor (notebook type jupyter-notebook, no Jupyter
// extension), and each Python cell gets its squiggles, hover and quick fixes.
//
// Usage: node vscode-notebook-e2e.mjs <code-server> <vsix> <folder to copy> <artifacts> <python> <notebook> <cell> <line>
// The folder holds <notebook>, whose cell at index <cell> (from 0, markdown cells counted)
// calls lax.psend on its line <line> (from 1). Prints one JSON object with what
// each step observed; screenshots go to <artifacts>.
import { cpSync } from "node:fs";
import {
  openFromExplorer, problemRows, problemsShow, QUIET, runInVSCode, screenshots, showProblems, toggleProblems,
  userFolders,
} from "./lib.mjs";

const [codeServer, vsix, sourceFolder, artifacts, python, notebook, cellArg, lineArg] = process.argv.slice(2);
const [cell, line] = [Number(cellArg), Number(lineArg)];
const folders = userFolders("jaxtarget-notebook-", artifacts, {
  "security.workspace.trust.enabled": false,
  ...QUIET,
  "editor.hover.delay": 200,
  "jaxtarget.interpreter": [python],
  // the notebook editor, never the JSON text, even before VS Code's ipynb support has started
  "workbench.editorAssociations": { "*.ipynb": "jupyter-notebook" },
});
cpSync(sourceFolder, folders.workspace, { recursive: true });
const shot = screenshots(artifacts);

const SQUIGGLE = ".notebookOverlay .monaco-editor .squiggly-error";
const GUARD = "Guard `lax.psend` to run only on a GPU";

/** Where the first error squiggle of the notebook is: its cell's index, and the text of its line there. */
const squiggleAt = (page) =>
  page.$eval(SQUIGGLE, (squiggle) => {
    const row = squiggle.closest(".monaco-list-row");
    const editor = squiggle.closest(".monaco-editor");
    const y = squiggle.getBoundingClientRect().top + squiggle.getBoundingClientRect().height / 2;
    const lines = [...editor.querySelectorAll(".view-lines .view-line")];
    const hit = lines.find((l) => l.getBoundingClientRect().top <= y && y < l.getBoundingClientRect().bottom);
    return { cell: Number(row?.getAttribute("data-index")), line: hit?.textContent ?? null };
  });

/** The text of the notebook cell at `index`. */
const cellText = (page, index) =>
  page.$eval(
    `.notebookOverlay .monaco-list-row[data-index="${index}"] .view-lines`,
    (e) => e.textContent.replace(/\u00a0/g, " "),
  );

await runInVSCode({ codeServer, vsix, folders, artifacts, settle: 3000, logOnFailure: true }, async (page, result) => {
  // open the notebook from the Explorer in VS Code's notebook editor (opened before VS Code's
  // ipynb support is ready, it shows as JSON text: then it is closed and opened again)
  await openFromExplorer(page, notebook);
  for (let tries = 1; ; tries++) {
    try {
      await page.waitForSelector(".notebookOverlay .monaco-editor .view-lines", { timeout: 15000 });
      break;
    } catch (err) {
      if (tries === 4) {
        throw err;
      }
      await page.keyboard.press("Control+W");
      await page.waitForTimeout(2000);
      await openFromExplorer(page, notebook);
    }
  }

  // 1. the squiggle on lax.psend, in its cell and on its line there; JT001 in Problems
  await page.waitForSelector(SQUIGGLE, { timeout: 120000 });
  const at = await squiggleAt(page);
  await showProblems(page);
  const problems = await problemsShow(page, true);
  const jt001 = problems.filter((p) => p.includes("JT001"));
  result.steps.diagnostic = {
    ok:
      at.cell === cell &&
      (at.line ?? "").replace(/\u00a0/g, " ").includes("lax.psend(") &&
      jt001.length === 1 &&
      jt001[0].includes(`Ln ${line},`),
    at,
    problems,
  };
  await shot(page, "01-diagnostic.png");

  // 2. hover on psend: the verdict and the backend support table
  await toggleProblems(page);
  await page.waitForTimeout(500);
  const box = await (await page.waitForSelector(SQUIGGLE)).boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.waitForFunction(
    () => [...document.querySelectorAll(".monaco-hover")].some((h) => h.textContent.includes("Backend support")),
    null,
    { timeout: 30000 },
  );
  const hoverText = await page.$$eval(".monaco-hover", (hs) =>
    hs.map((h) => h.textContent).find((t) => t.includes("Backend support")),
  );
  const verdict = hoverText.indexOf("✗ Fails on");
  result.steps.hover = {
    ok: hoverText.includes("psend") && verdict >= 0 && verdict < hoverText.indexOf("Backend support"),
    text: hoverText,
  };
  await shot(page, "02-hover.png");

  // 3. quick fix in the cell: the GPU guard goes into the cell, and JT001 goes away. A fix
  // chosen while the server re-analyses (its environment probe moves the settings at start-up)
  // names a finding of the older analysis and edits nothing: then it is asked for again.
  await page.mouse.move(10, 10);
  let titles = [];
  for (let tries = 1; ; tries++) {
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
    await page.keyboard.press("Control+.");
    await page.locator(".action-widget .monaco-list-row", { hasText: GUARD }).first().waitFor({ timeout: 30000 });
    await page.waitForTimeout(800);
    titles = await page.$$eval(".action-widget .monaco-list-row", (rows) => rows.map((r) => r.textContent));
    await shot(page, "03-quickfix.png");
    await page.locator(".action-widget .monaco-list-row", { hasText: GUARD }).first().click();
    try {
      await page.waitForFunction(
        (index) =>
          document
            .querySelector(`.notebookOverlay .monaco-list-row[data-index="${index}"] .view-lines`)
            ?.textContent.includes("has_gpu_backend()"),
        cell,
        { timeout: 10000 },
      );
      break;
    } catch (err) {
      if (tries === 3) {
        throw err;
      }
      await page.keyboard.press("Escape");
    }
  }
  const fixed = await cellText(page, cell);
  await toggleProblems(page);
  const gone = !(await problemsShow(page, false)).some((p) => p.includes("JT001"));
  result.steps.quickfix = {
    ok: titles.some((t) => t.includes(GUARD)) && fixed.includes("if has_gpu_backend():") && gone,
    titles,
    cell: fixed,
    problems: await problemRows(page),
  };
  await shot(page, "04-fixed.png");
});
