// Bundles the views into ../src/turnfold/static/ (widget.js + widget.css for the transcript;
// compare.js, the CompareWidget's view, drawn by the same modules; settings.js, the settings
// panel's own view where ipywidgets' controls are not drawn; browser.js + browser.css for the
// session browser), where the Python package finds them (spec W-1: bundled with the package,
// no network at run time). Run by `npm run build`,
// and by hatch-jupyter-builder when the wheel is built. `--watch` rebuilds on every change.
import * as esbuild from "esbuild";
import { fileURLToPath } from "node:url";

const outdir = fileURLToPath(new URL("../src/turnfold/static/", import.meta.url));
const options = {
  entryPoints: [
    "./src/widget.js",
    "./src/widget.css",
    "./src/compare.js",
    "./src/settings.js",
    "./src/browser.js",
    "./src/browser.css",
  ].map((path) =>
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
