import * as fs from "fs";
import * as path from "path";
import * as vscode from "vscode";
import { PythonExtension } from "@vscode/python-extension";
import {
  DidChangeConfigurationNotification,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
} from "vscode-languageclient/node";
import { chooseInterpreter, explicitSettings, serverCommand, settingsChange, statusText } from "./settings";

let client: LanguageClient | undefined;
let output: vscode.LogOutputChannel;
let status: vscode.LanguageStatusItem;
let lastVerdict: string | undefined;

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
    output.info(`Python extension not available: ${String(err)}`);
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
  const choice = chooseInterpreter(interpreterSetting, fromExtension, "python3", roots);
  if (fromExtension && choice.source === "fallback") {
    output.info(`The workspace is not trusted: not running its environment ${fromExtension}`);
  }
  const python = choice.python ?? "python3";
  const bundled = path.join(context.extensionPath, "bundled", "libs");
  const cmd = serverCommand(python, fs.existsSync(bundled) ? bundled : undefined, process.env);
  output.info(`Starting jaxtarget with ${python} (${choice.source})`);
  const serverOptions: ServerOptions = { command: cmd.command, args: cmd.args, options: { env: cmd.env } };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: "file", language: "python" }],
    outputChannel: output,
    initializationOptions: {
      ...settings,
      logLevel: vscode.workspace.getConfiguration("jaxtarget").get<string>("logLevel", "info"),
      // the server then runs nothing the workspace chose (its pyproject.toml interpreter, the probe)
      workspaceTrusted: trusted,
    },
    synchronize: { fileEvents: vscode.workspace.createFileSystemWatcher("**/pyproject.toml") },
    // VS Code pulls diagnostics, and the server then pushes none: each finding shows once.
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
  client.onDidChangeState((e) => {
    if (e.newState === State.Stopped) {
      status.severity = vscode.LanguageStatusSeverity.Error;
      status.text = "JAX Target stopped";
    }
  });
  await client.start();
  updateStatus();
}

function updateStatus(): void {
  const targets = vscode.workspace.getConfiguration("jaxtarget").get<string[]>("targetBackends", ["auto"]);
  status.text = statusText(targets, lastVerdict);
  status.severity = vscode.LanguageStatusSeverity.Information;
}

let restarting: Promise<void> | undefined;
let restartPending = false;

async function stopClient(): Promise<void> {
  const old = client;
  client = undefined;
  if (!old) {
    return;
  }
  try {
    if (old.state === State.Running || old.state === State.Starting) {
      await old.stop();
    } else {
      await old.dispose();
    }
  } catch (err) {
    // a client whose start failed cannot be stopped; it is dropped all the same
    output.info(`previous server already stopped: ${String(err)}`);
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
  context.subscriptions.push(output, status);

  context.subscriptions.push(
    vscode.commands.registerCommand("jaxtarget.restart", () => restart(context)),
    vscode.commands.registerCommand("jaxtarget.showOutput", () => output.show()),
    // jaxtarget.probeBackend and jaxtarget.showConfiguration are the server's commands,
    // which the language client registers itself; these wrap them for the palette.
    vscode.commands.registerCommand("jaxtarget.showEffectiveConfiguration", async () => {
      const result = await client?.sendRequest("workspace/executeCommand", { command: "jaxtarget.showConfiguration" });
      const doc = await vscode.workspace.openTextDocument({ language: "json", content: JSON.stringify(result, null, 2) });
      await vscode.window.showTextDocument(doc);
    }),
    vscode.commands.registerCommand("jaxtarget.probe", async () => {
      if (!vscode.workspace.isTrusted) {
        void vscode.window.showWarningMessage(
          "JAX Target: the backend probe runs your interpreter and is disabled in an untrusted workspace.",
        );
        return;
      }
      const uri = vscode.window.activeTextEditor?.document.uri.toString();
      const result = (await client?.sendRequest("workspace/executeCommand", {
        command: "jaxtarget.probeBackend",
        arguments: [{ uri }],
      })) as { ok: boolean; summary?: string } | undefined;
      if (result?.ok && result.summary) {
        lastVerdict = result.summary;
        updateStatus();
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
        updateStatus();
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
    output.info("Python extension not found; using jaxtarget.interpreter or python3");
  }
  await restart(context);
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
