// Pure client logic for what the user sees (no vscode import): the status item, the
// effective-configuration document, the output channel's lines and the workspace's venv.
import * as path from "path";
import type { Inspected } from "./settings";

/** One folder as the server's `jaxtarget/status` notification describes it. */
export interface FolderStatus {
  uri: string;
  targets: string[];
  effectiveTargets: string[];
  python?: string | null;
  jaxVersion?: string | null;
}

/**
 * The documents the language client serves: Python files, and the Python cells of notebooks of
 * any type (their URIs have the scheme vscode-notebook-cell; the server checks a notebook's
 * cells together and pushes each cell's diagnostics).
 */
export const DOCUMENT_SELECTOR = [
  { scheme: "file", language: "python" },
  { notebook: "*", language: "python" },
];

/** A notebook cell's URI as its notebook file's (other URIs as they are). */
export function notebookFileUri(uri: string): string {
  const cell = /^vscode-notebook-cell:(?:\/\/[^/]*)?(\/[^#?]*)/.exec(uri);
  return cell ? `file://${cell[1]}` : uri;
}

/** The status of the folder holding ``documentUri`` (the deepest one), else the first folder's. */
export function folderStatusFor(folders: readonly FolderStatus[], documentUri?: string): FolderStatus | undefined {
  let best: FolderStatus | undefined;
  documentUri = documentUri && notebookFileUri(documentUri);
  for (const folder of folders) {
    const root = folder.uri.replace(/\/+$/, "");
    if (documentUri && documentUri.startsWith(root + "/") && (!best || folder.uri.length > best.uri.length)) {
      best = folder;
    }
  }
  return best ?? folders[0];
}

/** The status item's text and detail: the server's effective targets, and what was configured. */
export function statusFromServer(folder: FolderStatus, verdict: string | undefined): { text: string; detail: string } {
  const targets = folder.effectiveTargets.length ? folder.effectiveTargets.join(", ") : "none";
  const text = verdict ? `JAX: ${targets} · ${verdict}` : `JAX: ${targets}`;
  const configured = `configured: ${folder.targets.join(", ") || "auto"}`;
  const detail = folder.jaxVersion ? `${configured} · jax ${folder.jaxVersion}` : `${configured} · no jax found`;
  return { text, detail };
}

/** One setting as `jaxtarget.showConfiguration` reports it. */
export interface SourceRow {
  key: string;
  editor: string | null;
  value: unknown;
  source: string;
}

export interface FolderConfiguration {
  effectiveTargets?: string[];
  python?: string | null;
  jaxVersion?: string | null;
  pyproject?: string | null;
  trusted?: boolean;
  sources?: SourceRow[];
}

/**
 * Where a value came from, in VS Code's words: the server says "editor settings" for what
 * the client sent, and the client knows which scope set it (a folder's own settings are
 * a scope of their own only in a multi-root workspace).
 */
export function sourceLabel(
  row: SourceRow,
  inspected: Inspected<unknown> | undefined,
  pyproject?: string | null,
  multiRoot = false,
): string {
  if (row.source === "pyproject.toml") {
    return pyproject ? `pyproject.toml (${pyproject})` : "pyproject.toml";
  }
  if (row.source !== "editor settings") {
    return row.source;
  }
  if (multiRoot && inspected?.workspaceFolderValue !== undefined) {
    return "folder settings";
  }
  if (inspected?.workspaceValue !== undefined || inspected?.workspaceFolderValue !== undefined) {
    return "workspace settings";
  }
  if (inspected?.globalValue !== undefined) {
    return "user settings";
  }
  return "editor settings";
}

/** The read-only document "Show effective configuration" opens. */
export function renderConfiguration(
  folders: Record<string, FolderConfiguration>,
  inspectFor: (folderUri: string) => (key: string) => Inspected<unknown> | undefined,
  multiRoot = false,
): string {
  const out = ["# JAX Target: effective configuration", ""];
  for (const [uri, config] of Object.entries(folders)) {
    const inspect = inspectFor(uri);
    out.push(`folder            ${uri}${config.trusted === false ? " (not trusted)" : ""}`);
    out.push(`pyproject.toml    ${config.pyproject ?? "none applies"}`);
    out.push(`interpreter       ${config.python ?? "none"} (jax ${config.jaxVersion ?? "not found"})`);
    out.push(`effective targets ${(config.effectiveTargets ?? []).join(", ") || "none"}`, "");
    const rows = (config.sources ?? []).map((row) => [
      row.editor ? `jaxtarget.${row.editor}` : `[tool.jaxtarget] ${row.key}`,
      JSON.stringify(row.value),
      sourceLabel(row, row.editor ? inspect(row.editor) : undefined, config.pyproject, multiRoot),
    ]);
    const header = ["setting", "value", "from"];
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
    for (const row of [header, ...rows]) {
      out.push(row.map((cell, i) => (i < row.length - 1 ? cell.padEnd(widths[i]) : cell)).join("  "));
    }
    out.push("");
  }
  return out.join("\n");
}

export type Level = "error" | "warn" | "info" | "debug" | "trace";

/**
 * A line the language client writes to its output channel, as a level and a message for a
 * log channel that stamps its own time (None: drop it). A server that exits with code 0 was
 * stopped on purpose (restart, shutdown): not an error.
 */
export function routeClientLine(line: string): { level: Level; text: string } | undefined {
  const m = /^\[(Error|Warn|Info|Debug|Trace)\s*- [^\]]*\] ([\s\S]*)$/.exec(line);
  if (!m) {
    const py = /^(DEBUG|INFO|WARNING|ERROR|CRITICAL):([\s\S]*)$/.exec(line);
    const levels: Record<string, Level> = { DEBUG: "debug", INFO: "info", WARNING: "warn", ERROR: "error", CRITICAL: "error" };
    return py ? { level: levels[py[1]], text: py[2] } : { level: "info", text: line };
  }
  const text = m[2];
  if (/^Server process exited with code 0\.?$/.test(text)) {
    return undefined;
  }
  const levels: Record<string, Level> = { Error: "error", Warn: "warn", Info: "info", Debug: "debug", Trace: "trace" };
  return { level: levels[m[1]], text };
}

/** Whether a client line says the server died (not a stop the client asked for). */
export function unexpectedExit(text: string): boolean {
  return /^Server process exited with (code [1-9]\d*|signal \w+)/.test(text);
}

/** The workspace's own environment: `.venv` or `venv` in a folder, first folder first. */
export function workspaceVenv(
  folders: readonly string[],
  isFile: (file: string) => boolean,
  platform: string = process.platform,
): string | undefined {
  const exe = platform === "win32" ? path.join("Scripts", "python.exe") : path.join("bin", "python");
  for (const folder of folders) {
    for (const name of [".venv", "venv"]) {
      const candidate = path.join(folder, name, exe);
      if (isFile(candidate)) {
        return candidate;
      }
    }
  }
  return undefined;
}
