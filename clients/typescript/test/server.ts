// A real `wharf serve` for the tests: a free port (--port 0), a throw-away data directory.
// $WHARF_URL: use that server instead. $WHARF_BIN: the `wharf` command (default: the
// checkout's .venv/bin/wharf, else `wharf` on PATH).
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

export interface Server {
  url: string;
  stop(): Promise<void>;
}

function wharfCommand(): string {
  if (process.env.WHARF_BIN) return process.env.WHARF_BIN;
  // dist/test/server.js -> the package -> the checkout
  const here = dirname(fileURLToPath(import.meta.url));
  const venv = resolve(here, "..", "..", "..", "..", ".venv", "bin", "wharf");
  return existsSync(venv) ? venv : "wharf";
}

export async function startServer(): Promise<Server> {
  if (process.env.WHARF_URL) return { url: process.env.WHARF_URL, stop: async () => {} };
  const dataDir = mkdtempSync(join(tmpdir(), "wharf-ts-client-"));
  const child: ChildProcess = spawn(wharfCommand(), ["serve", "--host", "127.0.0.1", "--port", "0", "--quiet"], {
    env: { ...process.env, WHARF_DATA_DIR: dataDir, WHARF_LOG_LEVEL: "WARNING" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => { stderr = (stderr + chunk.toString()).slice(-4000); });
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((done) => child.once("exit", done));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  const url = await new Promise<string>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`wharf serve did not start within 60 s: ${stderr}`)), 60_000);
    child.once("error", (err) => { clearTimeout(timer); fail(err); });
    child.once("exit", (code) => { clearTimeout(timer); fail(new Error(`wharf serve exited (${code}): ${stderr}`)); });
    createInterface({ input: child.stdout! }).on("line", (line) => {
      const found = /serving on (http:\/\/[^\s,]+)/.exec(line);
      if (found?.[1]) { clearTimeout(timer); done(found[1]); }
    });
  }).catch(async (err: unknown) => { await stop(); throw err; });
  return { url, stop };
}
