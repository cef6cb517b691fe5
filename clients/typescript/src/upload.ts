// Resumable uploads and replacing a blob's bytes (docs/client.md, "Resume behaviour").
//
// An upload is a session (created with one Idempotency-Key), one PUT of the bytes, then a
// completion (an operation, keyed `upload-complete-<session id>` so that finishing the same
// session again, after a crash or a page reload, replays it instead of starting another).
// The server has no ranged PUT (a second PUT replaces the first): after a network error the
// PUT of the SAME session starts again from byte 0, unless the session already holds the
// bytes (only the answer was lost). Keep `session.id` (see `onSession`) to resume later.
import { answered, type WharfClient } from "./client.js";
import { WharfProblem, WharfUnreachable } from "./errors.js";
import { expectKind, newKey, PREFER_WAIT, settle, type OperationOf, type WaitOptions } from "./operations.js";
import type { components } from "./schema.js";

export type UploadSession = components["schemas"]["UploadSession"];
type SessionRequest = components["schemas"]["CreateUploadSessionRequest"];
type Bytes = Blob | Uint8Array;

export interface UploadOptions extends WaitOptions {
  spaceId: string;
  filename: string;
  parentId?: string | null;
  /** Told the session as soon as it exists: store its id to resume after an interruption. */
  onSession?: (session: UploadSession) => void;
}

export interface UploadResult {
  session: UploadSession;
  /** The create_blob_resource operation, done; `result.resource_id` on success. */
  operation: OperationOf<"create_blob_resource">;
}

const OCTETS = "application/octet-stream";

function asBlob(data: Bytes): Blob {
  return data instanceof Blob ? data : new Blob([data as BlobPart]);
}

/** The completion's key: derived from the session, so every attempt replays one completion. */
export function completionKey(sessionId: string): string {
  return `upload-complete-${sessionId}`;
}

/** A problem this client states itself (the server would have answered the same). */
function localProblem(status: number, code: WharfProblem["problem"]["code"], title: string,
                      detail: string): WharfProblem {
  return new WharfProblem({ title, status, code, detail, type: "about:blank" });
}

async function putContent(client: WharfClient, session: UploadSession, blob: Blob): Promise<void> {
  const retries = client.options.retries ?? 5;
  for (let restarts = 0; ; restarts++) {
    try {
      await answered(client.api.PUT("/api/blob-upload-sessions/{session_id}/content", {
        params: { path: { session_id: session.id } },
        headers: { "Content-Type": OCTETS },
        body: blob as unknown as string,
        bodySerializer: (body: unknown) => body,
      }));
      return;
    } catch (err) {
      if (!(err instanceof WharfUnreachable) || restarts >= retries) throw err;
    }
    // Did the bytes arrive and only the answer get lost?
    const { data: state } = await answered(client.api.GET("/api/blob-upload-sessions/{session_id}", {
      params: { path: { session_id: session.id } },
    }));
    if (state.state !== "waiting_for_upload") return;
  }
}

/** From whatever state the session is in: PUT the bytes if it has none, complete, wait. */
export async function finishUpload(
  client: WharfClient, session: UploadSession, data: Bytes, options: WaitOptions = {},
): Promise<UploadResult> {
  const blob = asBlob(data);
  if (blob.size !== session.size) {
    throw localProblem(400, "size_mismatch", "Size mismatch",
      `session ${session.id} expects ${session.size} bytes, the data has ${blob.size}`);
  }
  if (session.state === "waiting_for_upload") {
    await putContent(client, session, blob);
  } else if (!["uploaded", "verifying", "completed"].includes(session.state)) {
    throw localProblem(409, "upload_session_state", "Upload session cannot continue",
      `session ${session.id} is ${session.state}`);
  }
  const { data: op } = await answered(client.api.POST("/api/blob-upload-sessions/{session_id}/complete", {
    params: {
      path: { session_id: session.id },
      header: { "Idempotency-Key": completionKey(session.id), Prefer: PREFER_WAIT },
    },
  }));
  const operation = expectKind(await settle(client, op, options), "create_blob_resource");
  return { session, operation };
}

/** Upload bytes as a new blob resource: session, PUT, completion, wait. */
export async function uploadFile(client: WharfClient, data: Bytes, options: UploadOptions): Promise<UploadResult> {
  const blob = asBlob(data);
  const body: SessionRequest = {
    space_id: options.spaceId, filename: options.filename, size: blob.size,
    parent_id: options.parentId ?? null,
  };
  const { data: session } = await answered(client.api.POST("/api/blob-upload-sessions", {
    params: { header: { "Idempotency-Key": newKey() } },
    body,
  }));
  options.onSession?.(session);
  return finishUpload(client, session, blob, options);
}

/** Finish an upload started earlier (by this page before a reload, another process…) from
 * its session id and the same bytes. */
export async function resumeUpload(
  client: WharfClient, sessionId: string, data: Bytes, options: WaitOptions = {},
): Promise<UploadResult> {
  const { data: session } = await answered(client.api.GET("/api/blob-upload-sessions/{session_id}", {
    params: { path: { session_id: sessionId } },
  }));
  return finishUpload(client, session, data, options);
}

export interface ReplaceOptions extends WaitOptions {
  /** The ETag the caller last saw: the replacement is refused (412 precondition_failed) if
   * the blob changed since. Default: the current one (read first). */
  etag?: string;
}

/** Replace a blob resource's bytes (`If-Match`, one Idempotency-Key) and wait. */
export async function replaceBlob(
  client: WharfClient, resourceId: string, data: Bytes, options: ReplaceOptions = {},
): Promise<OperationOf<"replace_blob_content">> {
  let etag = options.etag;
  if (etag === undefined) {
    const { data: meta } = await answered(client.api.GET("/api/blob-resources/{resource_id}", {
      params: { path: { resource_id: resourceId } },
    }));
    etag = meta.etag;
  }
  const { data: op } = await answered(client.api.PUT("/api/blob-resources/{resource_id}/content", {
    params: {
      path: { resource_id: resourceId },
      header: { "Idempotency-Key": newKey(), Prefer: PREFER_WAIT, "If-Match": etag },
    },
    headers: { "Content-Type": OCTETS },
    body: asBlob(data) as unknown as string,
    bodySerializer: (body: unknown) => body,
  }));
  return expectKind(await settle(client, op, options), "replace_blob_content");
}
