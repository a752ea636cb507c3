// Bundles the views into ../src/turnfold/static/ (widget.js + widget.css for the transcript,
// browser.js + browser.css for the session browser), where the Python package
// finds it (spec W-1: bundled with the package, no network at run time). Run by `npm run build`,
// and by hatch-jupyter-builder when the wheel is built. `--watch` rebuilds on every change.
import * as esbuild from "esbuild";
import { fileURLToPath } from "node:url";

const outdir = fileURLToPath(new URL("../src/turnfold/static/", import.meta.url));
const options = {
  entryPoints: ["./src/widget.js", "./src/widget.css", "./src/browser.js", "./src/browser.css"].map((path) =>
    fileURLToPath(new URL(path, import.meta.url)),
  ),
  outdir,
  entryNames: "[name]",
  bundle: true,
  format: "esm",
  target: ["es2022", "chrome110", "firefox110", "safari16"],
  minify: true,
  sourcemap: false,
  legalComments: "none",
  logLevel: "info",
};

if (process.argv.includes("--watch")) {
  const context = await esbuild.context(options);
  await context.watch();
} else {
  await esbuild.build(options);
}
