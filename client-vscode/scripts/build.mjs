// Bundle the extension with esbuild (client-vscode/dist/extension.js), and with
// --tests the unit tests (client-vscode/out/test/*.test.js, for `node --test`).
//   node client-vscode/scripts/build.mjs [--tests] [--watch] [--production]
import * as esbuild from "esbuild";
import { readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const client = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const args = new Set(process.argv.slice(2));
const production = args.has("--production");

const common = {
  bundle: true,
  platform: "node",
  target: "node20",
  format: "cjs",
  sourcemap: production ? false : "linked",
  logLevel: "warning",
};

const builds = [
  {
    ...common,
    entryPoints: [join(client, "src", "extension.ts")],
    outfile: join(client, "dist", "extension.js"),
    external: ["vscode"],
    minify: production,
  },
  {
    // The memory graph's webview script, force-graph inside (no network, a strict CSP).
    ...common,
    platform: "browser",
    target: "chrome120",
    format: "iife",
    entryPoints: [join(client, "webview", "graph-view.ts")],
    outfile: join(client, "dist", "graph-view.js"),
    minify: production,
  },
];

if (args.has("--tests")) {
  const unit = join(client, "test", "unit");
  builds.push({
    ...common,
    entryPoints: readdirSync(unit)
      .filter((name) => name.endsWith(".test.ts"))
      .map((name) => join(unit, name)),
    outdir: join(client, "out", "test"),
    // The unit tests cover the modules that do not import vscode; fail if one does.
    external: [],
  });
}

if (args.has("--watch")) {
  for (const options of builds) {
    const context = await esbuild.context(options);
    await context.watch();
  }
  console.log("esbuild: watching for changes");
} else {
  await Promise.all(builds.map((options) => esbuild.build(options)));
}
