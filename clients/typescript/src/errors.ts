// Errors as typed exceptions: a problem+json answer becomes a WharfProblem whose `code` is
// typed from the server's ProblemCode enum (src/schema.ts), so a `switch (err.code)` is
// checked by the compiler; anything else is a WharfHttpError, and no answer at all (after
// the retries) a WharfUnreachable.
import { problemCodeValues } from "./schema.js";
import type { components } from "./schema.js";

export type Problem = components["schemas"]["Problem"];
export type ProblemCode = components["schemas"]["ProblemCode"];

const CODES: ReadonlySet<string> = new Set(problemCodeValues);

/** Whether `value` is one of the codes this client was generated with. */
export function isProblemCode(value: unknown): value is ProblemCode {
  return typeof value === "string" && CODES.has(value);
}

/** Every error this client throws. */
export class WharfError extends Error {
  override name = "WharfError";
}

/** The server answered an RFC 9457 problem with a stable `code`. A code this client does
 * not know (a newer server) is kept in `rawCode`, and `code` is then `null`. */
export class WharfProblem extends WharfError {
  override name = "WharfProblem";
  readonly status: number;
  readonly code: ProblemCode | null;
  readonly rawCode: string;
  readonly title: string;
  readonly detail: string | undefined;
  readonly problem: Problem;
  readonly requestId: string | null;

  constructor(problem: Problem, response?: Response) {
    const rawCode = String(problem.code);
    super(`${problem.title}${problem.detail ? `: ${problem.detail}` : ""} (${rawCode})`);
    this.status = response?.status ?? problem.status;
    this.code = isProblemCode(rawCode) ? rawCode : null;
    this.rawCode = rawCode;
    this.title = problem.title;
    this.detail = problem.detail;
    this.problem = problem;
    this.requestId = response?.headers.get("X-Request-Id") ?? problem.request_id ?? null;
  }
}

/** An error answer that is not a problem (a proxy's HTML page, say). */
export class WharfHttpError extends WharfError {
  override name = "WharfHttpError";
  constructor(readonly status: number, readonly body: string) {
    super(`HTTP ${status}${body ? `: ${body.slice(0, 200)}` : ""}`);
  }
}

/** No answer from the server after every retry (`cause`: the last network error). */
export class WharfUnreachable extends WharfError {
  override name = "WharfUnreachable";
}

/** `err` is a WharfProblem with this code (a type guard). */
export function isProblem(err: unknown, code?: ProblemCode): err is WharfProblem {
  return err instanceof WharfProblem && (code === undefined || err.code === code);
}

function looksLikeProblem(body: unknown): body is Problem {
  return typeof body === "object" && body !== null &&
    typeof (body as { code?: unknown }).code === "string" &&
    typeof (body as { title?: unknown }).title === "string";
}

/** The exception for an error answer whose body openapi-fetch has read (`error`). */
export function errorFrom(error: unknown, response: Response): WharfError {
  if (looksLikeProblem(error)) return new WharfProblem(error, response);
  const text = typeof error === "string" ? error : JSON.stringify(error ?? "");
  return new WharfHttpError(response.status, text.slice(0, 64 * 1024));
}
