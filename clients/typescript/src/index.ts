// Wharf's typed client: the generated part (src/schema.ts, openapi-fetch) and what
// generation cannot know (keys, waiting, resumable uploads, typed problems).
export { answered, createWharfClient, unwrap } from "./client.js";
export type { Api, WharfClient, WharfOptions } from "./client.js";
export {
  errorFrom, isProblem, isProblemCode, WharfError, WharfHttpError, WharfProblem, WharfUnreachable,
} from "./errors.js";
export type { Problem, ProblemCode } from "./errors.js";
export {
  createResource, expectKind, LONG_POLL_SECONDS, newKey, PREFER_WAIT, settle, waitForOperation,
} from "./operations.js";
export type { Operation, OperationKind, OperationOf, WaitOptions } from "./operations.js";
export { pages } from "./paging.js";
export type { Page } from "./paging.js";
export { completionKey, finishUpload, replaceBlob, resumeUpload, uploadFile } from "./upload.js";
export type { ReplaceOptions, UploadOptions, UploadResult, UploadSession } from "./upload.js";
export type { components, operations, paths } from "./schema.js";
