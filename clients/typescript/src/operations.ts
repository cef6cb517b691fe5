// Operations: an Idempotency-Key per write, and waiting for an operation to be done (the
// submission asks the server to wait first, `Prefer: wait=N`; then `?wait=N` long-polls).
import { answered, sleep, type WharfClient } from "./client.js";
import type { paths } from "./schema.js";

/** Any operation: a union discriminated by `kind`, so `op.kind === "create_resource"`
 * types `op.result`. */
export type Operation =
  paths["/api/operations/{operation_id}"]["get"]["responses"][200]["content"]["application/json"];
export type OperationKind = Operation["kind"];
export type OperationOf<K extends OperationKind> = Extract<Operation, { kind: K }>;

/** Seconds one long-poll asks the server to hold (it holds at most 60). */
export const LONG_POLL_SECONDS = 20;
/** Sent with a request that starts an operation: the server answers 200 with the finished
 * operation when it is done within that time (RFC 7240), else the usual 202. */
export const PREFER_WAIT = `wait=${LONG_POLL_SECONDS}`;

/** A fresh Idempotency-Key (32 hex digits). Choose it ONCE per logical write and pass the
 * same key to every attempt of it: a replay is answered with the first attempt's result. */
export function newKey(): string {
  return globalThis.crypto.randomUUID().replaceAll("-", "");
}

export interface WaitOptions {
  /** Give up after this long and answer the operation as last seen (`done: false`). */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Long-poll `GET /api/operations/{id}?wait=20` until the operation is done. A server whose
 * long-poll slots are busy answers at once with `Retry-After`: that is slept first. */
export async function waitForOperation(
  client: WharfClient, id: string, options: WaitOptions = {},
): Promise<Operation> {
  const deadline = options.timeoutMs === undefined ? null : Date.now() + options.timeoutMs;
  for (;;) {
    const left = deadline === null ? LONG_POLL_SECONDS : Math.max(0, (deadline - Date.now()) / 1000);
    const started = Date.now();
    const { data: op, response } = await answered(client.api.GET("/api/operations/{operation_id}", {
      params: { path: { operation_id: id }, query: { wait: Math.min(LONG_POLL_SECONDS, Math.ceil(left)) } },
      ...(options.signal ? { signal: options.signal } : {}),
    }));
    if (op.done || (deadline !== null && Date.now() >= deadline)) return op;
    const retryAfter = Number(response.headers.get("Retry-After") ?? "1");
    if (Date.now() - started < 1000 * Math.min(retryAfter, LONG_POLL_SECONDS)) {
      // answered early without being done: the slots were busy; do not spin
      await sleep(1000 * Math.min(Number.isFinite(retryAfter) ? retryAfter : 1, 5), options.signal);
    }
  }
}

/** The operation a submission answered, waited for when it is not done yet. */
export async function settle<O extends Operation>(
  client: WharfClient, op: O, options: WaitOptions = {},
): Promise<O> {
  if (op.done) return op;
  return (await waitForOperation(client, op.id, options)) as O;
}

/** Narrow an operation to its kind (or throw: the server answered another kind). */
export function expectKind<K extends OperationKind>(op: Operation, kind: K): OperationOf<K> {
  if (op.kind !== kind) throw new TypeError(`expected a ${kind} operation, got ${op.kind}`);
  return op as OperationOf<K>;
}

type ResourceBody = paths["/api/resources"]["post"]["requestBody"]["content"]["application/json"];

/** Create a unit resource (doc, sheet, …) and wait for it: one key for the call and its
 * retries. The done operation (`status` "completed" or "failed") is answered. */
export async function createResource(
  client: WharfClient, body: ResourceBody, options: WaitOptions = {},
): Promise<OperationOf<"create_resource">> {
  const { data } = await answered(client.api.POST("/api/resources", {
    params: { header: { "Idempotency-Key": newKey(), Prefer: PREFER_WAIT } },
    body,
  }));
  return expectKind(await settle(client, data, options), "create_resource");
}
