import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import {
  chooseInterpreter,
  explicitSettings,
  inside,
  SERVER_KEYS,
  serverCommand,
  settingsChange,
} from "../settings";

const pkg = JSON.parse(readFileSync(join(__dirname, "..", "..", "..", "package.json"), "utf8"));

test("only explicitly set values are sent, most specific scope first", () => {
  const values: Record<string, object> = {
    targetBackends: { defaultValue: ["auto"], globalValue: ["cpu"], workspaceFolderValue: ["cuda"] },
    severity: { defaultValue: {}, workspaceValue: { JT002: "hint" } },
    "probe.timeoutSeconds": { defaultValue: 60, globalValue: 5 },
    select: { defaultValue: [] },
  };
  const got = explicitSettings((k) => values[k], true);
  assert.deepEqual(got, { targetBackends: ["cuda"], severity: { JT002: "hint" }, probe: { timeoutSeconds: 5 } });
});

test("an untrusted workspace cannot choose the interpreter", () => {
  const values: Record<string, object> = {
    interpreter: { globalValue: ["/usr/bin/python3"], workspaceValue: ["./evil/python"] },
  };
  assert.deepEqual(explicitSettings((k) => values[k], false), { interpreter: ["/usr/bin/python3"] });
  assert.deepEqual(explicitSettings((k) => values[k], true), { interpreter: ["./evil/python"] });
});

test("interpreter: setting, then the Python extension, then the fallback", () => {
  assert.deepEqual(chooseInterpreter(["/opt/py"], "/venv/bin/python", "python3"), { python: "/opt/py", source: "setting" });
  assert.deepEqual(chooseInterpreter([], "/venv/bin/python", "python3"), { python: "/venv/bin/python", source: "python-extension" });
  assert.deepEqual(chooseInterpreter([""], undefined, "python3"), { python: "python3", source: "fallback" });
});

test("an untrusted workspace's own environment is not chosen", () => {
  const roots = ["/work/repo/"];
  assert.deepEqual(chooseInterpreter([], "/work/repo/.venv/bin/python", "python3", roots), {
    python: "python3",
    source: "fallback",
  });
  assert.deepEqual(chooseInterpreter([], "/work/repo-other/bin/python", "python3", roots), {
    python: "/work/repo-other/bin/python",
    source: "python-extension",
  });
  assert.equal(inside("C:\\w\\r\\.venv\\python.exe", ["C:\\w\\r"]), true);
  assert.equal(inside("/usr/bin/python3", roots), false);
});

test("server command runs the bundled server with the user's interpreter", () => {
  const cmd = serverCommand("/venv/bin/python", "/ext/bundled/libs", { PYTHONPATH: "/x", HOME: "/h", GONE: undefined });
  assert.equal(cmd.command, "/venv/bin/python");
  assert.deepEqual(cmd.args, ["-m", "jaxtarget", "lsp", "--stdio"]);
  assert.equal(cmd.env.PYTHONPATH, "/ext/bundled/libs:/x");
  assert.equal(cmd.env.HOME, "/h");
  assert.ok(!("GONE" in cmd.env));
  assert.equal(serverCommand("py", undefined, {}).env.PYTHONPATH, undefined);
});

test("every server key is contributed in package.json, and every contributed key is sent", () => {
  const props = pkg.contributes.configuration.properties;
  for (const key of SERVER_KEYS) {
    assert.ok(`jaxtarget.${key}` in props, key);
  }
  const sent = new Set<string>([...SERVER_KEYS, "logLevel"]); // logLevel is the client's own
  for (const key of Object.keys(props)) {
    assert.ok(sent.has(key.replace(/^jaxtarget\./, "")), key);
  }
});

test("a settings change restarts the server, or has it read its settings again", () => {
  const only = (changed: string[]) => (section: string) =>
    changed.some((key) => key === section || key.startsWith(`${section}.`));
  assert.equal(settingsChange(only(["jaxtarget.interpreter"])), "restart");
  assert.equal(settingsChange(only(["jaxtarget.logLevel"])), "restart");
  assert.equal(settingsChange(only(["jaxtarget.targetBackends"])), "notify");
  assert.equal(settingsChange(only(["jaxtarget.probe.timeoutSeconds"])), "notify");
  assert.equal(settingsChange(only(["python.defaultInterpreterPath"])), "none");
});

test("the workspace's own venv comes after the setting and the Python extension", () => {
  const venv = "/w/.venv/bin/python";
  assert.deepEqual(chooseInterpreter([], undefined, "python3", [], venv), { python: venv, source: "workspace-venv" });
  assert.deepEqual(chooseInterpreter([], "/ext/python", "python3", [], venv), { python: "/ext/python", source: "python-extension" });
  assert.deepEqual(chooseInterpreter(["/opt/py"], undefined, "python3", [], venv), { python: "/opt/py", source: "setting" });
  // an untrusted folder's venv is not run
  assert.deepEqual(chooseInterpreter([], undefined, "python3", ["/w"], venv), { python: "python3", source: "fallback" });
});
