// Pure client logic (no vscode import): settings mapping, interpreter choice, server command line.

/** What `WorkspaceConfiguration.inspect` reports for one key. */
export interface Inspected<T> {
  defaultValue?: T;
  globalValue?: T;
  workspaceValue?: T;
  workspaceFolderValue?: T;
}

export type Inspector = (key: string) => Inspected<unknown> | undefined;

/** Server setting keys (camelCase on the wire), as declared in package.json. */
export const SERVER_KEYS = [
  "targetBackends",
  "interpreter",
  "select",
  "ignore",
  "severity",
  "guardFunctions",
  "exclude",
  "probe.timeoutSeconds",
] as const;

/** Settings read only when the server starts: changing one restarts it. */
const RESTART_KEYS = ["interpreter", "logLevel"];

/**
 * What a configuration change asks of the client: restart the server (the interpreter or
 * the log level changed), tell it to read its settings again, or nothing.
 */
export function settingsChange(affects: (section: string) => boolean): "restart" | "notify" | "none" {
  if (RESTART_KEYS.some((key) => affects(`jaxtarget.${key}`))) {
    return "restart";
  }
  return affects("jaxtarget") ? "notify" : "none";
}

/**
 * Settings the user set explicitly, most specific scope first. Unset keys are left
 * out so that `[tool.jaxtarget]` in pyproject.toml applies beneath them.
 */
export function explicitSettings(inspect: Inspector, trusted: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of SERVER_KEYS) {
    const info = inspect(key);
    if (!info) {
      continue;
    }
    let value = info.workspaceFolderValue ?? info.workspaceValue ?? info.globalValue;
    if (key === "interpreter" && !trusted) {
      // a workspace may not pick the interpreter that runs code in an untrusted folder
      value = info.globalValue;
    }
    if (value === undefined) {
      continue;
    }
    if (key === "probe.timeoutSeconds") {
      out.probe = { timeoutSeconds: value };
    } else {
      out[key] = value;
    }
  }
  return out;
}

export interface InterpreterChoice {
  python: string | undefined;
  source: "setting" | "python-extension" | "workspace-venv" | "fallback";
}

/** Whether ``file`` lies inside one of the ``roots`` (folder paths). */
export function inside(file: string, roots: readonly string[]): boolean {
  const norm = (p: string) => p.replace(/\\/g, "/").replace(/\/+$/, "");
  const target = norm(file);
  return roots.some((root) => {
    const r = norm(root);
    return r !== "" && (target === r || target.startsWith(r + "/"));
  });
}

/**
 * The jaxtarget.interpreter setting wins, then the Python extension's active environment,
 * then the workspace's own `.venv`/`venv`. In an untrusted workspace (``untrustedRoots``
 * given) an environment inside the workspace is not run: the workspace could have put any
 * program there.
 */
export function chooseInterpreter(
  setting: readonly string[] | undefined,
  fromPythonExtension: string | undefined,
  fallback: string | undefined,
  untrustedRoots: readonly string[] = [],
  workspaceEnv?: string,
): InterpreterChoice {
  if (setting && setting.length > 0 && setting[0].trim() !== "") {
    return { python: setting[0], source: "setting" };
  }
  if (fromPythonExtension && !inside(fromPythonExtension, untrustedRoots)) {
    return { python: fromPythonExtension, source: "python-extension" };
  }
  if (workspaceEnv && !inside(workspaceEnv, untrustedRoots)) {
    return { python: workspaceEnv, source: "workspace-venv" };
  }
  return { python: fallback, source: "fallback" };
}

export interface ServerCommand {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/**
 * Run the bundled server (bundled/libs on PYTHONPATH) with the user's interpreter,
 * so that nothing needs to be pip-installed in their environment.
 */
export function serverCommand(
  python: string,
  bundledLibs: string | undefined,
  baseEnv: Record<string, string | undefined>,
  pathSeparator = ":",
): ServerCommand {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(baseEnv)) {
    if (v !== undefined) {
      env[k] = v;
    }
  }
  if (bundledLibs) {
    env.PYTHONPATH = env.PYTHONPATH ? `${bundledLibs}${pathSeparator}${env.PYTHONPATH}` : bundledLibs;
  }
  env.PYTHONUNBUFFERED = "1";
  return { command: python, args: ["-m", "jaxtarget", "lsp", "--stdio"], env };
}
