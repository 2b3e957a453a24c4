import { strict as assert } from "node:assert";
import { test } from "node:test";
import {
  DOCUMENT_SELECTOR,
  folderStatusFor,
  notebookFileUri,
  renderConfiguration,
  routeClientLine,
  sourceLabel,
  statusFromServer,
  unexpectedExit,
  workspaceVenv,
} from "../present";

const A = { uri: "file:///w/a", targets: ["cpu", "gpu"], effectiveTargets: ["cpu", "cuda", "rocm"], jaxVersion: "0.10.2" };
const AB = { uri: "file:///w/a/b", targets: ["auto"], effectiveTargets: ["cpu"], jaxVersion: null };

test("the status shows the server's effective targets for the active file's folder", () => {
  assert.equal(folderStatusFor([A, AB], "file:///w/a/b/x.py"), AB);
  assert.equal(folderStatusFor([A, AB], "file:///w/a/x.py"), A);
  assert.equal(folderStatusFor([A, AB], "file:///elsewhere.py"), A);
  assert.equal(folderStatusFor([], "file:///w/a/x.py"), undefined);
  // a notebook cell is in its notebook file's folder
  assert.equal(folderStatusFor([A, AB], "vscode-notebook-cell:/w/a/b/nb.ipynb#W0sZmlsZQ%3D%3D"), AB);
  assert.deepEqual(statusFromServer(A, undefined), { text: "JAX: cpu, cuda, rocm", detail: "configured: cpu, gpu · jax 0.10.2" });
  assert.deepEqual(statusFromServer(AB, "cpu ✗ · cuda ✓"), {
    text: "JAX: cpu · cpu ✗ · cuda ✓",
    detail: "configured: auto · no jax found",
  });
});

test("a value the client sent is attributed to the VS Code scope that set it", () => {
  const row = { key: "targets", editor: "targetBackends", value: ["cpu"], source: "editor settings" };
  assert.equal(sourceLabel(row, { globalValue: ["cpu"] }), "user settings");
  assert.equal(sourceLabel(row, { globalValue: ["tpu"], workspaceValue: ["cpu"] }), "workspace settings");
  assert.equal(sourceLabel(row, { workspaceValue: ["tpu"], workspaceFolderValue: ["cpu"] }, null, true), "folder settings");
  // one folder open: its .vscode/settings.json is the workspace's settings
  assert.equal(sourceLabel(row, { workspaceValue: ["cpu"], workspaceFolderValue: ["cpu"] }), "workspace settings");
  assert.equal(sourceLabel({ ...row, source: "default" }, { defaultValue: ["auto"] }), "default");
  assert.equal(sourceLabel({ ...row, source: "pyproject.toml" }, undefined, "/w/pyproject.toml"), "pyproject.toml (/w/pyproject.toml)");
});

test("the configuration document has a row per setting with its layer", () => {
  const text = renderConfiguration(
    {
      "file:///w": {
        effectiveTargets: ["cpu"],
        python: "/w/.venv/bin/python",
        jaxVersion: "0.10.2",
        pyproject: "/w/pyproject.toml",
        sources: [
          { key: "targets", editor: "targetBackends", value: ["cpu"], source: "editor settings" },
          { key: "select", editor: "select", value: ["JT001"], source: "pyproject.toml" },
          { key: "per-file-targets", editor: null, value: [], source: "default" },
        ],
      },
    },
    () => (key) => (key === "targetBackends" ? { workspaceValue: ["cpu"] } : undefined),
  );
  const lines = text.split("\n");
  assert.match(lines.find((l) => l.startsWith("jaxtarget.targetBackends")) ?? "", /\["cpu"\]\s+workspace settings$/);
  assert.match(lines.find((l) => l.startsWith("jaxtarget.select")) ?? "", /\["JT001"\]\s+pyproject\.toml \(\/w\/pyproject\.toml\)$/);
  assert.match(lines.find((l) => l.startsWith("[tool.jaxtarget] per-file-targets")) ?? "", /\[\]\s+default$/);
  assert.ok(text.includes("effective targets cpu"), text);
});

test("client lines go to the log at their level; a stop on purpose is no error", () => {
  assert.equal(routeClientLine("[Error - 10:00:00 AM] Server process exited with code 0."), undefined);
  assert.deepEqual(routeClientLine("[Error - 10:00:00 AM] Server process exited with code 1."), {
    level: "error",
    text: "Server process exited with code 1.",
  });
  assert.deepEqual(routeClientLine("[Warn  - 10:00:00] configuration: bad"), { level: "warn", text: "configuration: bad" });
  assert.deepEqual(routeClientLine("[Info  - 10:00:00] ready"), { level: "info", text: "ready" });
  assert.deepEqual(routeClientLine("WARNING:jaxtarget:answered"), { level: "warn", text: "jaxtarget:answered" });
  assert.deepEqual(routeClientLine("plain"), { level: "info", text: "plain" });
  assert.ok(unexpectedExit("Server process exited with code 1."));
  assert.ok(unexpectedExit("Server process exited with signal SIGKILL."));
  assert.ok(!unexpectedExit("Server process exited with code 0."));
});

test("the workspace's .venv, then venv, is found", () => {
  const files = new Set(["/w2/venv/bin/python", "/w3/.venv/bin/python", "/w3/venv/bin/python"]);
  const isFile = (f: string) => files.has(f);
  assert.equal(workspaceVenv(["/w1"], isFile, "linux"), undefined);
  assert.equal(workspaceVenv(["/w1", "/w2"], isFile, "linux"), "/w2/venv/bin/python");
  assert.equal(workspaceVenv(["/w3"], isFile, "linux"), "/w3/.venv/bin/python");
});

test("the client serves Python files and the Python cells of any notebook", () => {
  assert.deepEqual(DOCUMENT_SELECTOR, [
    { scheme: "file", language: "python" },
    { notebook: "*", language: "python" },
  ]);
  assert.equal(notebookFileUri("vscode-notebook-cell:/w/a/nb.ipynb#W1sZmlsZQ%3D%3D"), "file:///w/a/nb.ipynb");
  assert.equal(notebookFileUri("vscode-notebook-cell://host/w/nb.ipynb#c"), "file:///w/nb.ipynb");
  assert.equal(notebookFileUri("file:///w/a/x.py"), "file:///w/a/x.py");
});
