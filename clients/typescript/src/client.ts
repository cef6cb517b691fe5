// The transport: the generated client (openapi-fetch over src/schema.ts) with the token,
// retries that never double a write, and error answers turned into typed exceptions.
import createClient, { type Client } from "openapi-fetch";
import { errorFrom, WharfUnreachable } from "./errors.js";
import type { paths } from "./schema.js";

export type Api = Client<paths>;

export interface WharfOptions {
  /** The server, e.g. "https://wharf.example.com" (no trailing /api). */
  baseUrl: string;
  /** An API token (`wharf_…`) or a login session's token, sent as `Authorization: Bearer`.
   * Without one, requests carry cookies as `credentials` says (a browser's session). */
  token?: string;
  /** Retries after a network error or a 429/500/502/503/504 (default 5). Only requests
   * that are safe to repeat are retried: GET/HEAD, and writes carrying an Idempotency-Key
   * (re-sent with the same key, so the server answers the first attempt's result). */
  retries?: number;
  /** The longest sleep between two attempts, whatever `Retry-After` says (default 30 s). */
  maxRetryDelayMs?: number;
  /** Told about each retry (a status bar, a log). */
  onRetry?: (why: string, delayMs: number) => void;
  /** Another fetch (default: globalThis.fetch). */
  fetch?: (request: Request) => Promise<Response>;
  /** Cookies in a browser: "include" for a session cookie on another origin. */
  credentials?: RequestCredentials;
}

export interface WharfClient {
  /** The generated client: every path and operation of the OpenAPI document, typed. */
  readonly api: Api;
  readonly options: Readonly<WharfOptions>;
}

const RETRY_STATUSES = new Set([429, 500, 502, 503, 504]);
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

function sleep(ms: number, signal?: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });
}

/** `Retry-After` in milliseconds (seconds only; an HTTP date falls back to the backoff). */
function retryAfterMs(response: Response): number | null {
  const raw = response.headers.get("Retry-After");
  if (raw === null || !/^\d+(\.\d+)?$/.test(raw.trim())) return null;
  return Number(raw) * 1000;
}

function backoffMs(attempt: number): number {
  return Math.min(250 * 2 ** attempt, 8000) * (0.5 + Math.random() / 2);
}

/** A fetch that retries what may be repeated: the same Request (its Idempotency-Key and
 * body included) is sent again, so one logical call keeps one key across its retries. */
function retryingFetch(options: WharfOptions): (request: Request) => Promise<Response> {
  const base = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const retries = options.retries ?? 5;
  const maxDelay = options.maxRetryDelayMs ?? 30_000;
  return async (request: Request) => {
    const repeatable = SAFE_METHODS.has(request.method) || request.headers.has("Idempotency-Key");
    for (let attempt = 0; ; attempt++) {
      const last = !repeatable || attempt >= retries;
      let response: Response;
      try {
        response = await base(last ? request : request.clone());
      } catch (err) {
        if (request.signal.aborted) throw err;
        if (last) {
          throw new WharfUnreachable(`${request.method} ${new URL(request.url).pathname}: ` +
            `no answer (${(err as Error).message})`, { cause: err });
        }
        const delay = Math.min(backoffMs(attempt), maxDelay);
        options.onRetry?.(`${(err as Error).message}`, delay);
        await sleep(delay, request.signal);
        continue;
      }
      if (last || !RETRY_STATUSES.has(response.status)) return response;
      const delay = Math.min(retryAfterMs(response) ?? backoffMs(attempt), maxDelay);
      await response.body?.cancel();
      options.onRetry?.(`HTTP ${response.status}`, delay);
      await sleep(delay, request.signal);
    }
  };
}

/** A client for one server. */
export function createWharfClient(options: WharfOptions): WharfClient {
  const headers: Record<string, string> = {};
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  const api = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    headers,
    fetch: retryingFetch(options),
    ...(options.credentials ? { credentials: options.credentials } : {}),
  });
  return { api, options: { ...options } };
}

/** What openapi-fetch answers: `data` when the status is a success, else `error`. */
type Answer<D> =
  | { data: D; error?: never; response: Response }
  | { data?: never; error: unknown; response: Response };

/** The answer's data, or its error as an exception (WharfProblem, WharfHttpError):
 * `const me = await unwrap(wharf.api.GET("/api/me"))`. */
export async function unwrap<D>(call: Promise<Answer<D>>): Promise<Exclude<D, undefined>> {
  return (await answered(call)).data;
}

/** As `unwrap`, with the Response (its headers: ETag, Retry-After, Location…). */
export async function answered<D>(
  call: Promise<Answer<D>>,
): Promise<{ data: Exclude<D, undefined>; response: Response }> {
  const answer = await call;
  if (answer.error !== undefined || !answer.response.ok) {
    throw errorFrom(answer.error, answer.response);
  }
  return { data: answer.data as Exclude<D, undefined>, response: answer.response };
}

export { sleep };
