// The submitter flow through the client against a real `wharf serve` (test/server.ts):
// register, create a unit resource, upload a file (and resume one), replace it, long-poll,
// page a listing, read problems; and a write whose answer is lost is retried with its key.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, test } from "node:test";
import {
  answered, createResource, createWharfClient, isProblem, newKey, pages, replaceBlob, resumeUpload, unwrap,
  uploadFile, waitForOperation, WharfProblem, WharfUnreachable, type ProblemCode, type UploadSession, type WharfClient,
} from "../src/index.js";
import { startServer, type Server } from "./server.js";

const PASSWORD = "correct horse battery staple";
let server: Server;
let wharf: WharfClient;
let spaceId: string;

before(async () => {
  server = await startServer();
  const anon = createWharfClient({ baseUrl: server.url });
  const username = `ts${newKey().slice(0, 12)}`;
  const user = await unwrap(anon.api.POST("/api/users", { body: { username, password: PASSWORD } }));
  spaceId = user.personal_space_id;
  // Log in (a session cookie) and mint an API token with it, as a settings page would.
  const login = await anon.api.POST("/api/login-sessions", { body: { username, password: PASSWORD } });
  assert.equal(login.response.status, 201);
  const cookie = login.response.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
  const token = await unwrap(anon.api.POST("/api/api-tokens", {
    body: { name: "ts-client", scopes: ["read", "write"] }, headers: { Cookie: cookie },
  }));
  assert.match(token.token, /^wharf_/);
  wharf = createWharfClient({ baseUrl: server.url, token: token.token, maxRetryDelayMs: 200 });
});

after(async () => { await server?.stop(); });

const text = (s: string) => new TextEncoder().encode(s);

async function content(resourceId: string): Promise<string> {
  const answer = await wharf.api.GET("/api/blob-resources/{resource_id}/content", {
    params: { path: { resource_id: resourceId } }, parseAs: "text",
  });
  assert.equal(answer.response.status, 200);
  return answer.data as string;
}

test("the server serves the document the client was generated from", { skip: !process.env.WHARF_OPENAPI_DOCUMENT }, async () => {
  // $WHARF_OPENAPI_DOCUMENT: what `python -m wharfd.openapi` wrote (the stale check's input)
  const written: unknown = JSON.parse(readFileSync(process.env.WHARF_OPENAPI_DOCUMENT!, "utf8"));
  const served: unknown = await (await fetch(`${server.url}/api/openapi.json`)).json();
  assert.deepEqual(served, written);
});

test("create a unit resource, upload, resume, replace, long-poll, page, problems", async () => {
  // A unit resource: one call, one key, the server waits for it (Prefer: wait).
  const created = await createResource(wharf, { space_id: spaceId, name: "Q3 plans", unit_type: "doc" });
  assert.equal(created.status, "completed");
  assert.ok(created.result);
  const resource = await unwrap(wharf.api.GET("/api/resources/{resource_id}", {
    params: { path: { resource_id: created.result.resource_id } },
  }));
  assert.equal(resource.id, created.result.resource_id);

  // An upload: the session is told first (to resume later), then the blob resource.
  let told: UploadSession | undefined;
  const uploaded = await uploadFile(wharf, text("Hello from TypeScript\n"), {
    spaceId, filename: "notes.txt", onSession: (s) => { told = s; },
  });
  assert.equal(told?.id, uploaded.session.id);
  assert.equal(uploaded.operation.status, "completed");
  const blobId = uploaded.operation.result!.resource_id;
  assert.equal(await content(blobId), "Hello from TypeScript\n");

  // A resumed upload: a session whose bytes never came (the tab was closed), finished from
  // its id; finishing it again replays the same completion (its key derives from the id).
  const bytes = text("resumed later\n");
  const session = await unwrap(wharf.api.POST("/api/blob-upload-sessions", {
    params: { header: { "Idempotency-Key": newKey() } },
    body: { space_id: spaceId, filename: "later.txt", size: bytes.length },
  }));
  assert.equal(session.state, "waiting_for_upload");
  const resumed = await resumeUpload(wharf, session.id, bytes);
  assert.equal(resumed.operation.status, "completed");
  assert.equal(await content(resumed.operation.result!.resource_id), "resumed later\n");
  const again = await resumeUpload(wharf, session.id, bytes);
  assert.equal(again.operation.id, resumed.operation.id);

  // Replace the first upload's bytes (If-Match: its ETag); a stale ETag is a typed problem.
  const before = await unwrap(wharf.api.GET("/api/blob-resources/{resource_id}", {
    params: { path: { resource_id: blobId } },
  }));
  const replaced = await replaceBlob(wharf, blobId, new Blob(["Hello again\n"]));
  assert.equal(replaced.status, "completed");
  assert.equal(await content(blobId), "Hello again\n");
  await assert.rejects(replaceBlob(wharf, blobId, text("lost update"), { etag: before.etag }),
    (err: unknown) => isProblem(err, "precondition_failed") && err.status === 412);
  assert.equal(await content(blobId), "Hello again\n");

  // Long-poll: submitted without Prefer (202, not done), then ?wait= until done; the same
  // key again is answered with the same operation.
  const key = newKey();
  const submit = () => answered(wharf.api.POST("/api/resources", {
    params: { header: { "Idempotency-Key": key } },
    body: { space_id: spaceId, name: "Long-polled", unit_type: "sheet" },
  }));
  const { data: submitted, response: accepted } = await submit();
  assert.equal(accepted.status, 202);
  const done = await waitForOperation(wharf, submitted.id);
  assert.equal(done.done, true);
  assert.equal(done.kind, "create_resource");
  assert.equal(done.status, "completed");
  assert.equal((await submit()).data.id, submitted.id);

  // Page a listing: the space's root, one node a page, every node once.
  const names: string[] = [];
  for await (const node of pages((cursor) => wharf.api.GET("/api/spaces/{space_id}/nodes", {
    params: { path: { space_id: spaceId }, query: { limit: 1, ...(cursor ? { cursor } : {}) } },
  }))) names.push(node.name);
  assert.deepEqual([...names].sort(), ["Long-polled", "Q3 plans", "later.txt", "notes.txt"]);
  let operations = 0;
  for await (const op of pages((cursor) => wharf.api.GET("/api/operations", {
    params: { query: { limit: 2, ...(cursor ? { cursor } : {}) } },
  }))) {
    assert.equal(op.done, true);
    operations++;
  }
  assert.equal(operations, 5); // 2 resources, 2 uploads, 1 replacement (the refused one made none)

  // Problems: typed exceptions with the stable code (a ProblemCode: the switch is checked).
  const missing = await unwrap(wharf.api.GET("/api/operations/{operation_id}", {
    params: { path: { operation_id: "0".repeat(32) } },
  })).then(() => null, (err: unknown) => err);
  assert.ok(missing instanceof WharfProblem);
  assert.equal(missing.status, 404);
  const code: ProblemCode | null = missing.code;
  assert.equal(code, "not_found");
  assert.ok(missing.requestId);
  await assert.rejects(unwrap(wharf.api.POST("/api/resources", {
    params: { header: { "Idempotency-Key": "short" } },
    body: { space_id: spaceId, name: "X", unit_type: "doc" },
  })), (err: unknown) => isProblem(err, "invalid_idempotency_key") && err.status === 400);
});

test("a write whose answer is lost is retried with the same key: one resource", async () => {
  let lost = 0;
  const keys: string[] = [];
  const flaky = createWharfClient({
    baseUrl: server.url, token: wharf.options.token!, maxRetryDelayMs: 50,
    fetch: async (request) => {
      const response = await fetch(request);
      if (request.method === "POST") keys.push(request.headers.get("Idempotency-Key") ?? "");
      if (request.method === "POST" && lost++ === 0) throw new TypeError("socket hang up");
      return response;
    },
  });
  const op = await createResource(flaky, { space_id: spaceId, name: "Lost answer", unit_type: "board" });
  assert.equal(op.status, "completed");
  assert.equal(keys.length, 2);
  assert.equal(keys[0], keys[1]);
  const named: string[] = [];
  for await (const node of pages((cursor) => wharf.api.GET("/api/spaces/{space_id}/nodes", {
    params: { path: { space_id: spaceId }, query: { limit: 50, ...(cursor ? { cursor } : {}) } },
  }))) if (node.name === "Lost answer") named.push(node.id);
  assert.equal(named.length, 1);

  // A POST without a key (a state change) is never re-sent blindly: the error surfaces.
  lost = 0;
  await assert.rejects(flaky.api.POST("/api/spaces", { body: { name: "Not twice", type: "team" } }),
    (err: unknown) => err instanceof WharfUnreachable);
  const spaces = await unwrap(wharf.api.GET("/api/spaces"));
  assert.equal(spaces.items.filter((space) => space.name === "Not twice").length, 1);
});
