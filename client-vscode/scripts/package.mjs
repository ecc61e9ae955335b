// Build the VSIX for one platform: the extension bundled by esbuild, the language server
// and its libraries for that platform (bundle_server.py), then `vsce package --target`.
//   node client-vscode/scripts/package.mjs [--target linux-x64]
// Writes client-vscode/dist/memory-ls-<target>.vsix and prints its path on the last line.
//   MEMORY_LS_BUILD_PYTHON  Python 3.10+ with pip for bundle_server.py (it needs nothing else)
//                           (default <repo>/.venv/bin/python when it exists, else python3)
// The settings schema's check (scripts/settings_schema.py --check) imports the server's
// settings, so it needs the server's libraries: it runs in the Python tests
// (tests/packaging/test_settings_schema.py), not here.
import { execFileSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const args = process.argv.slice(2);
const at = args.indexOf("--target");
const target = at >= 0 ? args[at + 1] : hostTarget();

/** VS Code's name for this machine's platform (linux-x64, darwin-arm64, win32-x64, alpine-x64…). */
function hostTarget() {
  const system = process.platform === "linux" && existsSync("/etc/alpine-release") ? "alpine" : process.platform;
  return `${system}-${process.arch}`;
}

function run(command, commandArgs) {
  console.log(`+ ${command} ${commandArgs.join(" ")}`);
  execFileSync(command, commandArgs, { cwd: repo, stdio: "inherit" });
}

const venvPython = join(repo, ".venv", process.platform === "win32" ? "Scripts/python.exe" : "bin/python");
const python = process.env.MEMORY_LS_BUILD_PYTHON || (existsSync(venvPython) ? venvPython : "python3");
const vsce = join(repo, "node_modules", ".bin", process.platform === "win32" ? "vsce.cmd" : "vsce");
const vsix = join(repo, "client-vscode", "dist", `memory-ls-${target}.vsix`);

run(process.execPath, [join(repo, "client-vscode", "scripts", "build.mjs"), "--production"]);
run(python, [join(repo, "client-vscode", "scripts", "bundle_server.py"), "build", "--target", target]);
run(vsce, [
  "package",
  "--target",
  target,
  "--no-dependencies",
  "--skip-license",
  "--allow-missing-repository",
  "--readme-path",
  "client-vscode/README.md",
  "-o",
  vsix,
]);
console.log(`VSIX for ${target}: ${(statSync(vsix).size / 1e6).toFixed(1)} MB`);
console.log(vsix);
