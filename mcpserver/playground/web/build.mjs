// Bundles the playground's editor (src/app.js: CodeMirror 6, its language
// server client, and the page's code) into ../static/editor.js, and writes
// the licences of every package in the bundle to
// ../static/THIRD_PARTY_LICENSES.txt. Run it after changing src/ or the
// dependencies:
//
//	npm ci && npm run build
//
// The outputs are committed, so building the Go module never needs Node.
import * as esbuild from "esbuild";
import {readFileSync, writeFileSync, existsSync, readdirSync} from "node:fs";
import {dirname, join} from "node:path";

const result = await esbuild.build({
  entryPoints: ["src/app.js"],
  bundle: true,
  minify: true,
  format: "iife",
  target: ["chrome110", "firefox115", "safari16"],
  outfile: "../static/editor.js",
  metafile: true,
  legalComments: "none",
  logLevel: "info",
});

// Every package that contributed code, with its licence text.
const packages = new Map();
for (const input of Object.keys(result.metafile.inputs)) {
  const m = input.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\//);
  if (!m || packages.has(m[1])) continue;
  const dir = join("node_modules", m[1]);
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  const file = readdirSync(dir).find((f) => /^licen[cs]e/i.test(f));
  if (!file) throw new Error(`${m[1]} has no licence file`);
  packages.set(m[1], {version: pkg.version, license: pkg.license, text: readFileSync(join(dir, file), "utf8").trim()});
}
let out = "Third-party code in editor.js, the playground's bundled editor.\n" +
  "Built by playground/web/build.mjs from the packages in playground/web/package-lock.json.\n";
for (const [name, p] of [...packages].sort()) {
  out += `\n${"=".repeat(72)}\n${name} ${p.version} (${p.license})\n${"=".repeat(72)}\n\n${p.text}\n`;
}
writeFileSync("../static/THIRD_PARTY_LICENSES.txt", out);
console.log(`licences of ${packages.size} packages written`);
