#!/usr/bin/env node
// Generate src/schema.ts from Wharf's OpenAPI document (openapi-typescript), or check that
// the committed one is current.
//
//   npm run generate                 write src/schema.ts
//   npm run check                    regenerate into memory and compare: exit 1 when stale
//   ... -- --document FILE           use this document (a file, or a server's
//                                    http(s)://.../api/openapi.json) instead of writing one
//
// Without --document the document is written by `python -m wharfd.openapi` (the document
// `wharf serve` serves, from default settings), run in the repository root
// ($WHARF_SOURCE, default ../..) by $WHARF_PYTHON (default: the checkout's .venv/bin/python,
// else python3).
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import openapiTS, { astToString } from "openapi-typescript";

const PACKAGE = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const TARGET = join(PACKAGE, "src", "schema.ts");
const HEADER =
  "// Generated from Wharf's OpenAPI document by `npm run generate` (scripts/generate.mjs,\n" +
  "// openapi-typescript). Do not edit: change the server's contract and regenerate.\n\n";

function usage(message) {
  console.error(`generate: ${message}\nusage: node scripts/generate.mjs [--check] [--document FILE|URL]`);
  process.exit(2);
}

function parseArgs(argv) {
  const options = { check: false, document: null };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--check") options.check = true;
    else if (argv[i] === "--document" && i + 1 < argv.length) options.document = argv[++i];
    else usage(`unexpected argument ${JSON.stringify(argv[i])}`);
  }
  return options;
}

/** The document from `python -m wharfd.openapi`, parsed. */
function documentFromSource() {
  const source = resolve(process.env.WHARF_SOURCE || join(PACKAGE, "..", ".."));
  const venv = join(source, ".venv", "bin", "python");
  const python = process.env.WHARF_PYTHON || (existsSync(venv) ? venv : "python3");
  const dir = mkdtempSync(join(tmpdir(), "wharf-openapi-"));
  try {
    const out = join(dir, "openapi.json");
    const done = spawnSync(python, ["-m", "wharfd.openapi", out], {
      cwd: source, stdio: ["ignore", "inherit", "inherit"],
    });
    if (done.error || done.status !== 0) {
      console.error(`generate: ${python} -m wharfd.openapi failed in ${source}` +
        (done.error ? `: ${done.error.message}` : ` (exit ${done.status})`) +
        "; set WHARF_PYTHON (a Python with Wharf installed) or WHARF_SOURCE (the checkout)");
      process.exit(2);
    }
    return JSON.parse(readFileSync(out, "utf8"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function documentFrom(where) {
  if (/^https?:\/\//.test(where)) return new URL(where);
  return JSON.parse(readFileSync(resolve(where), "utf8"));
}

const options = parseArgs(process.argv.slice(2));
const document = options.document ? documentFrom(options.document) : documentFromSource();
const ast = await openapiTS(document, { enumValues: true, defaultNonNullable: false, silent: true });
const text = HEADER + astToString(ast);

if (!options.check) {
  writeFileSync(TARGET, text);
  console.log(`generate: wrote ${TARGET}`);
} else {
  const committed = existsSync(TARGET) ? readFileSync(TARGET, "utf8") : "";
  if (committed !== text) {
    const a = committed.split("\n"), b = text.split("\n");
    let line = 0;
    while (line < a.length && line < b.length && a[line] === b[line]) line++;
    console.error(`check: src/schema.ts is stale (it differs from the document from line ` +
      `${line + 1}: ${JSON.stringify((a[line] ?? "").trim())} where the document gives ` +
      `${JSON.stringify((b[line] ?? "").trim())}); run \`npm run generate\` in clients/typescript ` +
      "and commit the result");
    process.exit(1);
  }
  console.log("check: src/schema.ts is up to date");
}
