// Package the extension from a staging folder holding only what ships, so that
// vsce does not walk the repository (virtual environments, node_modules).
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const stage = join(root, "build", "vsix");
const out = resolve(process.argv[2] ?? join(root, "jaxtarget.vsix"));
rmSync(stage, { recursive: true, force: true });
mkdirSync(stage, { recursive: true });

const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
delete pkg.devDependencies;
delete pkg.scripts;
pkg.dependencies = {};
writeFileSync(join(stage, "package.json"), JSON.stringify(pkg, null, 2));
for (const name of ["README.md", "LICENSE", "dist"]) {
  cpSync(join(root, name), join(stage, name), { recursive: true });
}
// What the server never reads: console scripts, jedi's stubs of third-party packages
// (typeshed's stubs/, django-stubs: JAX code resolves against the user's own jax), and
// pip's installation records (RECORD and the like; METADATA stays for importlib.metadata)
const skip = [
  join(root, "bundled", "libs", "bin"),
  join(root, "bundled", "libs", "jedi", "third_party", "typeshed", "stubs"),
  join(root, "bundled", "libs", "jedi", "third_party", "django-stubs"),
];
const installRecords = new Set(["RECORD", "INSTALLER", "REQUESTED", "direct_url.json"]);
const unused = (src) =>
  skip.some((s) => src === s || src.startsWith(s + sep)) ||
  src.includes("__pycache__") ||
  (basename(dirname(src)).endsWith(".dist-info") && installRecords.has(basename(src)));
cpSync(join(root, "bundled"), join(stage, "bundled"), { recursive: true, filter: (src) => !unused(src) });
writeFileSync(join(stage, ".vscodeignore"), "**/*.map\n");
const vsce = join(root, "node_modules", "@vscode", "vsce", "vsce");
if (!existsSync(vsce)) {
  throw new Error("run npm ci first: @vscode/vsce is missing");
}
execFileSync(process.execPath, [vsce, "package", "--no-dependencies", "--allow-missing-repository", "-o", out], {
  cwd: stage,
  stdio: "inherit",
});
