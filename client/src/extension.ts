import * as fs from "fs";
import * as path from "path";
import * as vscode from "vscode";
import { PythonExtension } from "@vscode/python-extension";
import {
  DidChangeConfigurationNotification,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  CloseAction,
  ErrorHandler,
  RevealOutputChannelOn,
  State,
} from "vscode-languageclient/node";
import {
  DOCUMENT_SELECTOR,
  FolderConfiguration,
  FolderStatus,
  folderStatusFor,
  renderConfiguration,
  routeClientLine,
  statusFromServer,
  unexpectedExit,
  workspaceVenv,
} from "./present";
import { chooseInterpreter, explicitSettings, serverCommand, settingsChange } from "./settings";

let client: LanguageClient | undefined;
let output: vscode.LogOutputChannel;
let status: vscode.LanguageStatusItem;
let lastVerdict: string | undefined;
let folderStatuses: FolderStatus[] = [];
let pythonExtensionMissingLogged = false;
/** True while the client stops the server on purpose (a restart, deactivation). */
let stopping = false;
/** Why the server cannot run at all with this interpreter (shown once; no restarts). */
let fatal: string | undefined;

const CONFIG_URI = vscode.Uri.parse("jaxtarget:/effective-configuration.txt");
const REPORT_URI = vscode.Uri.parse("jaxtarget:/backend-probe.txt");
/** Read-only documents of the extension's own (the effective configuration, the probe's report). */
const documents = new (class implements vscode.TextDocumentContentProvider {
  readonly texts = new Map<string, string>();
  readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.path) ?? "";
  }
  async show(uri: vscode.Uri, text: string): Promise<void> {
    this.texts.set(uri.path, text);
    this.changed.fire(uri);
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { preview: false });
  }
})();

interface ProbeReply {
  ok: boolean;
  summary?: string;
  headline?: string;
  report?: string;
  error?: { kind: string; message: string };
}

/** Errors pop up with a button to the logs; the channel itself never opens by itself. */
function showError(message: string): void {
  void vscode.window.showErrorMessage(`JAX Target: ${message}`, "Show logs").then((choice) => {
    if (choice === "Show logs") {
      output.show(true);
    }
  });
}

/**
 * The output channel the language client writes to: its "[Level - time] message" lines go
 * to the log channel at their level (one timestamp each), a server stopped on purpose is
 * not an error, and a server that dies says so once with a "Show logs" button.
 */
function clientChannel(): vscode.OutputChannel {
  let pending = "";
  const write = (line: string) => {
    const routed = routeClientLine(line);
    if (!routed) {
      return;
    }
    output[routed.level](routed.text);
    if (routed.text.startsWith("jaxtarget needs Python") && !fatal) {
      fatal = routed.text; // one message, and no restarts: it cannot start with this interpreter
      showError(routed.text);
    } else if (unexpectedExit(routed.text) && !stopping && !fatal) {
      showError(`the server stopped unexpectedly (${routed.text.replace(/^Server process exited with /, "")})`);
    }
  };
  return {
    name: output.name,
    append: (value: string) => {
      pending += value;
      const lines = pending.split(/\r?\n/);
      pending = lines.pop() ?? "";
      lines.filter((l) => l.trim() !== "").forEach(write);
    },
    appendLine: (value: string) => write(value),
    replace: (value: string) => write(value),
    clear: () => output.clear(),
    show: (...args: unknown[]) => output.show(typeof args[0] === "boolean" ? args[0] : Boolean(args[1])),
    hide: () => output.hide(),
    dispose: () => undefined,
  } as vscode.OutputChannel;
}

const NO_INTERPRETER_SHOWN = "jaxtarget.noInterpreterNoticeShown";

/** Without any interpreter to use, say so once per workspace, with a way to pick one. */
async function noticeNoInterpreter(context: vscode.ExtensionContext, python: string): Promise<void> {
  if (context.workspaceState.get<boolean>(NO_INTERPRETER_SHOWN)) {
    return;
  }
  await context.workspaceState.update(NO_INTERPRETER_SHOWN, true);
  const pick = "Select interpreter";
  const choice = await vscode.window.showWarningMessage(
    `JAX Target: no Python interpreter is selected and the workspace has no .venv or venv; analysing with ${python} from PATH.`,
    pick,
  );
  if (choice !== pick) {
    return;
  }
  const picked = await vscode.window.showOpenDialog({
    canSelectMany: false,
    openLabel: "Use this interpreter",
    title: "JAX Target: Python interpreter with jax",
  });
  if (picked?.[0]) {
    const target = vscode.workspace.workspaceFolders?.length
      ? vscode.ConfigurationTarget.Workspace
      : vscode.ConfigurationTarget.Global;
    await vscode.workspace.getConfiguration("jaxtarget").update("interpreter", [picked[0].fsPath], target);
  }
}

function inspector(scope?: vscode.ConfigurationScope) {
  const config = vscode.workspace.getConfiguration("jaxtarget", scope);
  return (key: string) => config.inspect(key);
}

async function pythonFromExtension(resource?: vscode.Uri): Promise<string | undefined> {
  try {
    const api = await PythonExtension.api();
    const envPath = api.environments.getActiveEnvironmentPath(resource);
    const env = await api.environments.resolveEnvironment(envPath);
    return env?.executable.uri?.fsPath ?? envPath.path;
  } catch (err) {
    if (!pythonExtensionMissingLogged) {
      pythonExtensionMissingLogged = true;
      output.info(`Python extension not available: ${String(err)}`);
    }
    return undefined;
  }
}

async function startServer(context: vscode.ExtensionContext): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.[0];
  const trusted = vscode.workspace.isTrusted;
  const settings = explicitSettings(inspector(folder), trusted);
  const asked = vscode.workspace.getConfiguration("jaxtarget", folder).inspect<string[]>("interpreter");
  if (!trusted && (asked?.workspaceValue?.length || asked?.workspaceFolderValue?.length)) {
    void vscode.window.showInformationMessage(
      "JAX Target: this workspace's jaxtarget.interpreter is ignored until you trust the folder, " +
        "because the server and the probe would run that program.",
    );
  }
  const interpreterSetting = settings.interpreter as string[] | undefined;
  const roots = trusted ? [] : (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
  const fromExtension = await pythonFromExtension(folder?.uri);
  const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
  const venv = workspaceVenv(folders, (file) => fs.statSync(file, { throwIfNoEntry: false })?.isFile() ?? false);
  const choice = chooseInterpreter(interpreterSetting, fromExtension, "python3", roots, venv);
  if ((fromExtension || venv) && choice.source === "fallback" && !trusted) {
    output.info(`The workspace is not trusted: not running its environment ${fromExtension ?? venv}`);
  }
  const python = choice.python ?? "python3";
  fatal = undefined;
  if (choice.source === "fallback" && trusted) {
    void noticeNoInterpreter(context, python);
  }
  const bundled = path.join(context.extensionPath, "bundled", "libs");
  const cmd = serverCommand(python, fs.existsSync(bundled) ? bundled : undefined, process.env);
  output.info(`Starting jaxtarget with ${python} (${choice.source})`);
  const serverOptions: ServerOptions = { command: cmd.command, args: cmd.args, options: { env: cmd.env } };
  const clientOptions: LanguageClientOptions = {
    documentSelector: DOCUMENT_SELECTOR,
    outputChannel: clientChannel(),
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    errorHandler: {
      error: (error, message, count) => defaultHandler().error(error, message, count),
      closed: () =>
        fatal || stopping ? { action: CloseAction.DoNotRestart, handled: true } : defaultHandler().closed(),
    },
    initializationOptions: {
      ...settings,
      logLevel: vscode.workspace.getConfiguration("jaxtarget").get<string>("logLevel", "info"),
      // the server then runs nothing the workspace chose (its pyproject.toml interpreter, the probe)
      workspaceTrusted: trusted,
    },
    synchronize: { fileEvents: vscode.workspace.createFileSystemWatcher("**/pyproject.toml") },
    // VS Code pulls the diagnostics of files, and the server then pushes none; a notebook
    // cell's are pushed (this client never pulls for cells): each finding shows once.
    middleware: {
      workspace: {
        configuration: (params) =>
          params.items.map((item) => {
            const scope = item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined;
            return explicitSettings(inspector(scope), vscode.workspace.isTrusted);
          }),
      },
    },
  };
  client = new LanguageClient("jaxtarget", "JAX Target", serverOptions, clientOptions);
  const created = client;
  let fallbackHandler: ErrorHandler | undefined;
  const defaultHandler = () => (fallbackHandler ??= created.createDefaultErrorHandler(4));
  client.onDidChangeState((e) => {
    if (e.newState === State.Stopped && !stopping) {
      status.severity = vscode.LanguageStatusSeverity.Error;
      status.text = "JAX Target stopped";
    }
  });
  // the server's effective targets (pyproject.toml, settings, `auto` resolved), whenever they change
  client.onNotification("jaxtarget/status", (params: { folders?: FolderStatus[] }) => {
    folderStatuses = params.folders ?? [];
    updateStatus();
  });
  status.text = "JAX: starting…";
  status.busy = true;
  await client.start();
}

function updateStatus(): void {
  const folder = folderStatusFor(folderStatuses, vscode.window.activeTextEditor?.document.uri.toString());
  status.busy = false;
  if (!folder) {
    return;
  }
  const shown = statusFromServer(folder, lastVerdict);
  status.text = shown.text;
  status.detail = shown.detail;
  status.severity = vscode.LanguageStatusSeverity.Information;
  output.info(`effective targets: ${folder.effectiveTargets.join(", ")} (${shown.detail})`);
}

let restarting: Promise<void> | undefined;
let restartPending = false;

async function stopClient(): Promise<void> {
  const old = client;
  client = undefined;
  if (!old) {
    return;
  }
  stopping = true;
  try {
    if (old.state === State.Running || old.state === State.Starting) {
      await old.stop();
    } else {
      await old.dispose();
    }
  } catch (err) {
    // a client whose start failed cannot be stopped; it is dropped all the same
    output.info(`previous server already stopped: ${String(err)}`);
  } finally {
    stopping = false;
  }
}

/** Restart the server: one restart runs at a time, and at most one more waits behind it. */
function restart(context: vscode.ExtensionContext): Promise<void> {
  if (restarting) {
    restartPending = true;
    return restarting;
  }
  restarting = (async () => {
    do {
      restartPending = false;
      await stopClient();
      try {
        await startServer(context);
      } catch (err) {
        output.error(`jaxtarget did not start: ${String(err)}`);
        status.busy = false;
        status.severity = vscode.LanguageStatusSeverity.Error;
        status.text = "JAX Target did not start";
        if (!fatal) {
          showError("the language server did not start.");
        }
      }
    } while (restartPending);
  })().finally(() => {
    restarting = undefined;
  });
  return restarting;
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel("JAX Target", { log: true });
  status = vscode.languages.createLanguageStatusItem("jaxtarget.status", { language: "python" });
  status.name = "JAX Target";
  status.command = { title: "Probe backend", command: "jaxtarget.probe" };
  context.subscriptions.push(
    output,
    status,
    vscode.workspace.registerTextDocumentContentProvider(CONFIG_URI.scheme, documents),
    vscode.window.onDidChangeActiveTextEditor(() => updateStatus()),
  );

  context.subscriptions.push(
    vscode.commands.registerCommand("jaxtarget.restart", () => restart(context)),
    vscode.commands.registerCommand("jaxtarget.showOutput", () => output.show()),
    // jaxtarget.probeBackend and jaxtarget.showConfiguration are the server's commands,
    // which the language client registers itself; these wrap them for the palette.
    vscode.commands.registerCommand("jaxtarget.showEffectiveConfiguration", async () => {
      const result = (await client?.sendRequest("workspace/executeCommand", {
        command: "jaxtarget.showConfiguration",
      })) as Record<string, FolderConfiguration> | undefined;
      if (!result) {
        showError("the language server is not running.");
        return;
      }
      const inspectFor = (uri: string) => {
        const config = vscode.workspace.getConfiguration("jaxtarget", vscode.Uri.parse(uri));
        return (key: string) => config.inspect(key);
      };
      // a read-only virtual document, rendered afresh each time
      await documents.show(
        CONFIG_URI,
        renderConfiguration(result, inspectFor, vscode.workspace.workspaceFile !== undefined),
      );
    }),
    vscode.commands.registerCommand("jaxtarget.probe", async () => {
      if (!vscode.workspace.isTrusted) {
        void vscode.window.showWarningMessage(
          "JAX Target: the backend probe runs your interpreter and is disabled in an untrusted workspace.",
        );
        return;
      }
      const uri = vscode.window.activeTextEditor?.document.uri.toString();
      // a cancellable notification while it runs (cancelling kills the probe's child); the
      // server stays quiet and the result, which names itself, offers the full report
      const result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: "JAX Target: probing backends", cancellable: true },
        async (_progress, token) => {
          try {
            const params = { command: "jaxtarget.probeBackend", arguments: [{ uri, quiet: true }] };
            return (await client?.sendRequest("workspace/executeCommand", params, token)) as ProbeReply | undefined;
          } catch {
            return undefined; // cancelled
          }
        },
      );
      if (!result) {
        return;
      }
      if (!result.ok) {
        if (result.error?.kind !== "cancelled") {
          showError(`the probe failed: ${result.error?.message ?? "no result"}`);
        }
        return;
      }
      lastVerdict = result.summary;
      updateStatus();
      const choice = await vscode.window.showInformationMessage(result.headline ?? "JAX Target: probed", "Open report");
      if (choice === "Open report") {
        await documents.show(REPORT_URI, result.report ?? "");
      }
    }),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      const change = settingsChange((section) => e.affectsConfiguration(section));
      if (change === "restart") {
        await restart(context);
      } else if (change === "notify") {
        // the server asks for the settings again (workspace/configuration) and refreshes
        if (client?.state === State.Running) {
          await client.sendNotification(DidChangeConfigurationNotification.type, { settings: null });
        }
      }
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => restart(context)),
  );

  try {
    const api = await PythonExtension.api();
    context.subscriptions.push(
      api.environments.onDidChangeActiveEnvironmentPath(async () => {
        output.info("Python interpreter changed; restarting jaxtarget");
        await restart(context);
      }),
    );
  } catch {
    output.info("Python extension not found: jaxtarget.interpreter, the workspace's .venv or venv, else python3");
  }
  await restart(context);
}

export async function deactivate(): Promise<void> {
  stopping = true;
  await client?.stop();
}
