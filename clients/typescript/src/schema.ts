// Generated from Wharf's OpenAPI document by `npm run generate` (scripts/generate.mjs,
// openapi-typescript). Do not edit: change the server's contract and regenerate.

export interface paths {
    "/api/api-tokens": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * My active API tokens
         * @description My active API tokens.
         */
        get: operations["listApiTokens"];
        put?: never;
        /**
         * Create an API token
         * @description The secret is in this answer only. A token cannot mint tokens (403 `token_cannot_mint`). Quotas above the server's (operations pending, submissions per minute) need an operator (400 `validation_failed`).
         */
        post: operations["createApiToken"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/api-tokens/{token_id}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                token_id: components["parameters"]["token_id"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Revoke an API token
         * @description Revoke an API token.
         */
        delete: operations["revokeApiToken"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/assets/{asset_id}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                asset_id: components["parameters"]["asset_id"];
            };
            cookie?: never;
        };
        /**
         * An asset's metadata (viewer of its unit)
         * @description An asset's metadata (viewer of its unit).
         */
        get: operations["getAsset"];
        put?: never;
        post?: never;
        /**
         * Delete an asset (editor of its unit)
         * @description Its object is queued for deletion at once; snapshots that still name it read 404.
         */
        delete: operations["deleteAsset"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/assets/{asset_id}/content": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                asset_id: components["parameters"]["asset_id"];
            };
            cookie?: never;
        };
        /**
         * An asset's bytes: strong ETag, single Range, never cached
         * @description `Content-Type` is the declared type; HTML, SVG, XML and script (declared or detected) come as attachments. `Cache-Control: private, no-store`, `nosniff`, a sandbox CSP.
         */
        get: operations["getAssetContent"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        /**
         * getAssetContent without the body
         * @description getAssetContent without the body.
         */
        head: operations["getAssetContentHead"];
        patch?: never;
        trace?: never;
    };
    "/api/auth/{provider}/callback": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A sign-in provider: `oidc` (OpenID Connect) or `github`; one not configured is 404. */
                provider: components["parameters"]["provider"];
            };
            cookie?: never;
        };
        /**
         * The provider's redirect back
         * @description Finishes the request `state` names (once): exchanges the code with the PKCE verifier, checks the ID token (signature, issuer allowed, audience, expiry, nonce), then signs the user in (a first sign-in registers a user, without a password, named after the provider's username, made unique) and sets `wharf_session`, or links the identity to the user who started it. Redirects (302) to the start's `next`. 400 `external_login_failed` with `details.reason`: `state_invalid` (unknown, used or another provider's `state`), `state_expired` (10 minutes), `browser_mismatch`, `provider_error` (`details.error`), `code_missing`, `token_exchange_failed`, `id_token_invalid`, `issuer_not_allowed`, `nonce_mismatch`, `userinfo_invalid`, `account_deleted`; 403 `account_disabled`; 409 `external_identity_taken` (linked to another user) or `provider_already_linked`; 503 when the provider does not answer.
         */
        get: operations["finishExternalLogin"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/auth/{provider}/start": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A sign-in provider: `oidc` (OpenID Connect) or `github`; one not configured is 404. */
                provider: components["parameters"]["provider"];
            };
            cookie?: never;
        };
        /**
         * Sign in with a provider
         * @description Redirects (302) the browser to the provider (`oidc`, `github`: those configured) with PKCE (S256), `state` and, for OpenID Connect, `nonce`, and sets a short-lived cookie that binds the request to this browser. With a login session, the identity is linked to that user instead of signing in (403 `forbidden` with an API token: linking needs a login session). 404 for a provider not configured; 429 `rate_limited`; 503 when the provider's discovery document does not come.
         */
        get: operations["startExternalLogin"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/blob-resources/{resource_id}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                resource_id: components["parameters"]["resource_id"];
            };
            cookie?: never;
        };
        /**
         * Blob metadata
         * @description Blob metadata.
         */
        get: operations["getBlobResource"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/blob-resources/{resource_id}/content": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                resource_id: components["parameters"]["resource_id"];
            };
            cookie?: never;
        };
        /**
         * The bytes: strong ETag, single Range
         * @description 409 `quarantined` while the blob is quarantined.
         */
        get: operations["getBlobContent"];
        /**
         * Replace the bytes (operation replace_blob_content)
         * @description Send `If-Match` with the current ETag (428 without it, 412 when it changed) and exactly Content-Length bytes. A replay with the same key and headers is answered once its bytes hash the same (else 409 `idempotency_key_reused`).
         */
        put: operations["replaceBlobContent"];
        post?: never;
        delete?: never;
        options?: never;
        /**
         * getBlobContent without the body
         * @description getBlobContent without the body.
         */
        head: operations["getBlobContentHead"];
        patch?: never;
        trace?: never;
    };
    "/api/blob-resources/{resource_id}/download": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                resource_id: components["parameters"]["resource_id"];
            };
            cookie?: never;
        };
        /**
         * The bytes as an attachment (RFC 6266 filename*)
         * @description 409 `quarantined` while the blob is quarantined.
         */
        get: operations["downloadBlob"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        /**
         * downloadBlob without the body
         * @description downloadBlob without the body.
         */
        head: operations["downloadBlobHead"];
        patch?: never;
        trace?: never;
    };
    "/api/blob-resources/{resource_id}/quarantine": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                resource_id: components["parameters"]["resource_id"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Withhold a blob's bytes
         * @description `state` becomes `quarantined`: `/content` and `/download` then answer 409 `quarantined` (imports from it too) until it is released; the metadata stays readable and nothing is deleted. The space's owner or an admin (the owner of a personal space), or an operator (`WHARF_OPERATORS`, any blob). 404 for a blob you cannot discover, 403 for one you can but may not quarantine. Idempotent; each change is audited.
         */
        post: operations["quarantineBlob"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/blob-resources/{resource_id}/release": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                resource_id: components["parameters"]["resource_id"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Serve a quarantined blob's bytes again
         * @description `state` becomes `ready`. The space's owner or an admin (the owner of a personal space), or an operator (`WHARF_OPERATORS`, any blob). 404 for a blob you cannot discover, 403 for one you can but may not quarantine. Idempotent; each change is audited.
         */
        post: operations["releaseBlob"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/blob-upload-sessions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Start an upload: reserves node, resource and object ids
         * @description Then PUT the bytes to `/content` and POST `/complete`. 201 when created, 200 for a replay (same Idempotency-Key and body); 409 `idempotency_key_reused` for a different body.
         */
        post: operations["createUploadSession"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/blob-upload-sessions/{session_id}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                session_id: components["parameters"]["session_id"];
            };
            cookie?: never;
        };
        /**
         * An upload session
         * @description An upload session.
         */
        get: operations["getUploadSession"];
        put?: never;
        post?: never;
        /**
         * Abort; the object is queued for deletion
         * @description Idempotent. 409 `upload_session_state` while verifying or importing, or once completed or imported.
         */
        delete: operations["abortUploadSession"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/blob-upload-sessions/{session_id}/complete": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                session_id: components["parameters"]["session_id"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Verify and publish (operation create_blob_resource)
         * @description 409 `upload_not_received` before the content PUT; 409 `upload_session_state` / `upload_session_expired`.
         */
        post: operations["completeUpload"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/blob-upload-sessions/{session_id}/content": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                session_id: components["parameters"]["session_id"];
            };
            cookie?: never;
        };
        get?: never;
        /**
         * Stream the bytes (Content-Length required)
         * @description Exactly the declared size (400 `size_mismatch`, 411 `length_required`). A second PUT replaces the first. 409 `upload_session_state` / `upload_session_expired`.
         */
        put: operations["uploadContent"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/comment-threads/{thread_id}/solved": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                thread_id: components["parameters"]["thread_id"];
            };
            cookie?: never;
        };
        get?: never;
        /**
         * Solve or reopen a thread
         * @description Whoever can open the unit. Compare-and-set on the thread's `generation`: of concurrent writers that read the same one, exactly one succeeds, the others get 409 `comment_conflict` (`details.generation` the current one). 404 when the caller cannot open the unit (a unit in a worktree included). Needs a signed-in user; a read-only team space takes no comments (403 `space_read_only`).
         */
        put: operations["setCommentThreadSolved"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/comments/{comment_id}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                comment_id: components["parameters"]["comment_id"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Delete a comment
         * @description Its author, or the document's owner or an admin of its space (403 otherwise). Deleting a thread's first comment deletes the thread and its replies. 404 when the caller cannot open the unit (a unit in a worktree included). Needs a signed-in user; a read-only team space takes no comments (403 `space_read_only`).
         */
        delete: operations["deleteUnitComment"];
        options?: never;
        head?: never;
        /**
         * Edit your comment's body
         * @description Its author only (403 otherwise). `generation` must be the comment's (409 `comment_conflict`, `details.generation` the current one). 404 when the caller cannot open the unit (a unit in a worktree included). Needs a signed-in user; a read-only team space takes no comments (403 `space_read_only`).
         */
        patch: operations["editUnitComment"];
        trace?: never;
    };
    "/api/device-authorizations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Start a device login (RFC 8628)
         * @description For a client without a browser (`wharf-client login`): show `user_code` and `verification_uri` to the person, then poll `token_endpoint` every `interval` seconds. The request lives 600 s and is used once. 429 `rate_limited` past 10 requests in 60 s per client address. Parameters as JSON or form-encoded (`application/x-www-form-urlencoded`, as RFC 8628 clients send them).
         */
        post: operations["startDeviceLogin"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/device-authorizations/token": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Poll a device login (RFC 8628)
         * @description `grant_type` `urn:ietf:params:oauth:grant-type:device_code` and the `device_code`. Until the person decides: 400 `authorization_pending`, or `slow_down` when polled sooner than the interval (which grows by 5 s, `details.interval`); then 400 `access_denied` or the new login session, once (another poll: `invalid_grant`, as for an unknown code); 400 `expired_token` after 10 minutes. Errors also carry RFC 6749's `error` member (= `code`; `invalid_request` for a malformed request). Parameters as JSON or form-encoded (`application/x-www-form-urlencoded`, as RFC 8628 clients send them).
         */
        post: operations["pollDeviceLogin"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/device-authorizations/{user_code}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                user_code: components["parameters"]["user_code"];
            };
            cookie?: never;
        };
        /**
         * What a device login asks
         * @description The request a user code names: when it was made, by which client, from where, and its status. A login session only: an API token gets 403 `token_cannot_mint`. Throttled per user (20 lookups, approvals and denials in 60 s; 429 `rate_limited`). 404 for an unknown code.
         */
        get: operations["getDeviceLogin"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/device-authorizations/{user_code}/approve": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                user_code: components["parameters"]["user_code"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Approve a device login
         * @description The device's next poll receives a new login session of the caller's. 409 `device_authorization_expired` after 10 minutes, `device_authorization_decided` when already approved or denied. A login session only: an API token gets 403 `token_cannot_mint`. Throttled per user (20 lookups, approvals and denials in 60 s; 429 `rate_limited`). 404 for an unknown code.
         */
        post: operations["approveDeviceLogin"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/device-authorizations/{user_code}/deny": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                user_code: components["parameters"]["user_code"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Deny a device login
         * @description The device's next poll gets `access_denied`. 409 as for approving. A login session only: an API token gets 403 `token_cannot_mint`. Throttled per user (20 lookups, approvals and denials in 60 s; 429 `rate_limited`). 404 for an unknown code.
         */
        post: operations["denyDeviceLogin"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/exports/{export_id}/content": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                export_id: components["parameters"]["export_id"];
            };
            cookie?: never;
        };
        /**
         * An export's file: strong ETag, single Range, as an attachment
         * @description The requester only, while they may view the unit (a space's takeout: while they own or administer the space), until `expires_at`; 404 otherwise.
         */
        get: operations["getExportContent"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        /**
         * getExportContent without the body
         * @description getExportContent without the body.
         */
        head: operations["getExportContentHead"];
        patch?: never;
        trace?: never;
    };
    "/api/feed-tickets": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A ticket into the live feed
         * @description Good once, for 30 seconds, as `GET /api/feed?ticket=...` (a WebSocket, or Server-Sent Events): the feed admits the login session or API token that asked, while it is still valid (docs/feed.md).
         */
        post: operations["createFeedTicket"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/imports": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Import a file as a unit resource (operation import_file)
         * @description Starts an `import_file` operation: a worker reads the file of a blob resource, or of the caller's `uploaded` upload session, which the import consumes (409 `upload_session_state` for a session in another state): XLSX, XLS, XLSB, ODS, CSV, TSV, DOCX, PPTX; DOC and PPT when LibreOffice is configured. It creates a `sheet`, `doc` or `slide` unit resource in the target folder. Its result names the new node, resource and unit; a failure's `error.code` is `unsupported_format`, `file_too_complex`, `corrupt_file` or `conversion_timeout`. 404 for a blob, session or target the caller cannot see, 403 without the right to create there.
         */
        post: operations["createImport"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/login-sessions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * My login sessions
         * @description The caller's unexpired login sessions, newest first; `current` marks the one this request uses.
         */
        get: operations["listLoginSessions"];
        put?: never;
        /**
         * Log in
         * @description Sets the `wharf_session` cookie (HttpOnly, SameSite=Lax). 401 `invalid_credentials`; 403 `account_disabled` (the right password of a disabled account: no session); 429 `rate_limited` (with `Retry-After` and `details.retry_after`) when a client or a name makes too many attempts.
         */
        post: operations["login"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/login-sessions/current": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Log out
         * @description Ends the current login session and clears its cookie (401 `no_session` when authenticated by a token).
         */
        delete: operations["logout"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/login-sessions/{session_id}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                session_id: components["parameters"]["session_id"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * End one of my login sessions
         * @description Its cookie is refused at once by this API process and by every other within `WHARF_AUTH_CACHE_SECONDS`. Ending the current session is a logout (its cookie is cleared). 404 for another user's session or an unknown one.
         */
        delete: operations["endLoginSession"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/me": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The current principal
         * @description The user, their personal space, how they authenticated and their scopes (a session has every scope).
         */
        get: operations["me"];
        put?: never;
        post?: never;
        /**
         * Delete my account
         * @description Records a `delete_account` operation: at once the account is `deleting`, every login session and API token is revoked and every request as it answers 401; a worker then deletes what it owns (docs/accounts.md). Re-authentication: `password`, or a login session younger than `WHARF_ACCOUNT_REAUTH_SECONDS` (403 `reauthentication_required`; 429 `rate_limited` (with `Retry-After` and `details.retry_after`) when a client or a name makes too many attempts.)
         */
        delete: operations["deleteAccount"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/me/audit": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * My audit trail
         * @description The caller's own actions (logins, refused writes included) and the failed logins against their username, with address and user agent. Newest first, keyset-paged. `action` and `actor_id` filter the rows walked, at most 1,000 a request: a page may be short (even empty) with a `next_cursor`; only the last page has none.
         */
        get: operations["myAudit"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/me/exports": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Take out every space you own as a zip (operation export_takeout)
         * @description Each space you own is a top folder of the archive. The result names the zip's `content_url`, its size and SHA-256, and when it expires (WHARF_EXPORT_TTL). The archive holds one file per node at its path (units as `<name>.<type>.json` and as an Office file, blobs and assets as their bytes) and `manifest.json` (paths, sizes, SHA-256); trashed nodes are left out; units are read at their revision when the job starts. More files than WHARF_TAKEOUT_MAX_FILES fails the operation with `file_too_complex`.
         */
        post: operations["exportMine"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/me/external-identities": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * My linked identities
         * @description My linked identities.
         */
        get: operations["listExternalIdentities"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/me/external-identities/{provider}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A sign-in provider: `oidc` (OpenID Connect) or `github`; one not configured is 404. */
                provider: components["parameters"]["provider"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Unlink a provider
         * @description Only while another way to log in remains (a password or another linked identity): else 409 `last_login_method`. 404 when none of that provider is linked.
         */
        delete: operations["unlinkExternalIdentity"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/me/password": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /**
         * Change my password
         * @description Every other login session of the user ends (this API process refuses their cookies at once, every other within `WHARF_AUTH_CACHE_SECONDS`); the session making the request stays. API tokens stay unless `revoke_tokens`. 401 `invalid_credentials` for a wrong `current_password`; 429 `rate_limited` (with `Retry-After` and `details.retry_after`) when a client or a name makes too many attempts.
         */
        put: operations["changePassword"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/me/recent": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * My recently opened resources
         * @description My recently opened resources.
         */
        get: operations["myRecent"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/me/recovery-codes": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * New recovery codes
         * @description Ten one-time codes for `POST /api/password-resets`, shown in this answer only (the server keeps their digests); any earlier set stops working. A login session only (403 `token_cannot_mint` for an API token), re-authenticated: `current_password`, or a session younger than `WHARF_ACCOUNT_REAUTH_SECONDS` (403 `reauthentication_required`; 429 `rate_limited` (with `Retry-After` and `details.retry_after`) when a client or a name makes too many attempts.)
         */
        post: operations["createRecoveryCodes"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/me/stars": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * My starred resources
         * @description Newest star first, keyset-paged. Resources I can no longer discover (access revoked, trashed) are left out, as in `GET /api/me/recent`; their stars come back with the access.
         */
        get: operations["myStars"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/me/stars/{resource_id}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                resource_id: components["parameters"]["resource_id"];
            };
            cookie?: never;
        };
        get?: never;
        /**
         * Star a resource
         * @description Idempotent: starring again changes nothing. 404 for a resource I cannot discover; 409 `star_limit` past 1000 stars.
         */
        put: operations["starResource"];
        post?: never;
        /**
         * Remove my star from a resource
         * @description Idempotent: 204 whether or not the resource was starred, or can still be seen.
         */
        delete: operations["unstarResource"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/nodes": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Create an organisational node
         * @description 409 on a duplicate name among siblings; 400 `parent_in_other_space`.
         */
        post: operations["createNode"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/nodes/{node_id}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                node_id: components["parameters"]["node_id"];
            };
            cookie?: never;
        };
        /**
         * A node
         * @description A node.
         */
        get: operations["getNode"];
        put?: never;
        post?: never;
        /**
         * Permanently delete a trashed batch root
         * @description Deletes the batch rooted here and every batch nested below it (operation `purge_trash`); space owner or team admin only. 409 `not_trashed`; 409 `worktree_reference` while a worktree you may discard, or one being merged, holds a unit below (`details.worktree_ids`: those you may see). Other users' worktrees give way: their drafts of the deleted units are discarded (`GET /api/worktrees/{id}/events`).
         */
        delete: operations["purgeNode"];
        options?: never;
        head?: never;
        /**
         * Rename and/or move a node
         * @description `parent_id: null` moves the node to the root. 409 on a duplicate name, `move_cycle`, `cross_space_move`.
         */
        patch: operations["updateNode"];
        trace?: never;
    };
    "/api/nodes/{node_id}/children": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                node_id: components["parameters"]["node_id"];
            };
            cookie?: never;
        };
        /**
         * Children of a node
         * @description Children of a node.
         */
        get: operations["listChildren"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/nodes/{node_id}/grants": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                node_id: components["parameters"]["node_id"];
            };
            cookie?: never;
        };
        /**
         * Direct grants on a node
         * @description Direct grants on a node.
         */
        get: operations["listGrants"];
        /**
         * Grant a user, named by username, editor or viewer
         * @description `PUT /api/nodes/{node_id}/grants/{user_id}` naming the user by `username` (exact, any case): 201 when created, 200 when changed. 404 `user_not_found`; 409 `grants_not_allowed`, `owner_not_grantee`; 429 `rate_limited` (counted with `GET /api/users?username=`).
         */
        put: operations["putGrantByUsername"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/nodes/{node_id}/grants/{user_id}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                node_id: components["parameters"]["node_id"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                user_id: components["parameters"]["user_id"];
            };
            cookie?: never;
        };
        get?: never;
        /**
         * Grant a user editor or viewer
         * @description Personal spaces only (409 `grants_not_allowed`); 409 `owner_not_grantee`. 201 when created, 200 when changed.
         */
        put: operations["putGrant"];
        post?: never;
        /**
         * Revoke a grant
         * @description Revoke a grant.
         */
        delete: operations["deleteGrant"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/nodes/{node_id}/link-sharing": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                node_id: components["parameters"]["node_id"];
            };
            cookie?: never;
        };
        /**
         * Link sharing state
         * @description Link sharing state.
         */
        get: operations["getLinkSharing"];
        /**
         * Turn link sharing on or off
         * @description Turn link sharing on or off.
         */
        put: operations["putLinkSharing"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/nodes/{node_id}/trash": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                node_id: components["parameters"]["node_id"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Move a node and its descendants to a new trash batch
         * @description Move a node and its descendants to a new trash batch.
         */
        post: operations["trashNode"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/openapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * This document
         * @description The OpenAPI 3.1 document of this server, generated from the typed contract of every mounted route.
         */
        get: operations["openapi"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/operations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * My operations, newest first
         * @description My operations, newest first.
         */
        get: operations["listOperations"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/operations/{operation_id}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                operation_id: components["parameters"]["operation_id"];
            };
            cookie?: never;
        };
        /**
         * An operation
         * @description The caller's operation (an operator's, see `WHARF_OPERATORS`: any user's). `?wait=N` long-polls: the answer comes as soon as the operation is done, or after N seconds (values up to 3600 are accepted; the server waits at most 60). `Retry-After` is sent while it is not done.
         */
        get: operations["getOperation"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/operations/{operation_id}/attempts": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                operation_id: components["parameters"]["operation_id"];
            };
            cookie?: never;
        };
        /**
         * Execution attempts of an operation
         * @description Execution attempts of an operation.
         */
        get: operations["listOperationAttempts"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/operations/{operation_id}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                operation_id: components["parameters"]["operation_id"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Cancel a pending operation
         * @description The caller's (an operator's: any user's) operation fails with `error.code` `cancelled`. 409 `operation_state_conflict` unless it is pending.
         */
        post: operations["cancelOperation"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/operations/{operation_id}/retry": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                operation_id: components["parameters"]["operation_id"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Retry a failed operation
         * @description The caller's (an operator's: any user's) operation becomes pending again, with as many attempts as a new one. 409 `operation_state_conflict` unless it failed; 409 `retry_not_possible` for a kind whose input was discarded when it failed (submit again instead); 429 `quota_exceeded` when the caller is at their pending operations quota (as a submission).
         */
        post: operations["retryOperation"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/operations:batch": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Start many operations at once (a batch)
         * @description Up to 100 submissions, each with its own `idempotency_key` and the body of its kind's single route (kinds: create_resource), recorded in one transaction: the operations it records commit together or not at all. Always 200 (once the batch itself is valid), with one answer per item, in order: `status` 202 and `operation` (recorded, or a replay not done), 200 (a replay of a done operation), or the problem the single route would answer (`validation_failed`, `not_found`, `idempotency_key_reused`, `quota_exceeded`, ...). A key repeated inside the batch: the later items are replays of the first (same input) or 409. Quotas count each operation. A batch that is not valid itself (more items than allowed, an unknown kind, a missing key) is 400 `validation_failed` and records nothing.
         */
        post: operations["submitOperations"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/ops/audit": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The whole audit trail (operators)
         * @description Every row and field, optionally of one space. Operators only (WHARF_OPERATORS): 404 to anyone else. Newest first, keyset-paged. `action` and `actor_id` filter the rows walked, at most 1,000 a request: a page may be short (even empty) with a `next_cursor`; only the last page has none.
         */
        get: operations["operatorAudit"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/ops/dashboard": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The operator dashboard's numbers
         * @description Operations by status and kind (open ones up to a cap, finished ones over the last 24 h), throughput and failures per minute over the last hour, queue lag, the slowest, most retried and failed recent operations with their attempts, deletion jobs failing for more than a day, sweeps, and processes seen in the last 5 minutes. Operators only (WHARF_OPERATORS): 404 for anyone else.
         */
        get: operations["getDashboard"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/password-resets": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Reset a forgotten password
         * @description Spends one recovery code on a new password; every login session of the user ends (API tokens stay unless `revoke_tokens`). 401 `invalid_recovery_code` for a wrong username, a wrong code or a spent one alike; 403 `account_disabled` (the right code of a disabled account: not spent); 429 `rate_limited` (with `Retry-After` and `details.retry_after`) when a client or a name makes too many attempts.
         */
        post: operations["resetPassword"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/permission-objects/{object_id}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                object_id: components["parameters"]["object_id"];
            };
            cookie?: never;
        };
        /**
         * A protected range
         * @description Whoever can open the unit. 404 when the caller cannot open the unit (a unit in a worktree included).
         */
        get: operations["getPermissionObject"];
        put?: never;
        post?: never;
        /**
         * Unprotect a range
         * @description The ACL and its collaborators go first (the range is unprotected at once), then the binding is removed from the document. The object's creator while they may edit the document, or the document's owner or an admin of its space (403 otherwise). 404 when the caller cannot open the unit (a unit in a worktree included).
         */
        delete: operations["deletePermissionObject"];
        options?: never;
        head?: never;
        /**
         * Change a protected range
         * @description Any of its fields; a new `target` is bound in the document after the commit. The object's creator while they may edit the document, or the document's owner or an admin of its space (403 otherwise). 404 when the caller cannot open the unit (a unit in a worktree included).
         */
        patch: operations["updatePermissionObject"];
        trace?: never;
    };
    "/api/permission-objects/{object_id}/collaborators/{user_id}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                object_id: components["parameters"]["object_id"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                user_id: components["parameters"]["user_id"];
            };
            cookie?: never;
        };
        get?: never;
        /**
         * Give a user a role on a protected range
         * @description `editor` edits under the target when the edit scope is `specified` (and the user may edit the document); either role views it. 404 `user_not_found` for an unknown user; 409 `conflict` past 500 collaborators. The object's creator while they may edit the document, or the document's owner or an admin of its space (403 otherwise). 404 when the caller cannot open the unit (a unit in a worktree included).
         */
        put: operations["putPermissionObjectCollaborator"];
        post?: never;
        /**
         * Take a user's role on a protected range away
         * @description Idempotent. The object's creator while they may edit the document, or the document's owner or an admin of its space (403 otherwise). 404 when the caller cannot open the unit (a unit in a worktree included).
         */
        delete: operations["deletePermissionObjectCollaborator"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/resources": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Create a unit resource (operation create_resource)
         * @description Starts a `create_resource` operation; its result names the new node, resource and unit. 409 `idempotency_key_reused` when the key was used for a different request.
         */
        post: operations["createResource"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/resources/{resource_id}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                resource_id: components["parameters"]["resource_id"];
            };
            cookie?: never;
        };
        /**
         * A resource
         * @description Visitors may read resources of public or link-shared nodes.
         */
        get: operations["getResource"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/resources/{resource_id}/open": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                resource_id: components["parameters"]["resource_id"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Open a resource
         * @description Records it in my recent files.
         */
        post: operations["openResource"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/search": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Find nodes by name or units by content
         * @description `kind=name` (the default): case-insensitive; exact matches first, then prefixes, then substrings. `kind=content`: the units whose text (doc text, sheet cells, slide text, indexed a few seconds after a change) holds every word of `q`, best first, with a snippet. Keyset-paged. Only nodes I can discover now: in spaces I own or am a member of, below a grant to me, and in a public space only when `space_id` names it; nothing in the trash. A page may be short (even empty) with a `next_cursor` when many matches were hidden. See docs/search.md.
         */
        get: operations["search"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/spaces": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Spaces I own or belong to
         * @description Spaces I own or belong to.
         */
        get: operations["listSpaces"];
        put?: never;
        /**
         * Create a team space
         * @description Create a team space.
         */
        post: operations["createSpace"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/spaces/{space_id}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
            };
            cookie?: never;
        };
        /**
         * A space
         * @description Visitors may read a space with `public_read`.
         */
        get: operations["getSpace"];
        put?: never;
        post?: never;
        /**
         * Delete a team space
         * @description The owner only (403 `owner_required`), a team space only (409 `not_a_team_space`: a personal space goes with its account), `confirm_name` equal to the space's name (400 `confirm_name_mismatch`). Records a `delete_space` operation; at once the space is read-only (writes 403 `space_read_only`; transfer, archive and unarchive 409 `space_deleting`), then a worker deletes everything in it (docs/accounts.md). 409 `worktree_reference` while worktrees are open on it (`details.worktree_ids`: merge or discard them first); 409 `space_deleting` when a deletion is already pending.
         */
        delete: operations["deleteSpace"];
        options?: never;
        head?: never;
        /**
         * Rename a space, set its description or public_read
         * @description Owner or admin. 400 `validation_failed` naming the field (a name over 128 characters, a description over 4,096); 403 `space_read_only` while the space is read-only.
         */
        patch: operations["updateSpace"];
        trace?: never;
    };
    "/api/spaces/{space_id}/archive": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Archive a team space
         * @description Owner or admin. The space becomes read-only for everyone (writes answer 403 `space_read_only`; reads go on; nothing is deleted). Idempotent. 409 `not_a_team_space`.
         */
        post: operations["archiveSpace"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/spaces/{space_id}/audit": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
            };
            cookie?: never;
        };
        /**
         * A space's audit trail
         * @description Who did what in the space: its owner and admins only (403 to other members, 404 to whoever cannot see the space). Addresses and user agents are not shown. Newest first, keyset-paged. `action` and `actor_id` filter the rows walked, at most 1,000 a request: a page may be short (even empty) with a `next_cursor`; only the last page has none.
         */
        get: operations["spaceAudit"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/spaces/{space_id}/exports": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Take out a space as a zip (operation export_takeout)
         * @description The owner, or an admin of a team space. The result names the zip's `content_url`, its size and SHA-256, and when it expires (WHARF_EXPORT_TTL). The archive holds one file per node at its path (units as `<name>.<type>.json` and as an Office file, blobs and assets as their bytes) and `manifest.json` (paths, sizes, SHA-256); trashed nodes are left out; units are read at their revision when the job starts. More files than WHARF_TAKEOUT_MAX_FILES fails the operation with `file_too_complex`.
         */
        post: operations["exportSpace"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/spaces/{space_id}/issues": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
            };
            cookie?: never;
        };
        /**
         * Issues of a team space, newest first
         * @description Filters: `state` (`open` by default, `closed`, `all`), `label` (a name), `assignee` and `author` (user ids), `q` (text in the title, case-insensitive). 404 when the space cannot be discovered; 409 `not_a_team_space` for a personal space.
         */
        get: operations["listIssues"];
        put?: never;
        /**
         * Open an issue (numbered #N per space)
         * @description 404 when the space cannot be discovered; 409 `not_a_team_space` for a personal space. Writes need membership (403 `not_a_member`); a read-only team space takes none (403 `space_read_only`).
         */
        post: operations["createIssue"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/spaces/{space_id}/issues/labels": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
            };
            cookie?: never;
        };
        /**
         * The issue labels of a space
         * @description At most 100, by name. 404 when the space cannot be discovered; 409 `not_a_team_space` for a personal space.
         */
        get: operations["listIssueLabels"];
        put?: never;
        /**
         * Define a label
         * @description The owner or an admin. Names are unique per space, case-insensitive (409 `label_name_taken`); at most 100 per space (409 `label_limit`). 404 when the space cannot be discovered; 409 `not_a_team_space` for a personal space. Writes need membership (403 `not_a_member`); a read-only team space takes none (403 `space_read_only`).
         */
        post: operations["createIssueLabel"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/spaces/{space_id}/issues/labels/{label_id}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                label_id: components["parameters"]["label_id"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Delete a label
         * @description The owner or an admin. Issues lose the label; their history keeps its name and colour. 404 when the space cannot be discovered; 409 `not_a_team_space` for a personal space. Writes need membership (403 `not_a_member`); a read-only team space takes none (403 `space_read_only`).
         */
        delete: operations["deleteIssueLabel"];
        options?: never;
        head?: never;
        /**
         * Rename or recolour a label
         * @description The owner or an admin; 409 `label_name_taken`. 404 when the space cannot be discovered; 409 `not_a_team_space` for a personal space. Writes need membership (403 `not_a_member`); a read-only team space takes none (403 `space_read_only`).
         */
        patch: operations["updateIssueLabel"];
        trace?: never;
    };
    "/api/spaces/{space_id}/issues/{number}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
                /** @description An issue's `#N` in its space (digits); an unknown number is 404. */
                number: components["parameters"]["number"];
            };
            cookie?: never;
        };
        /**
         * An issue, by its number
         * @description Node references the caller cannot read (trashed) say `available: false` and carry no name. 404 when the space cannot be discovered; 409 `not_a_team_space` for a personal space.
         */
        get: operations["getIssue"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /**
         * Edit an issue's title and/or body
         * @description The author, the owner, admins and editors. A new title writes a `renamed` event. 404 when the space cannot be discovered; 409 `not_a_team_space` for a personal space. Writes need membership (403 `not_a_member`); a read-only team space takes none (403 `space_read_only`).
         */
        patch: operations["updateIssue"];
        trace?: never;
    };
    "/api/spaces/{space_id}/issues/{number}/assignees": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
                /** @description An issue's `#N` in its space (digits); an unknown number is 404. */
                number: components["parameters"]["number"];
            };
            cookie?: never;
        };
        get?: never;
        /**
         * Assign a user, named by username, to an issue
         * @description `PUT …/assignees/{user_id}` naming the user by `username` (exact, any case; 404 `user_not_found`; 429 `rate_limited`, counted with `GET /api/users?username=`). 404 when the space cannot be discovered; 409 `not_a_team_space` for a personal space. Writes need membership (403 `not_a_member`); a read-only team space takes none (403 `space_read_only`).
         */
        put: operations["addIssueAssigneeByUsername"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/spaces/{space_id}/issues/{number}/assignees/{user_id}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
                /** @description An issue's `#N` in its space (digits); an unknown number is 404. */
                number: components["parameters"]["number"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                user_id: components["parameters"]["user_id"];
            };
            cookie?: never;
        };
        get?: never;
        /**
         * Assign a user to an issue
         * @description The owner, admins and editors. The user must be the owner or a member (409 `assignee_not_member`); at most 10 (409 `assignee_limit`). Assignees who leave the space stay. 404 when the space cannot be discovered; 409 `not_a_team_space` for a personal space. Writes need membership (403 `not_a_member`); a read-only team space takes none (403 `space_read_only`).
         */
        put: operations["addIssueAssignee"];
        post?: never;
        /**
         * Unassign a user
         * @description The owner, admins and editors. 404 when the space cannot be discovered; 409 `not_a_team_space` for a personal space. Writes need membership (403 `not_a_member`); a read-only team space takes none (403 `space_read_only`).
         */
        delete: operations["removeIssueAssignee"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/spaces/{space_id}/issues/{number}/close": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
                /** @description An issue's `#N` in its space (digits); an unknown number is 404. */
                number: components["parameters"]["number"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Close an issue with a reason
         * @description The author, the owner, admins and editors; 409 `issue_state` when it is closed already. 404 when the space cannot be discovered; 409 `not_a_team_space` for a personal space. Writes need membership (403 `not_a_member`); a read-only team space takes none (403 `space_read_only`).
         */
        post: operations["closeIssue"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/spaces/{space_id}/issues/{number}/comments": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
                /** @description An issue's `#N` in its space (digits); an unknown number is 404. */
                number: components["parameters"]["number"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Comment on an issue
         * @description 404 when the space cannot be discovered; 409 `not_a_team_space` for a personal space. Writes need membership (403 `not_a_member`); a read-only team space takes none (403 `space_read_only`).
         */
        post: operations["createIssueComment"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/spaces/{space_id}/issues/{number}/comments/{comment_id}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
                /** @description An issue's `#N` in its space (digits); an unknown number is 404. */
                number: components["parameters"]["number"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                comment_id: components["parameters"]["comment_id"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Delete a comment
         * @description Its author, the owner or an admin. 404 when the space cannot be discovered; 409 `not_a_team_space` for a personal space. Writes need membership (403 `not_a_member`); a read-only team space takes none (403 `space_read_only`).
         */
        delete: operations["deleteIssueComment"];
        options?: never;
        head?: never;
        /**
         * Edit your comment
         * @description Its author only. 404 when the space cannot be discovered; 409 `not_a_team_space` for a personal space. Writes need membership (403 `not_a_member`); a read-only team space takes none (403 `space_read_only`).
         */
        patch: operations["updateIssueComment"];
        trace?: never;
    };
    "/api/spaces/{space_id}/issues/{number}/labels/{label_id}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
                /** @description An issue's `#N` in its space (digits); an unknown number is 404. */
                number: components["parameters"]["number"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                label_id: components["parameters"]["label_id"];
            };
            cookie?: never;
        };
        get?: never;
        /**
         * Put a label on an issue
         * @description The owner, admins and editors. Already there: unchanged. At most 20 per issue (409 `issue_label_limit`). 404 when the space cannot be discovered; 409 `not_a_team_space` for a personal space. Writes need membership (403 `not_a_member`); a read-only team space takes none (403 `space_read_only`).
         */
        put: operations["addIssueLabel"];
        post?: never;
        /**
         * Take a label off an issue
         * @description The owner, admins and editors. 404 when the space cannot be discovered; 409 `not_a_team_space` for a personal space. Writes need membership (403 `not_a_member`); a read-only team space takes none (403 `space_read_only`).
         */
        delete: operations["removeIssueLabel"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/spaces/{space_id}/issues/{number}/node-refs/{node_id}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
                /** @description An issue's `#N` in its space (digits); an unknown number is 404. */
                number: components["parameters"]["number"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                node_id: components["parameters"]["node_id"];
            };
            cookie?: never;
        };
        get?: never;
        /**
         * Reference a node from an issue
         * @description The owner, admins and editors. The node must be in the same space (409 `node_in_other_space`) and not in the trash (409 `node_trashed`); at most 20 (409 `node_ref_limit`). A purged node's references go, with a `node_unreferenced` event. 404 when the space cannot be discovered; 409 `not_a_team_space` for a personal space. Writes need membership (403 `not_a_member`); a read-only team space takes none (403 `space_read_only`).
         */
        put: operations["addIssueNodeRef"];
        post?: never;
        /**
         * Drop a node reference
         * @description The owner, admins and editors. 404 when the space cannot be discovered; 409 `not_a_team_space` for a personal space. Writes need membership (403 `not_a_member`); a read-only team space takes none (403 `space_read_only`).
         */
        delete: operations["removeIssueNodeRef"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/spaces/{space_id}/issues/{number}/reopen": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
                /** @description An issue's `#N` in its space (digits); an unknown number is 404. */
                number: components["parameters"]["number"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Reopen a closed issue
         * @description The author, the owner, admins and editors; 409 `issue_state` when it is open. 404 when the space cannot be discovered; 409 `not_a_team_space` for a personal space. Writes need membership (403 `not_a_member`); a read-only team space takes none (403 `space_read_only`).
         */
        post: operations["reopenIssue"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/spaces/{space_id}/issues/{number}/timeline": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
                /** @description An issue's `#N` in its space (digits); an unknown number is 404. */
                number: components["parameters"]["number"];
            };
            cookie?: never;
        };
        /**
         * Comments and events of an issue
         * @description Oldest first by time; at the same instant comments come before events. Events carry the names as they were. 404 when the space cannot be discovered; 409 `not_a_team_space` for a personal space.
         */
        get: operations["issueTimeline"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/spaces/{space_id}/members": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
            };
            cookie?: never;
        };
        /**
         * Team members
         * @description Keyset-paged by user id (`?limit=&cursor=`); the owner is not a member.
         */
        get: operations["listMembers"];
        /**
         * Add a member by username, or change their role
         * @description `PUT /api/spaces/{space_id}/members/{user_id}` naming the user by `username` (exact, any case): 201 when the user joins, 200 when their role changes. 404 `user_not_found`; 409 `not_a_team_space`, `owner_not_member`; 403 `owner_required`; 429 `rate_limited` (counted with `GET /api/users?username=`).
         */
        put: operations["putMemberByUsername"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/spaces/{space_id}/members/{user_id}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                user_id: components["parameters"]["user_id"];
            };
            cookie?: never;
        };
        get?: never;
        /**
         * Add a member or change their role
         * @description 201 when the user joins, 200 when their role changes. 409 `not_a_team_space`, `owner_not_member`; 403 `owner_required`.
         */
        put: operations["putMember"];
        post?: never;
        /**
         * Remove a member, or leave (your own id)
         * @description Remove a member, or leave (your own id).
         */
        delete: operations["deleteMember"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/spaces/{space_id}/nodes": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
            };
            cookie?: never;
        };
        /**
         * Root nodes of a space
         * @description Root nodes of a space.
         */
        get: operations["listRootNodes"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/spaces/{space_id}/transfer": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Hand a team space to a member
         * @description The owner only (403 `owner_required`). The new owner, named by `user_id` or `username`, must be a member (409 `new_owner_not_member`; an unknown user 404, `user_not_found` by username); their member row goes and the old owner becomes an admin. 409 `not_a_team_space` for a personal space, `owner_not_member` naming the owner; 429 `rate_limited` by username (counted with `GET /api/users?username=`).
         */
        post: operations["transferSpace"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/spaces/{space_id}/trash": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
            };
            cookie?: never;
        };
        /**
         * Trash batches of a space
         * @description Trash batches of a space.
         */
        get: operations["listTrash"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/spaces/{space_id}/unarchive": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Unarchive a team space
         * @description Owner or admin; writable again. Idempotent. 409 `not_a_team_space`; 403 `space_read_only` for a space read-only because its owner's account was deleted (an operator gives it an owner).
         */
        post: operations["unarchiveSpace"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/trash-batches/{batch_id}/restore": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                batch_id: components["parameters"]["batch_id"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Restore exactly this batch
         * @description 409 `ancestor_trashed` while a batch enclosing it is in the trash (`details.enclosing_batch_id`), 409 `purge_in_progress` while its permanent delete is queued or running, 409 `batch_restored`.
         */
        post: operations["restoreTrash"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/units/{unit_id}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
            };
            cookie?: never;
        };
        /**
         * A unit's snapshot and revision
         * @description The ETag is the revision: with `If-None-Match` naming it the answer is 304 and the document is not read. A client that holds an older revision may fetch just the changesets after it (`GET /api/units/{unit_id}/changesets?after=N`).
         */
        get: operations["getUnit"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/units/{unit_id}/assets": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
            };
            cookie?: never;
        };
        /**
         * A unit's assets, oldest first (viewer)
         * @description A unit's assets, oldest first (viewer).
         */
        get: operations["listAssets"];
        put?: never;
        /**
         * Upload an asset into a unit (editor)
         * @description The body is the file's bytes; `Content-Type` is its declared type (served back as is; risky types only as attachments), `Content-Length` is required (411), at most WHARF_MAX_ASSET_SIZE (413 `asset_too_large`, nothing read). The bytes are stored before the answer; a worker then re-checks edit access, verifies them and publishes the asset (operation `publish_asset`: poll it, its result names the asset). A replay of the Idempotency-Key answers the same operation if it carries the same bytes: with `Content-SHA256` the digest is compared and the body is not read, without it the body is hashed (not stored); 409 `idempotency_key_reused` for other bytes, or if `Content-Length`, type or name differ. 400 `incomplete_body` when the body is short, `checksum_mismatch` when it does not hash to `Content-SHA256`.
         */
        post: operations["uploadAsset"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/units/{unit_id}/changesets": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
            };
            cookie?: never;
        };
        /**
         * The changesets after a revision, oldest first
         * @description What a client holding revision `after` applies, in order, to reach the current revision (each as it was posted or merged): keyset pages of at most `limit`; `next_after` is the `after` of the next page (null on the last). Readers of the unit. 410 `history_pruned` when history retention deleted some of them: read the unit again.
         */
        get: operations["listChangesets"];
        put?: never;
        /**
         * Apply an RFC 6902 JSON Patch against a base revision
         * @description The answer carries the new document (`snapshot`), or, with `Prefer: return=minimal`, only the new revision (its cost then follows the changeset, not the document). Problems (besides the common ones): 400 `invalid_changeset` (malformed operation or JSON Pointer, a pointer that does not resolve, a failed `test`; `details.op_index`), 400 `unit_too_deep` (an inserted value would nest below WHARF_UNIT_MAX_DEPTH levels), 400 `malformed_json` (also for NaN, Infinity and numbers that overflow a double), 409 `revision_conflict`, 413 `changeset_too_large` (more operations than WHARF_UNIT_MAX_CHANGESET_OPS), 413 `unit_too_large` (the changeset copies, or the document would grow to, more than WHARF_UNIT_MAX_SNAPSHOT_BYTES). Nothing is stored on any of them.
         */
        post: operations["applyChangeset"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/units/{unit_id}/comments": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
            };
            cookie?: never;
        };
        /**
         * A unit's comment threads
         * @description Oldest thread first, each with its comments (oldest first). `solved=true|false` filters. Anonymous readers of a publicly readable unit may list. 404 when the caller cannot open the unit (a unit in a worktree included).
         */
        get: operations["listUnitComments"];
        put?: never;
        /**
         * Start a thread or reply
         * @description `anchor` starts a thread (the comment's id is the thread's); `thread_id` replies in one of this unit's threads. Whoever can open the unit. Limits: 409 `comment_thread_limit` (WHARF_COMMENT_MAX_THREADS_PER_UNIT), 409 `comment_reply_limit` (WHARF_COMMENT_MAX_REPLIES_PER_THREAD). 404 when the caller cannot open the unit (a unit in a worktree included). Needs a signed-in user; a read-only team space takes no comments (403 `space_read_only`).
         */
        post: operations["createUnitComment"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/units/{unit_id}/exports": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Export a trunk unit to an Office file (operation export_unit)
         * @description View right on the unit. The unit is read at its revision at submission; the result names the file's `content_url`, its size and SHA-256, and when it expires (WHARF_EXPORT_TTL). 400 `validation_failed` when the format does not fit the unit type; 409 `idempotency_key_reused` for a different request.
         */
        post: operations["exportUnit"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/units/{unit_id}/permission-objects": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
            };
            cookie?: never;
        };
        /**
         * A unit's protected ranges
         * @description Oldest first, each with its bound target and the caller's rights on it (`view`, `edit`, `copy`, `print`, `export`, `manage`: advisory for reading, snapshots are not filtered). Whoever can open the unit. 404 when the caller cannot open the unit (a unit in a worktree included).
         */
        get: operations["listPermissionObjects"];
        put?: never;
        /**
         * Protect a range
         * @description The unit's editors may protect a target; the caller becomes its creator. The ACL is committed first, then the target is bound in the document (one new revision): `bound` false when that could not be written (PATCH the target again). 409 `conflict` past 200 objects per unit. 404 when the caller cannot open the unit (a unit in a worktree included).
         */
        post: operations["createPermissionObject"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/units/{unit_id}/restore": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Restore the document as it was after a revision
         * @description Writes one new revision (origin `restore`) whose changeset turns the current document into revision `revision`'s; history is never rewritten, and nothing is written when the two are equal. Editors of the unit. 409 `revision_conflict` when `base_revision` is not the current revision.
         */
        post: operations["restoreUnitRevision"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/units/{unit_id}/revisions": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
            };
            cookie?: never;
        };
        /**
         * A unit's history, newest first
         * @description Keyset pages of the unit's revisions (who, when, origin, size); `?group=session` groups an author's consecutive edits. Readers of the unit.
         */
        get: operations["listUnitRevisions"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/units/{unit_id}/revisions/{revision}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                revision: components["parameters"]["revision"];
            };
            cookie?: never;
        };
        /**
         * One revision and its changeset
         * @description One revision and its changeset.
         */
        get: operations["getUnitRevision"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/units/{unit_id}/revisions/{revision}/snapshot": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                revision: components["parameters"]["revision"];
            };
            cookie?: never;
        };
        /**
         * The document as it was after a revision
         * @description Read from the newest checkpoint at or below the revision and the revisions after it: its cost is bounded by the checkpoints, not by how old the revision is.
         */
        get: operations["getUnitRevisionSnapshot"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/users": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Find a user by username
         * @description Exact, case-insensitive: the user's id and username only, or no items. Every lookup counts: 429 `rate_limited` (with `Retry-After`) past 30 in 60 s per user.
         */
        get: operations["findUsers"];
        put?: never;
        /**
         * Register a user
         * @description Creates the user and their personal space. 409 `username_taken`; 429 `rate_limited` (with `Retry-After` and `details.retry_after`) when a client or a name makes too many attempts.
         */
        post: operations["registerUser"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/webhooks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * My webhook endpoints
         * @description My webhook endpoints.
         */
        get: operations["listWebhooks"];
        put?: never;
        /**
         * Register a webhook endpoint
         * @description The signing secret is in this answer only. Refused URLs: 400 `webhook_url_refused`; too many endpoints: 400 `webhook_limit`.
         */
        post: operations["createWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/webhooks/{webhook_id}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                webhook_id: components["parameters"]["webhook_id"];
            };
            cookie?: never;
        };
        /**
         * A webhook endpoint (disabled: why)
         * @description A webhook endpoint (disabled: why).
         */
        get: operations["getWebhook"];
        put?: never;
        post?: never;
        /**
         * Delete a webhook endpoint
         * @description Delete a webhook endpoint.
         */
        delete: operations["deleteWebhook"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/webhooks/{webhook_id}/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                webhook_id: components["parameters"]["webhook_id"];
            };
            cookie?: never;
        };
        /**
         * Deliveries of a webhook endpoint, newest first
         * @description Deliveries of a webhook endpoint, newest first.
         */
        get: operations["listWebhookDeliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/webhooks/{webhook_id}/enable": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                webhook_id: components["parameters"]["webhook_id"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Enable a disabled webhook endpoint
         * @description Resets its failure state (`consecutive_failures`, the disabled reason) and resumes its pending deliveries within about a minute; the secret and history are kept. Enabling an enabled endpoint changes nothing but the failure count.
         */
        post: operations["enableWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/worktrees": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Worktrees I can see, most recently updated first
         * @description One query per page: the capabilities reported here leave out each unit's own permission (a unit the caller may no longer edit); `GET /api/worktrees/{id}` accounts for it.
         */
        get: operations["listWorktrees"];
        put?: never;
        /**
         * Create a worktree (operation create_worktree)
         * @description A `user` worktree (yours alone, always private) or a `team` worktree in a team space where you are owner, admin or editor (viewer: 403; a read-only team space: 403 `space_read_only`; not a member: 404; a personal space: 409 `not_a_team_space`). At most WHARF_WORKTREE_MAX_OPEN_PER_USER open worktrees per user and WHARF_WORKTREE_MAX_OPEN_PER_TEAM_SPACE per team space (409 `worktree_limit`). The operation's result names the worktree.
         */
        post: operations["createWorktree"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/worktrees/{worktree_id}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                worktree_id: components["parameters"]["worktree_id"];
            };
            cookie?: never;
        };
        /**
         * A worktree and its units
         * @description A worktree and its units.
         */
        get: operations["getWorktree"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /**
         * Rename a worktree, change its summary or visibility
         * @description Name and summary: the creator (team worktrees: also the space's owner and admins). Visibility: team worktrees only (400 for a user worktree), by the same people. 409 `worktree_busy` while a merge or discard runs (`details.operation_id`), `worktree_state` in a state that does not allow it (`details.state`, `details.allowed`).
         */
        patch: operations["updateWorktree"];
        trace?: never;
    };
    "/api/worktrees/{worktree_id}/assets/{asset_id}/content": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                worktree_id: components["parameters"]["worktree_id"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                asset_id: components["parameters"]["asset_id"];
            };
            cookie?: never;
        };
        /**
         * An asset's bytes through a worktree's gateway (review)
         * @description An asset's bytes through a worktree's gateway (review).
         */
        get: operations["getWorktreeAssetContent"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        /**
         * getWorktreeAssetContent without the body
         * @description getWorktreeAssetContent without the body.
         */
        head: operations["getWorktreeAssetContentHead"];
        patch?: never;
        trace?: never;
    };
    "/api/worktrees/{worktree_id}/discard": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                worktree_id: components["parameters"]["worktree_id"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Discard a worktree (operation discard_worktree)
         * @description A draft or ready worktree becomes `discarding` at once (other changes answer 409 `worktree_busy`), then `discarded`: its assets are deleted, its uploads cancelled. The creator (team: also the space's owner and admins). 409 `worktree_busy` while a merge or discard runs (`details.operation_id`), `worktree_state` in a state that does not allow it (`details.state`, `details.allowed`).
         */
        post: operations["discardWorktree"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/worktrees/{worktree_id}/events": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                worktree_id: components["parameters"]["worktree_id"];
            };
            cookie?: never;
        };
        /**
         * What others' permanent deletes of trash did to a worktree
         * @description Oldest first. A document deleted permanently by its owner or a space admin, or by the trash retention, leaves the worktrees of others that held it (their draft is discarded): `unit_purged`; a unit new in the worktree whose target folder was deleted: `target_purged`. Those who may review the worktree's units (403 otherwise).
         */
        get: operations["listWorktreeEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/worktrees/{worktree_id}/merge": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                worktree_id: components["parameters"]["worktree_id"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Merge a ready worktree into trunk (operation merge_worktree)
         * @description The worktree becomes `merging` at once, then each unit is merged in order: `unchanged`, `fast_forward`, `merged`, `created` (a unit new in the worktree gets its node), or `conflict` (trunk untouched, see the unit's conflicts). A conflict is not a failure: the operation completes; the worktree is `merged` when every unit merged, else back to `draft`. Only a `ready` worktree merges; the creator (team: owner, admin or editor) with edit rights on every unit. 409 `unit_unavailable` when a unit's node or target folder is trashed (`details.unit_ids`). 409 `worktree_busy` while a merge or discard runs (`details.operation_id`), `worktree_state` in a state that does not allow it (`details.state`, `details.allowed`).
         */
        post: operations["mergeWorktree"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/worktrees/{worktree_id}/ready": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                worktree_id: components["parameters"]["worktree_id"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Mark a draft worktree ready for review and merge
         * @description `draft → ready`: its drafts are frozen; only a ready worktree merges. The creator (team: owner, admin or editor). 409 `worktree_busy` while a merge or discard runs (`details.operation_id`), `worktree_state` in a state that does not allow it (`details.state`, `details.allowed`).
         */
        post: operations["markWorktreeReady"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/worktrees/{worktree_id}/reopen": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                worktree_id: components["parameters"]["worktree_id"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Reopen a ready worktree for edits
         * @description `ready → draft`. The creator (team: also the space's owner and admins). 409 `worktree_busy` while a merge or discard runs (`details.operation_id`), `worktree_state` in a state that does not allow it (`details.state`, `details.allowed`).
         */
        post: operations["reopenWorktree"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/worktrees/{worktree_id}/units": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                worktree_id: components["parameters"]["worktree_id"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Add a unit to a worktree (operation add_worktree_unit or create_worktree_unit)
         * @description `source: trunk`: a unit you may edit (viewer: 403; a blob: 400 `not_a_unit`; in a team worktree only units of its space, 400 `outside_team_space`; already there: 409 `unit_already_added`). `source: worktree`: a new unit whose node is created in `target` by the merge (editor there). At most WHARF_WORKTREE_MAX_UNITS units (409 `worktree_unit_limit`); the draft (two copies of the document) within the creator's WHARF_WORKTREE_DRAFT_QUOTA_BYTES (409 `draft_quota_exceeded`). 409 `worktree_busy` while a merge or discard runs, `worktree_state` unless the worktree is a draft (`details.state`, `details.allowed`).
         */
        post: operations["addWorktreeUnit"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/worktrees/{worktree_id}/units/{unit_id}": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                worktree_id: components["parameters"]["worktree_id"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
            };
            cookie?: never;
        };
        /**
         * A worktree unit and its draft
         * @description 410 `draft_purged` once retention deleted the drafts of a processed worktree.
         */
        get: operations["getWorktreeUnit"];
        put?: never;
        post?: never;
        /**
         * Take a unit out of a worktree
         * @description Its worktree assets are deleted, its draft too. 409 `worktree_busy` while a merge or discard runs, `worktree_state` unless the worktree is a draft (`details.state`, `details.allowed`).
         */
        delete: operations["removeWorktreeUnit"];
        options?: never;
        head?: never;
        /**
         * Rename a unit new in the worktree, or change its target
         * @description Units new in the worktree only (400 `not_local_unit`); the new target needs the right to create there. 409 `worktree_busy` while a merge or discard runs, `worktree_state` unless the worktree is a draft (`details.state`, `details.allowed`).
         */
        patch: operations["updateWorktreeUnit"];
        trace?: never;
    };
    "/api/worktrees/{worktree_id}/units/{unit_id}/activate": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                worktree_id: components["parameters"]["worktree_id"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Create the node of a merged unit whose activation was blocked (operation activate_worktree_resource)
         * @description A unit new in the worktree that the merge put in trunk while its target folder was gone (`activation: blocked`): its node is created at `target` (stored now; the right to create there), else at the stored target (409 `unit_unavailable` while it is still gone). 409 `not_blocked` for any other unit. Its worktree assets are published; the worktree is `merged` when it was the last unmerged unit. Draft or ready worktrees, with the merge right.
         */
        post: operations["activateWorktreeUnit"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/worktrees/{worktree_id}/units/{unit_id}/assets": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                worktree_id: components["parameters"]["worktree_id"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
            };
            cookie?: never;
        };
        /**
         * A worktree unit's assets, oldest first (review)
         * @description A worktree unit's assets, oldest first (review).
         */
        get: operations["listWorktreeAssets"];
        put?: never;
        /**
         * Upload an asset into a worktree's unit (edit draft)
         * @description As `uploadAsset`, in the worktree's scope: the worktree's edit-draft right and the unit's own edit permission; 409 `worktree_state` unless the worktree is a draft. The asset is served by the worktree's gateway until a merge of its unit publishes it to trunk.
         */
        post: operations["uploadWorktreeAsset"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/worktrees/{worktree_id}/units/{unit_id}/changesets": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                worktree_id: components["parameters"]["worktree_id"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Apply an RFC 6902 JSON Patch to a unit's draft
         * @description Same contract as trunk changesets (`Prefer: return=minimal` too), against the draft's revision. Problems (besides the common ones): 400 `invalid_changeset` (malformed operation or JSON Pointer, a pointer that does not resolve, a failed `test`; `details.op_index`), 400 `unit_too_deep` (an inserted value would nest below WHARF_UNIT_MAX_DEPTH levels), 400 `malformed_json` (also for NaN, Infinity and numbers that overflow a double), 409 `revision_conflict`, 413 `changeset_too_large` (more operations than WHARF_UNIT_MAX_CHANGESET_OPS), 413 `unit_too_large` (the changeset copies, or the document would grow to, more than WHARF_UNIT_MAX_SNAPSHOT_BYTES). Nothing is stored on any of them. Growing the draft past the creator's WHARF_WORKTREE_DRAFT_QUOTA_BYTES: 409 `draft_quota_exceeded`. 409 `worktree_busy` while a merge or discard runs, `worktree_state` unless the worktree is a draft (`details.state`, `details.allowed`).
         */
        post: operations["applyWorktreeChangeset"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/worktrees/{worktree_id}/units/{unit_id}/conflicts": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                worktree_id: components["parameters"]["worktree_id"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
            };
            cookie?: never;
        };
        /**
         * The conflicts of a worktree unit's last merge
         * @description Every conflict with its values (a merge operation's result has only a clipped sample). 410 `draft_purged` once retention deleted them with the drafts of a processed worktree.
         */
        get: operations["listUnitMergeConflicts"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/worktrees/{worktree_id}/units/{unit_id}/merge-preview": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                worktree_id: components["parameters"]["worktree_id"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
            };
            cookie?: never;
        };
        /**
         * What merging a worktree unit would do now (nothing is written)
         * @description Any state but merged/discarded (409 `worktree_state`).
         */
        get: operations["previewUnitMerge"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/worktrees/{worktree_id}/units/{unit_id}/rebase": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                worktree_id: components["parameters"]["worktree_id"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
            };
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Move a unit's draft onto the trunk head, resolving conflicts
         * @description Every conflict needs a resolution (`take`: `trunk` or `draft`): 409 `merge_conflict` otherwise (`details.conflicts`: the first 100), nothing written; 400 `unknown_conflict_path` for a path that is not a conflict; 409 `revision_conflict` when the draft is not at `draft_revision`. Draft worktrees only. 409 `worktree_busy` while a merge or discard runs (`details.operation_id`), `worktree_state` in a state that does not allow it (`details.state`, `details.allowed`).
         */
        post: operations["rebaseWorktreeUnit"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/device": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The device login page (HTML)
         * @description Where a person enters a device's user code and approves or denies it (a login form for anonymous visitors). `?user_code=` fills the code in.
         */
        get: operations["deviceLoginPage"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/device.js": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The device login page's script
         * @description The device login page's script.
         */
        get: operations["deviceLoginScript"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/favicon.ico": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * No icon (204)
         * @description No icon (204).
         */
        get: operations["favicon"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Liveness
         * @description The process answers; nothing else is checked.
         */
        get: operations["healthz"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/healthz/details": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Every dependency with its status
         * @description Database, broker, blob store and unit store with their status (cached for WHARF_METRICS_CACHE_SECONDS). `ok`/`degraded` answer 200, `unavailable` (the database is down) 503 with the same report. Needs `Authorization: Bearer <WHARF_METRICS_TOKEN>` when that is set.
         */
        get: operations["healthDetails"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Prometheus metrics
         * @description Process counters and database-derived gauges in the text exposition format. Needs `Authorization: Bearer <WHARF_METRICS_TOKEN>` when that is set.
         */
        get: operations["metrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/ops": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The operator dashboard (HTML)
         * @description Server-rendered HTML of every panel, refreshed by its own script from `GET /api/ops/dashboard`. Operators only (WHARF_OPERATORS): anyone else gets a 404 page (with a login form for anonymous visitors).
         */
        get: operations["dashboardPage"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/ops/dashboard.css": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The dashboard page's stylesheet
         * @description The dashboard page's stylesheet.
         */
        get: operations["dashboardStyle"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/ops/dashboard.js": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The dashboard page's script
         * @description The dashboard page's script.
         */
        get: operations["dashboardScript"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/readyz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Readiness: the database answers
         * @description 200 when the database answers; otherwise 503 with the same report (`status: unavailable`, each check's state) and `Retry-After`.
         */
        get: operations["readyz"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /** @description Where the node is to be created instead (the right to create there). */
        ActivateTargetRequest: {
            /** @description An id (unknown ids are 404). */
            space_id: string;
            /**
             * @description The folder (null: the space's root).
             * @default null
             */
            parent_id?: string | null;
        };
        /**
         * @description Re-drive the blocked activation of a unit new in the worktree (its node), at its
         *     stored target or at ``target``.
         */
        ActivateUnitRequest: {
            /** @default null */
            target?: components["schemas"]["ActivateTargetRequest"] | null;
        };
        /**
         * @description ``activate_worktree_resource``: the node of a merged unit, blocked at the merge,
         *     created at its (new) target.
         */
        ActivateWorktreeResourceOperation: {
            /** @enum {unknown} */
            kind: "activate_worktree_resource";
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            status: components["schemas"]["OperationStatus"];
            /** @description The status is completed or failed. */
            done: boolean;
            attempts: number;
            max_attempts: number;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            updated_at: string;
            completed_at: string | null;
            /** @description When the next attempt is due (after a retryable failure). */
            next_attempt_at: string | null;
            /** @description Why it failed (status failed), or the last retryable failure. */
            error: components["schemas"]["OperationError"] | null;
            /** @description `POST /api/operations/{id}/retry` can reopen it: it failed, and its kind's failure did not dispose of its input (otherwise the retry answers 409 `retry_not_possible` or `operation_state_conflict`; submit the request again instead). */
            can_retry: boolean;
            /** @description Once completed: the unit and its new node and resource. */
            result: components["schemas"]["ActivateWorktreeResourceResult"] | null;
        };
        ActivateWorktreeResourceResult: {
            worktree_id: string;
            unit_id: string;
            node_id: string;
            resource_id: string;
        };
        Actor: {
            /** @description `user`, `anonymous` or `system` (a worker: `id` is the operation's) */
            type: string;
            id: string | null;
            username: string | null;
        };
        /** @description ``add_worktree_unit``: a trunk unit added to a worktree (its draft forked). */
        AddWorktreeUnitOperation: {
            /** @enum {unknown} */
            kind: "add_worktree_unit";
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            status: components["schemas"]["OperationStatus"];
            /** @description The status is completed or failed. */
            done: boolean;
            attempts: number;
            max_attempts: number;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            updated_at: string;
            completed_at: string | null;
            /** @description When the next attempt is due (after a retryable failure). */
            next_attempt_at: string | null;
            /** @description Why it failed (status failed), or the last retryable failure. */
            error: components["schemas"]["OperationError"] | null;
            /** @description `POST /api/operations/{id}/retry` can reopen it: it failed, and its kind's failure did not dispose of its input (otherwise the retry answers 409 `retry_not_possible` or `operation_state_conflict`; submit the request again instead). */
            can_retry: boolean;
            /** @description Once completed: the unit and the trunk revision its draft starts at. */
            result: components["schemas"]["AddWorktreeUnitResult"] | null;
        };
        /**
         * @description `{source: "trunk", resource_id}` adds a unit of trunk (its draft starts as trunk's
         *     head); `{source: "worktree", name, unit_type, target, initial_snapshot?}` creates a
         *     unit new in the worktree (its node is created by the merge). Ids are the server's.
         */
        AddWorktreeUnitRequest: {
            source: components["schemas"]["WorktreeUnitSource"];
            /**
             * @description `trunk`: the unit resource to add (editor on it).
             * @default null
             */
            resource_id?: string | null;
            /**
             * @description `worktree`: the node's name.
             * @default null
             */
            name?: string | null;
            /**
             * @description `worktree`: the unit's type.
             * @default null
             */
            unit_type?: components["schemas"]["UnitType"] | null;
            /**
             * @description `worktree`: where its node will be created (editor there).
             * @default null
             */
            target?: components["schemas"]["WorktreeTargetRequest"] | null;
            /**
             * @description `worktree`: its first document (default: the type's empty one).
             * @default null
             */
            initial_snapshot?: Record<string, never> | null;
        };
        AddWorktreeUnitResult: {
            worktree_id: string;
            unit_id: string;
            resource_id: string;
            base_revision: number;
        };
        ApiToken: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            name: string;
            prefix: string;
            scopes: components["schemas"]["TokenScope"][];
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            expires_at: string | null;
            last_used_at: string | null;
            /** @description The token's own limit on operations pending at once (0: unlimited); null: the server's. */
            quota_pending_operations: number | null;
            /** @description The token's own limit on submissions per minute (0: unlimited); null: the server's. */
            quota_submissions_per_minute: number | null;
        };
        ApiTokenCreated: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            name: string;
            prefix: string;
            scopes: components["schemas"]["TokenScope"][];
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            expires_at: string | null;
            last_used_at: string | null;
            /** @description The token's own limit on operations pending at once (0: unlimited); null: the server's. */
            quota_pending_operations: number | null;
            /** @description The token's own limit on submissions per minute (0: unlimited); null: the server's. */
            quota_submissions_per_minute: number | null;
            /** @description The secret; shown only in this answer. */
            token: string;
        };
        ApiTokenList: {
            items: components["schemas"]["ApiToken"][];
        };
        /**
         * @description A file embedded in a unit. Snapshots name it by `id`; its bytes are served at
         *     `content_url`, which re-checks read access on the unit on every request. Described
         *     as a `publish_asset` result describes it (`AssetDescription`), plus its id, name and
         *     history.
         */
        Asset: {
            unit_id: string;
            /** @description null: a trunk asset (worktree assets arrive with worktrees). */
            worktree_id: string | null;
            /**
             * @description The type declared at upload (its `Content-Type`), served as `Content-Type`.
             * @example image/png
             */
            media_type: string;
            /** @description What the server detected from the bytes (HTML, SVG, XML or script in either type: always served as an attachment). */
            detected_media_type: string;
            size: number;
            sha256: string;
            /**
             * @description The same-origin path of the bytes: the trunk gateway, or the worktree's for a worktree asset.
             * @example /api/assets/0f8fad5bd9cb469fa16570867728950e/content
             */
            content_url: string;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            filename: string;
            /** @description The strong ETag of the bytes (quoted). */
            etag: string;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            created_by: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            published_at: string | null;
        };
        AssetList: {
            items: components["schemas"]["Asset"][];
            next_cursor: string | null;
        };
        AssignByNameRequest: {
            /** @description The user's name, any case (404 `user_not_found` when no user has it). */
            username: string;
        };
        /** @enum {string} */
        AttemptOutcome: "completed" | "failed" | "lost" | "retry";
        AttemptView: {
            number: number;
            worker_id: string;
            /** Format: date-time */
            started_at: string;
            finished_at: string | null;
            outcome: string | null;
            error_code: string | null;
            error_message: string | null;
        };
        AuditEntry: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            at: string;
            action: string;
            actor: components["schemas"]["Actor"];
            target_type: string;
            target_id: string | null;
            space_id: string | null;
            request_id: string | null;
            details: Record<string, never> | null;
            /**
             * @description Only in one's own trail and the operators'.
             * @default null
             */
            client_ip?: string | null;
            /** @default null */
            user_agent?: string | null;
        };
        AuditPage: {
            items: components["schemas"]["AuditEntry"][];
            next_cursor: string | null;
        };
        /** @enum {string} */
        AuthMethod: "session" | "token";
        BatchAnswer: {
            items: components["schemas"]["BatchItemAnswer"][];
        };
        /**
         * @description One item's answer: ``status`` as its single route would answer it (202 recorded, or
         *     a replay not done; 200 a replay of a done operation) with ``operation``, or the
         *     problem's status with ``problem``.
         */
        BatchItemAnswer: {
            status: number;
            operation?: components["schemas"]["ActivateWorktreeResourceOperation"] | components["schemas"]["AddWorktreeUnitOperation"] | components["schemas"]["CreateBlobResourceOperation"] | components["schemas"]["CreateResourceOperation"] | components["schemas"]["CreateWorktreeOperation"] | components["schemas"]["CreateWorktreeUnitOperation"] | components["schemas"]["DeleteAccountOperation"] | components["schemas"]["DeleteSpaceOperation"] | components["schemas"]["DiscardWorktreeOperation"] | components["schemas"]["ExportTakeoutOperation"] | components["schemas"]["ExportUnitOperation"] | components["schemas"]["ImportFileOperation"] | components["schemas"]["MergeWorktreeOperation"] | components["schemas"]["PublishAssetOperation"] | components["schemas"]["PurgeTrashOperation"] | components["schemas"]["ReplaceBlobContentOperation"];
            /** @description With `operation`: true when the key already named it (an earlier request, or an earlier item of this batch). */
            replay?: boolean;
            /** @description The item's refusal, as the single route's problem document (`validation_failed`, `forbidden`, `not_found`, `idempotency_key_reused`, `invalid_idempotency_key`, `quota_exceeded`, ...). */
            problem?: components["schemas"]["Problem"];
        };
        /** @description One submission of a batch. */
        BatchItemRequest: {
            /** @description The item's own Idempotency-Key (16-200 characters of A-Z a-z 0-9 _ -), as the single route's header. */
            idempotency_key: string;
            /**
             * @description The operation kind to start.
             * @enum {unknown}
             */
            kind: "create_resource";
            /** @description The body the kind's single route takes (`create_resource`: `CreateResourceRequest`, as `POST /api/resources`); validated as there, an invalid one answers that item's problem. */
            input: Record<string, never>;
        };
        BatchRequest: {
            /** @description 1 to 100 submissions, answered in order. */
            items: components["schemas"]["BatchItemRequest"][];
        };
        /** @description A node's blob resource. */
        BlobRef: {
            /** @enum {unknown} */
            kind: "blob";
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            filename: string;
            size: number;
            mime_type: string;
            /** @description The strong ETag of the bytes (quoted). */
            etag: string;
        };
        BlobResource: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            resource_id: string;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            node_id: string;
            filename: string;
            /**
             * @description Detected by the server from the bytes.
             * @example text/csv
             */
            mime_type: string;
            size: number;
            /** @description SHA-256 of the bytes, lowercase hex. */
            sha256: string;
            /**
             * @description The strong ETag of the bytes (quoted), as sent in the `ETag` header.
             * @example "5d41402abc4b2a76b9719d911017c592"
             */
            etag: string;
            state: components["schemas"]["BlobState"];
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            updated_at: string;
        };
        /** @enum {string} */
        BlobState: "quarantined" | "ready";
        Capabilities: {
            can_read: boolean;
            can_edit: boolean;
            can_create_children: boolean;
            can_manage: boolean;
            can_share: boolean;
            can_trash: boolean;
            can_purge: boolean;
        };
        /** @description ``PUT /api/me/password``. */
        ChangePasswordRequest: {
            current_password: string;
            new_password: string;
            /**
             * @description Also revoke every API token of the user (default: they stay).
             * @default false
             */
            revoke_tokens?: boolean;
        };
        ChangesetItem: {
            revision: number;
            /** @description The RFC 6902 operations that made this revision from the one before. */
            changes: Record<string, never>[];
            author_id: string | null;
            origin: Record<string, never> | null;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
        };
        ChangesetList: {
            items: components["schemas"]["ChangesetItem"][];
            /** @description The `after` of the next page; null when this page reaches the current revision. */
            next_after: number | null;
        };
        ChangesetRequest: {
            /** @description The revision the changes were made against (409 `revision_conflict` if the unit moved on). */
            base_revision: number;
            changes: (components["schemas"]["PatchAdd"] | components["schemas"]["PatchRemove"] | components["schemas"]["PatchReplace"] | components["schemas"]["PatchMove"] | components["schemas"]["PatchCopy"] | components["schemas"]["PatchTest"])[];
        };
        ChangesetResult: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            unit_id: string;
            revision: number;
            /** @description The new document; null with `Prefer: return=minimal`. */
            snapshot: Record<string, never> | null;
        };
        Check: {
            status: components["schemas"]["CheckState"];
            error?: string;
        };
        /** @enum {string} */
        CheckState: "down" | "ok";
        CloseIssueRequest: {
            /** @default completed */
            reason?: components["schemas"]["IssueStateReason"];
            /**
             * @description Written with the close, shown just before the `closed` event.
             * @default null
             */
            comment?: string | null;
        };
        CollaboratorRequest: {
            role: components["schemas"]["ObjectRole"];
        };
        Comment: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            issue_id: string;
            author: components["schemas"]["api.schemas.issues.UserRef"];
            body: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            updated_at: string;
        };
        CommentRequest: {
            /** @description Markdown (1 to 65,536 characters). */
            body: string;
        };
        CommentThread: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            thread_id: string;
            anchor: Record<string, never>;
            solved: boolean;
            /** @description Bumped by every change to the thread: a reply, the solved state, an edit, a reply deleted. */
            generation: number;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            updated_at: string;
            /** @description Oldest first; the first one opened the thread. */
            comments: components["schemas"]["UnitComment"][];
        };
        CommentThreadList: {
            items: components["schemas"]["CommentThread"][];
            next_cursor: string | null;
        };
        ConflictList: {
            /** @description The unit's last merge (null: never merged). */
            operation_id: string | null;
            /** @description All the conflicts found (at most WHARF_MERGE_MAX_CONFLICTS are stored). */
            conflict_count: number;
            items: components["schemas"]["MergeConflictRecord"][];
            next_cursor: string | null;
        };
        /** @description ``create_blob_resource``: a completed upload verified and published. */
        CreateBlobResourceOperation: {
            /** @enum {unknown} */
            kind: "create_blob_resource";
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            status: components["schemas"]["OperationStatus"];
            /** @description The status is completed or failed. */
            done: boolean;
            attempts: number;
            max_attempts: number;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            updated_at: string;
            completed_at: string | null;
            /** @description When the next attempt is due (after a retryable failure). */
            next_attempt_at: string | null;
            /** @description Why it failed (status failed), or the last retryable failure. */
            error: components["schemas"]["OperationError"] | null;
            /** @description `POST /api/operations/{id}/retry` can reopen it: it failed, and its kind's failure did not dispose of its input (otherwise the retry answers 409 `retry_not_possible` or `operation_state_conflict`; submit the request again instead). */
            can_retry: boolean;
            /** @description Once completed: the new node and blob resource. */
            result: components["schemas"]["CreateBlobResourceResult"] | null;
        };
        CreateBlobResourceResult: {
            node_id: string;
            resource_id: string;
        };
        CreateCommentRequest: {
            /**
             * @description Text, 1 to 10,000 characters (longer: 400 `comment_too_long`).
             * @example Is this total right?
             */
            body: string;
            /**
             * @description Starts a thread here (give this or `thread_id`).
             * @default null
             */
            anchor?: Record<string, never> | null;
            /**
             * @description Replies in this thread (give this or `anchor`).
             * @default null
             */
            thread_id?: string | null;
        };
        CreateIssueRequest: {
            /** @example Totals row is off by one */
            title: string;
            /**
             * @description Markdown (at most 65,536 characters).
             * @default
             */
            body?: string;
        };
        CreateLabelRequest: {
            /** @example bug */
            name: string;
            /** @default gray */
            color?: components["schemas"]["LabelColor"];
        };
        CreateNodeRequest: {
            /** @description An id (unknown ids are 404). */
            space_id: string;
            /** @example Q3 plans */
            name: string;
            /** @default null */
            parent_id?: string | null;
        };
        CreatePermissionObjectRequest: {
            /** @example Q3 totals */
            name: string;
            /**
             * @description What the object is in the editor's terms (free text: `range`, `worksheet`, ...).
             * @example range
             */
            object_type: string;
            /**
             * @description An RFC 6901 JSON Pointer inside the document's body (`/body...`): the prefix protected (whole reference tokens; `~0`/`~1` compared decoded).
             * @example /body/sheets/s1/cellData/2
             */
            target: string;
            /** @default all_collaborators */
            read_scope?: components["schemas"]["ReadScope"];
            /** @default one_self */
            edit_scope?: components["schemas"]["EditScope"];
            /** @default null */
            strategies?: components["schemas"]["Strategies"] | null;
        };
        /** @description ``create_resource``: a unit resource (POST /api/resources). */
        CreateResourceOperation: {
            /** @enum {unknown} */
            kind: "create_resource";
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            status: components["schemas"]["OperationStatus"];
            /** @description The status is completed or failed. */
            done: boolean;
            attempts: number;
            max_attempts: number;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            updated_at: string;
            completed_at: string | null;
            /** @description When the next attempt is due (after a retryable failure). */
            next_attempt_at: string | null;
            /** @description Why it failed (status failed), or the last retryable failure. */
            error: components["schemas"]["OperationError"] | null;
            /** @description `POST /api/operations/{id}/retry` can reopen it: it failed, and its kind's failure did not dispose of its input (otherwise the retry answers 409 `retry_not_possible` or `operation_state_conflict`; submit the request again instead). */
            can_retry: boolean;
            /** @description Once completed: the new node, resource and unit. */
            result: components["schemas"]["CreateResourceResult"] | null;
        };
        CreateResourceRequest: {
            /** @description An id (unknown ids are 404). */
            space_id: string;
            /** @example Q3 plans */
            name: string;
            unit_type: components["schemas"]["UnitType"];
            /**
             * @description The folder to create it in (null or absent: the space's root).
             * @default null
             */
            parent_id?: string | null;
        };
        CreateResourceResult: {
            node_id: string;
            resource_id: string;
            unit_id: string;
        };
        CreateSpaceRequest: {
            /** @example Design team */
            name: string;
            /**
             * @description Only `team` spaces are created here (the personal space comes with the user).
             * @default team
             */
            type?: components["schemas"]["SpaceType"];
        };
        CreateTokenRequest: {
            /** @example ci */
            name: string;
            scopes: components["schemas"]["TokenScope"][];
            /** @default null */
            expires_in_days?: number | null;
            /** @default null */
            quota_pending_operations?: number | null;
            /** @default null */
            quota_submissions_per_minute?: number | null;
        };
        CreateUploadSessionRequest: {
            /** @description An id (unknown ids are 404). */
            space_id: string;
            /** @example report.csv */
            filename: string;
            /** @description The exact byte count the content PUT sends (its Content-Length); at most WHARF_MAX_UPLOAD_SIZE (else 413). */
            size: number;
            /**
             * @description The folder to publish it in (null or absent: the space's root).
             * @default null
             */
            parent_id?: string | null;
        };
        CreateWebhookRequest: {
            /** @description An http(s) URL; private and loopback addresses are refused (`webhook_url_refused`) unless the server allows them. */
            url: string;
            events: components["schemas"]["WebhookEvent"][];
        };
        /** @description ``create_worktree``: a worktree created (POST /api/worktrees). */
        CreateWorktreeOperation: {
            /** @enum {unknown} */
            kind: "create_worktree";
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            status: components["schemas"]["OperationStatus"];
            /** @description The status is completed or failed. */
            done: boolean;
            attempts: number;
            max_attempts: number;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            updated_at: string;
            completed_at: string | null;
            /** @description When the next attempt is due (after a retryable failure). */
            next_attempt_at: string | null;
            /** @description Why it failed (status failed), or the last retryable failure. */
            error: components["schemas"]["OperationError"] | null;
            /** @description `POST /api/operations/{id}/retry` can reopen it: it failed, and its kind's failure did not dispose of its input (otherwise the retry answers 409 `retry_not_possible` or `operation_state_conflict`; submit the request again instead). */
            can_retry: boolean;
            /** @description Once completed: the new worktree. */
            result: components["schemas"]["CreateWorktreeResult"] | null;
        };
        CreateWorktreeRequest: {
            kind: components["schemas"]["WorktreeKind"];
            /**
             * @description 1-255 characters, no control characters or `/`.
             * @example Q3 plan review
             */
            name: string;
            /** @default null */
            summary?: string | null;
            /**
             * @description Required for a team worktree (editor or above in that team space); refused for a user worktree.
             * @default null
             */
            team_space_id?: string | null;
            /**
             * @description Team worktrees: `private` (default: the creator, owner and admins) or `space` (every member). A user worktree is always `private`.
             * @default null
             */
            visibility?: components["schemas"]["WorktreeVisibility"] | null;
        };
        CreateWorktreeResult: {
            worktree_id: string;
        };
        /** @description ``create_worktree_unit``: a unit new in a worktree (node created at merge). */
        CreateWorktreeUnitOperation: {
            /** @enum {unknown} */
            kind: "create_worktree_unit";
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            status: components["schemas"]["OperationStatus"];
            /** @description The status is completed or failed. */
            done: boolean;
            attempts: number;
            max_attempts: number;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            updated_at: string;
            completed_at: string | null;
            /** @description When the next attempt is due (after a retryable failure). */
            next_attempt_at: string | null;
            /** @description Why it failed (status failed), or the last retryable failure. */
            error: components["schemas"]["OperationError"] | null;
            /** @description `POST /api/operations/{id}/retry` can reopen it: it failed, and its kind's failure did not dispose of its input (otherwise the retry answers 409 `retry_not_possible` or `operation_state_conflict`; submit the request again instead). */
            can_retry: boolean;
            /** @description Once completed: the unit and its reserved resource and node ids. */
            result: components["schemas"]["CreateWorktreeUnitResult"] | null;
        };
        CreateWorktreeUnitResult: {
            worktree_id: string;
            unit_id: string;
            resource_id: string;
            node_id: string;
        };
        /** @description Everything the operator dashboard shows, as of ``generated_at``. */
        Dashboard: {
            /** Format: date-time */
            generated_at: string;
            refresh_seconds: number;
            statuses: components["schemas"]["StatusPanel"];
            throughput: components["schemas"]["ThroughputPanel"];
            queue: components["schemas"]["QueuePanel"];
            slowest: components["schemas"]["OperationView"][];
            most_retried: components["schemas"]["OperationView"][];
            failures: components["schemas"]["OperationView"][];
            deletion_jobs: components["schemas"]["DeletionJobView"][];
            deletion_failing_for_seconds: number;
            sweeps: components["schemas"]["SweepView"][];
            processes: components["schemas"]["ProcessView"][];
            process_window_seconds: number;
            disabled_users: components["schemas"]["DisabledUserView"][];
            /** @description Disabled accounts, counted up to `disabled_cap`; `disabled_users` lists the first ones by username. */
            disabled_total: number;
            disabled_cap: number;
        };
        /**
         * @description ``delete_account``: the submitter's account and everything it owns, deleted
         *     (``DELETE /api/me``).
         */
        DeleteAccountOperation: {
            /** @enum {unknown} */
            kind: "delete_account";
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            status: components["schemas"]["OperationStatus"];
            /** @description The status is completed or failed. */
            done: boolean;
            attempts: number;
            max_attempts: number;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            updated_at: string;
            completed_at: string | null;
            /** @description When the next attempt is due (after a retryable failure). */
            next_attempt_at: string | null;
            /** @description Why it failed (status failed), or the last retryable failure. */
            error: components["schemas"]["OperationError"] | null;
            /** @description `POST /api/operations/{id}/retry` can reopen it: it failed, and its kind's failure did not dispose of its input (otherwise the retry answers 409 `retry_not_possible` or `operation_state_conflict`; submit the request again instead). */
            can_retry: boolean;
            /** @description Once completed: the deleted account's id. */
            result: components["schemas"]["DeleteAccountResult"] | null;
        };
        /**
         * @description ``DELETE /api/me``: the password re-authenticates; without it, only a login session
         *     younger than ``WHARF_ACCOUNT_REAUTH_SECONDS`` may delete the account.
         */
        DeleteAccountRequest: {
            /** @default null */
            password?: string | null;
        };
        DeleteAccountResult: {
            user_id: string;
        };
        /**
         * @description ``delete_space``: a team space and everything in it, deleted
         *     (``DELETE /api/spaces/{id}``).
         */
        DeleteSpaceOperation: {
            /** @enum {unknown} */
            kind: "delete_space";
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            status: components["schemas"]["OperationStatus"];
            /** @description The status is completed or failed. */
            done: boolean;
            attempts: number;
            max_attempts: number;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            updated_at: string;
            completed_at: string | null;
            /** @description When the next attempt is due (after a retryable failure). */
            next_attempt_at: string | null;
            /** @description Why it failed (status failed), or the last retryable failure. */
            error: components["schemas"]["OperationError"] | null;
            /** @description `POST /api/operations/{id}/retry` can reopen it: it failed, and its kind's failure did not dispose of its input (otherwise the retry answers 409 `retry_not_possible` or `operation_state_conflict`; submit the request again instead). */
            can_retry: boolean;
            /** @description Once completed: the deleted space's id. */
            result: components["schemas"]["DeleteSpaceResult"] | null;
        };
        /** @description ``DELETE /api/spaces/{id}``: the space's name, exactly, as confirmation. */
        DeleteSpaceRequest: {
            /** @example Design team */
            confirm_name: string;
        };
        DeleteSpaceResult: {
            space_id: string;
        };
        DeletionJobView: {
            object_key: string;
            reason: string;
            attempts: number;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            next_attempt_at: string;
            last_error: string | null;
        };
        /**
         * @description A webhook delivery's state (``webhook_deliveries.status``): declared here, beside
         *     the table's other vocabularies, so the webhooks capability and the metrics (which
         *     sit below it) spell it once.
         * @enum {string}
         */
        DeliveryStatus: "delivered" | "failed" | "pending";
        /** @description What a device login request asks, for the page that approves it. */
        DeviceAuthorization: {
            /**
             * @description As shown: `XXXX-XXXX`, letters of BCDFGHJKLMNPQRSTVWXZ.
             * @example WDJB-MJHT
             */
            user_code: string;
            /** @enum {unknown} */
            status: "approved" | "denied" | "expired" | "issued" | "pending";
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            expires_at: string;
            /** @description The name the client gave (`client_id`): not verified. */
            client_name: string | null;
            /** @description The requesting client's User-Agent. */
            user_agent: string | null;
            /** @description The requesting client's address, as the API saw it. */
            address: string | null;
        };
        /** @description JSON, or form-encoded as RFC 8628 section 3.1 sends it. */
        DeviceAuthorizationRequest: {
            /**
             * @description The client's name, shown on the approval page (no registration: any name).
             * @default null
             */
            client_id?: string | null;
            /**
             * @description Accepted and ignored: the session has every scope.
             * @default null
             */
            scope?: string | null;
        };
        /** @description RFC 8628 section 3.2, plus the token endpoint to poll. */
        DeviceAuthorizationStarted: {
            /** @description The client's secret; poll with it. */
            device_code: string;
            /**
             * @description As shown: `XXXX-XXXX`, letters of BCDFGHJKLMNPQRSTVWXZ.
             * @example WDJB-MJHT
             */
            user_code: string;
            /** @description Wharf's approval page (`/device`), absolute. */
            verification_uri: string;
            /** @description The page with the user code filled in. */
            verification_uri_complete: string;
            /** @description Seconds the request lives (600). */
            expires_in: number;
            /** @description Seconds between polls (5). */
            interval: number;
            /** @description Where to poll: `POST` with `grant_type` and `device_code`. */
            token_endpoint: string;
        };
        /** @description RFC 6749 section 5.1: a new login session of the approving user. */
        DeviceTokenIssued: {
            /** @description The session's credential: send `Authorization: Bearer <it>` (or it is the `wharf_session` cookie's value). Shown only in this answer. */
            access_token: string;
            /** @enum {unknown} */
            token_type: "Bearer";
            /** @description Seconds the session lives. */
            expires_in: number;
            /** @description `read write`: a session's. */
            scope: string;
            /** @description The login session (GET/DELETE /api/login-sessions). */
            session_id: string;
            user: components["schemas"]["User"];
        };
        /** @description JSON, or form-encoded as RFC 8628 section 3.4 sends it. */
        DeviceTokenRequest: {
            /**
             * @description `urn:ietf:params:oauth:grant-type:device_code` (else `unsupported_grant_type`).
             * @default null
             * @example urn:ietf:params:oauth:grant-type:device_code
             */
            grant_type?: string | null;
            /** @default null */
            device_code?: string | null;
            /** @default null */
            client_id?: string | null;
        };
        /**
         * @description A disabled account (``wharf user disable NAME``): refused on every request, its
         *     operations waiting (``pending_operations``, counted up to the panel's cap).
         */
        DisabledUserView: {
            id: string;
            username: string;
            /** Format: date-time */
            created_at: string;
            pending_operations: number;
        };
        /** @description ``discard_worktree``: a worktree discarded, its assets deleted. */
        DiscardWorktreeOperation: {
            /** @enum {unknown} */
            kind: "discard_worktree";
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            status: components["schemas"]["OperationStatus"];
            /** @description The status is completed or failed. */
            done: boolean;
            attempts: number;
            max_attempts: number;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            updated_at: string;
            completed_at: string | null;
            /** @description When the next attempt is due (after a retryable failure). */
            next_attempt_at: string | null;
            /** @description Why it failed (status failed), or the last retryable failure. */
            error: components["schemas"]["OperationError"] | null;
            /** @description `POST /api/operations/{id}/retry` can reopen it: it failed, and its kind's failure did not dispose of its input (otherwise the retry answers 409 `retry_not_possible` or `operation_state_conflict`; submit the request again instead). */
            can_retry: boolean;
            /** @description Once completed: what the discard deleted and cancelled. */
            result: components["schemas"]["DiscardWorktreeResult"] | null;
        };
        DiscardWorktreeResult: {
            worktree_id: string;
            state: string;
            assets_deleted: number;
            uploads_cancelled: number;
            intents_discarded: number;
        };
        EditCommentRequest: {
            /**
             * @description Text, 1 to 10,000 characters (longer: 400 `comment_too_long`).
             * @example Is this total right?
             */
            body: string;
            /** @description The generation the client read: the write applies only if it is still the current one (else 409 `comment_conflict`). */
            generation: number;
        };
        /**
         * @description Who edits under a permission object's target (``edit_scope``).
         * @enum {string}
         */
        EditScope: "one_self" | "specified";
        /** @description What the event recorded, with the names as they were then. */
        EventPayload: {
            /** @default null */
            reason?: components["schemas"]["IssueStateReason"] | null;
            /**
             * @description renamed: the old title
             * @default null
             */
            from?: string | null;
            /** @default null */
            to?: string | null;
            /** @default null */
            label?: components["schemas"]["LabelSnapshot"] | null;
            /** @default null */
            user?: components["schemas"]["UserSnapshot"] | null;
            /** @default null */
            node?: components["schemas"]["NodeSnapshot"] | null;
            /** @default null */
            purged?: boolean | null;
        };
        /** @description ``POST /api/units/{unit_id}/exports`` (operation ``export_unit``). */
        ExportRequest: {
            /**
             * @description `xlsx` or `csv` for a sheet, `docx` for a doc, `pptx` for a slide; another is 400 `validation_failed` (`details.field`: `format`).
             * @enum {unknown}
             */
            format: "csv" | "docx" | "pptx" | "xlsx";
            /** @default null */
            sheet?: string | null;
        };
        /** @description ``export_takeout``: a zip of a space (POST /api/spaces/{space_id}/exports) or of every space the caller owns (POST /api/me/exports): each node at its path, units as JSON and as Office files, blobs and assets as their bytes, and manifest.json. */
        ExportTakeoutOperation: {
            /** @enum {unknown} */
            kind: "export_takeout";
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            status: components["schemas"]["OperationStatus"];
            /** @description The status is completed or failed. */
            done: boolean;
            attempts: number;
            max_attempts: number;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            updated_at: string;
            completed_at: string | null;
            /** @description When the next attempt is due (after a retryable failure). */
            next_attempt_at: string | null;
            /** @description Why it failed (status failed), or the last retryable failure. */
            error: components["schemas"]["OperationError"] | null;
            /** @description `POST /api/operations/{id}/retry` can reopen it: it failed, and its kind's failure did not dispose of its input (otherwise the retry answers 409 `retry_not_possible` or `operation_state_conflict`; submit the request again instead). */
            can_retry: boolean;
            /** @description Once completed: the archive and where it is downloaded. A failure's `error.code`: `file_too_complex` (more files than WHARF_TAKEOUT_MAX_FILES) or `permission_revoked`. */
            result: components["schemas"]["ExportUnitResult"] | null;
        };
        /** @description ``export_unit``: a trunk unit written to an Office file (POST /api/units/{unit_id}/exports). */
        ExportUnitOperation: {
            /** @enum {unknown} */
            kind: "export_unit";
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            status: components["schemas"]["OperationStatus"];
            /** @description The status is completed or failed. */
            done: boolean;
            attempts: number;
            max_attempts: number;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            updated_at: string;
            completed_at: string | null;
            /** @description When the next attempt is due (after a retryable failure). */
            next_attempt_at: string | null;
            /** @description Why it failed (status failed), or the last retryable failure. */
            error: components["schemas"]["OperationError"] | null;
            /** @description `POST /api/operations/{id}/retry` can reopen it: it failed, and its kind's failure did not dispose of its input (otherwise the retry answers 409 `retry_not_possible` or `operation_state_conflict`; submit the request again instead). */
            can_retry: boolean;
            /** @description Once completed: the export and where its file is downloaded. */
            result: components["schemas"]["ExportUnitResult"] | null;
        };
        ExportUnitResult: {
            export_id: string;
            /**
             * @description Where the file is downloaded (the requester, while they may view the unit, until `expires_at`).
             * @example /api/exports/0f8fad5bd9cb469fa16570867728950e/content
             */
            content_url: string;
            size: number;
            sha256: string;
            /** @description RFC 3339; then the file is gone. */
            expires_at: string;
        };
        ExternalIdentity: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            /**
             * @example oidc
             * @example github
             */
            provider: string;
            /** @description The account's stable id at the provider (OIDC `sub`, GitHub user id). */
            subject: string;
            /** @description What the provider called the account when it was linked. */
            display_name: string | null;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
        };
        ExternalIdentityList: {
            items: components["schemas"]["ExternalIdentity"][];
            /** @description The providers this server offers (link one with `GET /api/auth/{provider}/start` while logged in). */
            providers: string[];
        };
        FeedTicket: {
            /** @description Good once, until `expires_at`, for `GET /api/feed?ticket=...`. */
            ticket: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            expires_at: string;
        };
        /** @description One validation failure: where (a JSON pointer into the body or query) and what. */
        FieldError: {
            pointer: string;
            message: string;
        };
        Grant: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            node_id: string;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            user_id: string;
            role: components["schemas"]["ShareRole"];
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
        };
        GrantList: {
            items: components["schemas"]["GrantListItem"][];
        };
        GrantListItem: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            node_id: string;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            user_id: string;
            role: components["schemas"]["ShareRole"];
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            username: string;
        };
        /** @description ``/healthz``: the process answers. */
        Health: {
            status: components["schemas"]["HealthStatus"];
        };
        /**
         * @description Every dependency with its status; an error is its type only unless the metrics token
         *     is configured (then the operator message).
         */
        HealthDetails: {
            status: components["schemas"]["HealthStatus"];
            checks: {
                [key: string]: components["schemas"]["Check"];
            };
        };
        /** @enum {string} */
        HealthStatus: "degraded" | "ok" | "unavailable";
        /** @description ``import_file``: a spreadsheet, document or presentation in a blob resource or an upload session imported as a new unit resource (POST /api/imports). */
        ImportFileOperation: {
            /** @enum {unknown} */
            kind: "import_file";
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            status: components["schemas"]["OperationStatus"];
            /** @description The status is completed or failed. */
            done: boolean;
            attempts: number;
            max_attempts: number;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            updated_at: string;
            completed_at: string | null;
            /** @description When the next attempt is due (after a retryable failure). */
            next_attempt_at: string | null;
            /** @description Why it failed (status failed), or the last retryable failure. */
            error: components["schemas"]["OperationError"] | null;
            /** @description `POST /api/operations/{id}/retry` can reopen it: it failed, and its kind's failure did not dispose of its input (otherwise the retry answers 409 `retry_not_possible` or `operation_state_conflict`; submit the request again instead). */
            can_retry: boolean;
            /** @description Once completed: the new node, resource and unit. A failure's `error.code`: `unsupported_format`, `file_too_complex`, `corrupt_file`, `conversion_timeout`, `blob_not_found` or `permission_revoked`. */
            result: components["schemas"]["ImportFileResult"] | null;
        };
        ImportFileResult: {
            node_id: string;
            resource_id: string;
            unit_id: string;
        };
        /**
         * @description Exactly one of ``blob_resource_id`` and ``upload_session_id`` (400
         *     ``validation_failed`` otherwise).
         */
        ImportRequest: {
            /** @description An id (unknown ids are 404). */
            space_id: string;
            /** @example Q3 budget */
            name: string;
            /**
             * @description The blob resource whose file is imported (the caller must be able to read it; it stays as it is). Exactly one of this and `upload_session_id`.
             * @default null
             */
            blob_resource_id?: string | null;
            /**
             * @description The caller's own upload session, `uploaded` (its content PUT, not completed): the import takes its bytes. The session becomes `importing`, then `imported` (or `failed` with the import's code); either way its object is deleted once the import is done. Exactly one of this and `blob_resource_id`.
             * @default null
             */
            upload_session_id?: string | null;
            /**
             * @description The folder to create the unit in (null or absent: the space's root).
             * @default null
             */
            parent_id?: string | null;
            /**
             * @description The unit type expected (absent: the file's format decides; a file of another kind fails the import with `unsupported_format`).
             * @default null
             */
            unit_type?: ("doc" | "sheet" | "slide") | null;
        };
        Issue: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            space_id: string;
            /** @description `#N`, per space. */
            number: number;
            title: string;
            body: string;
            state: components["schemas"]["IssueState"];
            state_reason: components["schemas"]["IssueStateReason"] | null;
            author: components["schemas"]["api.schemas.issues.UserRef"];
            labels: components["schemas"]["Label"][];
            assignees: components["schemas"]["api.schemas.issues.UserRef"][];
            node_refs: components["schemas"]["NodeRef"][];
            /** @description How many comments it has. */
            comments: number;
            closed_by: components["schemas"]["api.schemas.issues.UserRef"] | null;
            closed_at: string | null;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            updated_at: string;
        };
        /**
         * @description What an ``issue_events`` row records (its payload snapshots the names involved).
         * @enum {string}
         */
        IssueEventKind: "assigned" | "closed" | "labeled" | "node_referenced" | "node_unreferenced" | "renamed" | "reopened" | "unassigned" | "unlabeled";
        IssueList: {
            items: components["schemas"]["IssueSummary"][];
            next_cursor: string | null;
        };
        /** @enum {string} */
        IssueState: "closed" | "open";
        /**
         * @description Why a closed issue was closed (an open issue has none).
         * @enum {string}
         */
        IssueStateReason: "completed" | "not_planned";
        IssueSummary: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            space_id: string;
            /** @description `#N`, per space. */
            number: number;
            title: string;
            state: components["schemas"]["IssueState"];
            state_reason: components["schemas"]["IssueStateReason"] | null;
            author: components["schemas"]["api.schemas.issues.UserRef"];
            labels: components["schemas"]["Label"][];
            assignees: components["schemas"]["api.schemas.issues.UserRef"][];
            /** @description How many comments it has. */
            comments: number;
            closed_by: components["schemas"]["api.schemas.issues.UserRef"] | null;
            closed_at: string | null;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            updated_at: string;
        };
        /** @description How many operations of ``kind`` are in ``status``. */
        KindCount: {
            kind: string;
            status: string;
            count: number;
        };
        Label: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            space_id: string;
            name: string;
            color: components["schemas"]["LabelColor"];
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            updated_at: string;
        };
        /**
         * @description The palette keys of issue labels (checked by the service only: changing the palette
         *     needs no migration).
         * @enum {string}
         */
        LabelColor: "blue" | "gray" | "green" | "orange" | "pink" | "purple" | "red" | "yellow";
        LabelList: {
            items: components["schemas"]["Label"][];
        };
        LabelSnapshot: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            name: string;
            color: string;
        };
        LinkSharingRequest: {
            enabled: boolean;
            /**
             * @description The role a link gives (default viewer).
             * @default null
             */
            role?: components["schemas"]["ShareRole"] | null;
        };
        LinkSharingState: {
            enabled: boolean;
            role: components["schemas"]["ShareRole"] | null;
        };
        LoginRequest: {
            /** @example alice */
            username: string;
            password: string;
        };
        LoginResult: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            session_id: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            expires_at: string;
            user: components["schemas"]["User"];
        };
        LoginSessionItem: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            expires_at: string;
            /** @description When it last authenticated a request (to within a minute or so). */
            last_used_at: string | null;
            user_agent: string | null;
            /** @description The client address at login. */
            address: string | null;
            /** @description Whether this request uses it. */
            current: boolean;
        };
        LoginSessionList: {
            items: components["schemas"]["LoginSessionItem"][];
        };
        Me: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            username: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            personal_space_id: string;
            auth: components["schemas"]["AuthMethod"];
            scopes: components["schemas"]["TokenScope"][];
        };
        Member: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            space_id: string;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            user_id: string;
            username: string;
            role: components["schemas"]["MemberRole"];
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            updated_at: string;
        };
        MemberList: {
            items: components["schemas"]["Member"][];
            next_cursor: string | null;
        };
        /**
         * @description A team space member's stored role (the owner is not a member).
         * @enum {string}
         */
        MemberRole: "admin" | "editor" | "viewer";
        /**
         * @description Both sides changed the value at ``path`` (a JSON Pointer) differently; a side
         *     that has no value there (deleted, or never added) is left out. Values over 4 KiB of
         *     JSON are ``{"$truncated": true, "size": N, "sha256": "…"}``.
         */
        MergeConflictRecord: {
            path: string;
            base?: unknown;
            trunk?: unknown;
            draft?: unknown;
        };
        MergePreview: {
            outcome: components["schemas"]["PreviewOutcome"];
            /** @description The trunk head the preview was computed against (null: a unit new in the worktree). */
            trunk_revision: number | null;
            conflict_count: number;
            /** @description The first 100 conflicts. */
            conflicts: components["schemas"]["MergeConflictRecord"][];
            /** @description How many JSON Patch operations the merge would write to trunk. */
            patch_ops: number;
        };
        /**
         * @description A worktree unit's last merge outcome (``pending``: never merged, or changed since).
         * @enum {string}
         */
        MergeState: "activation_blocked" | "conflict" | "created" | "fast_forward" | "merged" | "pending" | "unchanged";
        /**
         * @description One unit's outcome (``unchanged``, ``fast_forward``, ``merged``, ``created``,
         *     ``conflict`` or ``activation_blocked``); ``conflict_count``: all its conflicts;
         *     ``conflicts``: a bounded sample (the first 3 of the unit, 10 in the whole result, each
         *     path and value clipped to 128 bytes of JSON); the full list is the unit's
         *     ``/conflicts``.
         */
        MergeUnitResult: {
            unit_id: string;
            resource_id: string;
            node_id: string | null;
            outcome: string;
            trunk_revision_before: number | null;
            trunk_revision_after: number | null;
            conflict_count: number;
            conflicts: Record<string, never>[];
        };
        /** @description ``merge_worktree``: a ready worktree merged into trunk, unit by unit. */
        MergeWorktreeOperation: {
            /** @enum {unknown} */
            kind: "merge_worktree";
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            status: components["schemas"]["OperationStatus"];
            /** @description The status is completed or failed. */
            done: boolean;
            attempts: number;
            max_attempts: number;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            updated_at: string;
            completed_at: string | null;
            /** @description When the next attempt is due (after a retryable failure). */
            next_attempt_at: string | null;
            /** @description Why it failed (status failed), or the last retryable failure. */
            error: components["schemas"]["OperationError"] | null;
            /** @description `POST /api/operations/{id}/retry` can reopen it: it failed, and its kind's failure did not dispose of its input (otherwise the retry answers 409 `retry_not_possible` or `operation_state_conflict`; submit the request again instead). */
            can_retry: boolean;
            /** @description Once completed: each unit's outcome and the worktree's new state (a conflict is an outcome, not a failure); a bounded summary (under 64 KiB): each unit's conflicts are a clipped sample, read them all through the unit's `/conflicts`. */
            result: components["schemas"]["MergeWorktreeResult"] | null;
        };
        /**
         * @description A bounded summary (under 64 KiB): ``counts`` has every unit, ``units`` the first
         *     200 in ordinal order (``units_truncated`` when there are more).
         */
        MergeWorktreeResult: {
            worktree_id: string;
            state: string;
            counts: {
                [key: string]: number;
            };
            assets_published: number;
            units: components["schemas"]["MergeUnitResult"][];
            /** @default false */
            units_truncated?: boolean;
        };
        /** @description Operations finished in one minute (``start``: its first instant, UTC). */
        Minute: {
            /** Format: date-time */
            start: string;
            completed: number;
            failed: number;
        };
        Node: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            space_id: string;
            parent_id: string | null;
            name: string;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            created_by: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            updated_at: string;
            /** @description The resource this node holds, if any (`kind` tells which). */
            resource: (components["schemas"]["UnitRef"] | components["schemas"]["BlobRef"]) | null;
            role: components["schemas"]["Role"] | null;
            capabilities: components["schemas"]["Capabilities"];
        };
        NodeList: {
            items: components["schemas"]["NodeListItem"][];
            next_cursor: string | null;
        };
        /**
         * @description In a listing (a space's roots, a node's children): whether the node has a child
         *     not in the trash (a tree draws an expander).
         */
        NodeListItem: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            space_id: string;
            parent_id: string | null;
            name: string;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            created_by: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            updated_at: string;
            /** @description The resource this node holds, if any (`kind` tells which). */
            resource: (components["schemas"]["UnitRef"] | components["schemas"]["BlobRef"]) | null;
            role: components["schemas"]["Role"] | null;
            capabilities: components["schemas"]["Capabilities"];
            has_children: boolean;
        };
        NodeRef: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            node_id: string;
            /** @description False when the node is in the trash or the caller cannot read it (then `name` is null). */
            available: boolean;
            name: string | null;
        };
        NodeSnapshot: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            /** @description The node's name when the event happened (null: not readable then). */
            name: string | null;
        };
        ObjectCollaborator: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            user_id: string;
            username: string;
            role: components["schemas"]["ObjectRole"];
        };
        /**
         * @description What the caller may do with the object (advisory for reading: snapshots, history
         *     and exports are not filtered by object scope).
         */
        ObjectRights: {
            view: boolean;
            edit: boolean;
            copy: boolean;
            print: boolean;
            export: boolean;
            manage: boolean;
        };
        /**
         * @description An explicit collaborator's role on a permission object.
         * @enum {string}
         */
        ObjectRole: "editor" | "viewer";
        OperationAttempt: {
            number: number;
            worker_id: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            started_at: string;
            finished_at: string | null;
            outcome: components["schemas"]["AttemptOutcome"] | null;
            error: components["schemas"]["OperationError"] | null;
        };
        OperationAttemptList: {
            items: components["schemas"]["OperationAttempt"][];
        };
        /**
         * @description Why an attempt or the operation failed (``operations.error``,
         *     ``operation_attempts.error``): a problem ``code``, a message, whether the executor
         *     would retry it, and the problem's ``details`` when it had any.
         */
        OperationError: {
            code: string;
            message: string;
            retryable: boolean;
            /** @default null */
            details?: Record<string, never> | null;
        };
        OperationList: {
            items: (components["schemas"]["ActivateWorktreeResourceOperation"] | components["schemas"]["AddWorktreeUnitOperation"] | components["schemas"]["CreateBlobResourceOperation"] | components["schemas"]["CreateResourceOperation"] | components["schemas"]["CreateWorktreeOperation"] | components["schemas"]["CreateWorktreeUnitOperation"] | components["schemas"]["DeleteAccountOperation"] | components["schemas"]["DeleteSpaceOperation"] | components["schemas"]["DiscardWorktreeOperation"] | components["schemas"]["ExportTakeoutOperation"] | components["schemas"]["ExportUnitOperation"] | components["schemas"]["ImportFileOperation"] | components["schemas"]["MergeWorktreeOperation"] | components["schemas"]["PublishAssetOperation"] | components["schemas"]["PurgeTrashOperation"] | components["schemas"]["ReplaceBlobContentOperation"])[];
            next_cursor: string | null;
        };
        /** @enum {string} */
        OperationStatus: "completed" | "failed" | "pending" | "running";
        /**
         * @description A listed operation with its last attempts; ``can_retry``/``can_cancel`` say which
         *     of ``POST /api/operations/{id}/retry|cancel`` would be accepted (``can_retry``: the
         *     retry endpoint's own rule, ``wharf.operations.service.can_retry``).
         */
        OperationView: {
            id: string;
            kind: string;
            status: string;
            actor: string | null;
            attempts: number;
            max_attempts: number;
            /** Format: date-time */
            created_at: string;
            completed_at: string | null;
            duration_seconds: number | null;
            error_code: string | null;
            error_message: string | null;
            can_retry: boolean;
            can_cancel: boolean;
            history: components["schemas"]["AttemptView"][];
        };
        Origin: {
            /**
             * @description `edit`: a changeset; `merge`: a worktree merge (`worktree_id`, `operation_id`); `restore`: a restore of `revision`.
             * @enum {unknown}
             */
            kind: "edit" | "merge" | "restore";
            /** @default null */
            worktree_id?: string | null;
            /** @default null */
            operation_id?: string | null;
            /** @default null */
            revision?: number | null;
        };
        /** @description ``POST /api/password-resets``: a recovery code buys a new password. */
        PasswordResetRequest: {
            /** @example alice */
            username: string;
            /** @description One unused recovery code (any case; hyphens and spaces ignored). */
            code: string;
            new_password: string;
            /**
             * @description Also revoke every API token of the user (default: they stay).
             * @default false
             */
            revoke_tokens?: boolean;
        };
        PatchAdd: {
            /** @enum {unknown} */
            op: "add";
            /**
             * @description An RFC 6901 JSON Pointer.
             * @example /body/title
             */
            path: string;
            value: unknown;
        };
        PatchCopy: {
            /** @enum {unknown} */
            op: "copy";
            /**
             * @description An RFC 6901 JSON Pointer.
             * @example /body/title
             */
            from: string;
            /**
             * @description An RFC 6901 JSON Pointer.
             * @example /body/title
             */
            path: string;
        };
        PatchMove: {
            /** @enum {unknown} */
            op: "move";
            /**
             * @description An RFC 6901 JSON Pointer.
             * @example /body/title
             */
            from: string;
            /**
             * @description An RFC 6901 JSON Pointer.
             * @example /body/title
             */
            path: string;
        };
        PatchRemove: {
            /** @enum {unknown} */
            op: "remove";
            /**
             * @description An RFC 6901 JSON Pointer.
             * @example /body/title
             */
            path: string;
        };
        PatchReplace: {
            /** @enum {unknown} */
            op: "replace";
            /**
             * @description An RFC 6901 JSON Pointer.
             * @example /body/title
             */
            path: string;
            value: unknown;
        };
        PatchTest: {
            /** @enum {unknown} */
            op: "test";
            /**
             * @description An RFC 6901 JSON Pointer.
             * @example /body/title
             */
            path: string;
            value: unknown;
        };
        PermissionObject: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            unit_id: string;
            name: string;
            object_type: string;
            /** @description The bound target in the unit's current document; null while the object is unbound (its binding could not be written: PATCH its target again). */
            target: string | null;
            bound: boolean;
            read_scope: components["schemas"]["ReadScope"];
            edit_scope: components["schemas"]["EditScope"];
            strategies: components["schemas"]["Strategies"];
            /** @description `~deleted`'s id once the creator's account was deleted. */
            creator_id: string;
            collaborators: components["schemas"]["ObjectCollaborator"][];
            rights: components["schemas"]["ObjectRights"];
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            updated_at: string;
        };
        PermissionObjectList: {
            items: components["schemas"]["PermissionObject"][];
        };
        /** @enum {string} */
        PreviewOutcome: "conflict" | "created" | "fast_forward" | "merged" | "unchanged";
        /**
         * @description An error (`application/problem+json`, RFC 9457). `code` is stable and
         *     machine-readable; `details` carries code-specific facts.
         */
        Problem: {
            title: string;
            status: number;
            /** @description Stable machine-readable error code. */
            code: components["schemas"]["ProblemCode"];
            /** @default about:blank */
            type?: string;
            detail?: string;
            request_id?: string;
            details?: components["schemas"]["ProblemDetails"];
            /** @description The device login's OAuth endpoints only: RFC 6749/8628's `error` (`authorization_pending`, `slow_down`, ...), for OAuth clients. */
            error?: string;
        };
        /**
         * @description Every `code` a problem may carry.
         * @enum {string}
         */
        ProblemCode: "access_denied" | "account_deleted" | "account_disabled" | "activation_blocked" | "ancestor_trashed" | "anchor_too_large" | "asset_too_large" | "assignee_limit" | "assignee_not_member" | "authorization_pending" | "bad_request" | "batch_restored" | "blob_not_found" | "blob_store_bucket_missing" | "blob_store_unavailable" | "changeset_too_large" | "checksum_mismatch" | "comment_conflict" | "comment_reply_limit" | "comment_thread_limit" | "comment_too_long" | "confirm_name_mismatch" | "conflict" | "conversion_timeout" | "corrupt_file" | "cross_origin" | "cross_space_move" | "database_busy" | "device_authorization_decided" | "device_authorization_expired" | "draft_purged" | "draft_quota_exceeded" | "expired_token" | "external_identity_taken" | "external_login_failed" | "file_too_complex" | "forbidden" | "grants_not_allowed" | "headers_too_large" | "history_pruned" | "http_error" | "idempotency_key_required" | "idempotency_key_reused" | "incomplete_body" | "insufficient_scope" | "internal_error" | "invalid_changeset" | "invalid_credentials" | "invalid_cursor" | "invalid_grant" | "invalid_idempotency_key" | "invalid_metrics_token" | "invalid_recovery_code" | "invalid_request" | "invalid_ticket" | "invalid_token" | "issue_label_limit" | "issue_state" | "label_limit" | "label_name_taken" | "last_login_method" | "length_required" | "malformed_json" | "malformed_request" | "merge_conflict" | "method_not_allowed" | "move_cycle" | "new_owner_not_member" | "no_session" | "node_in_other_space" | "node_ref_limit" | "node_trashed" | "not_a_member" | "not_a_team_space" | "not_a_unit" | "not_acceptable" | "not_blocked" | "not_found" | "not_local_unit" | "not_trashed" | "operation_state_conflict" | "outside_team_space" | "owner_not_grantee" | "owner_not_member" | "owner_required" | "parent_in_other_space" | "payload_too_large" | "permission_revoked" | "precondition_failed" | "precondition_required" | "protected_range" | "provider_already_linked" | "purge_forbidden" | "purge_in_progress" | "quarantined" | "quota_exceeded" | "range_not_satisfiable" | "rate_limited" | "reauthentication_required" | "retry_not_possible" | "revision_conflict" | "service_unavailable" | "size_mismatch" | "slow_down" | "space_deleted" | "space_deleting" | "space_read_only" | "star_limit" | "storage_failure" | "token_cannot_mint" | "too_many_requests" | "transient_failure" | "tree_too_deep" | "unauthenticated" | "unit_already_added" | "unit_conflict" | "unit_missing" | "unit_too_deep" | "unit_too_large" | "unit_unavailable" | "unitstore_unavailable" | "unknown_conflict_path" | "unknown_kind" | "unsupported_format" | "unsupported_grant_type" | "unsupported_media_type" | "upload_abandoned" | "upload_expired" | "upload_incomplete" | "upload_not_received" | "upload_session_expired" | "upload_session_state" | "uri_too_long" | "user_not_found" | "username_taken" | "validation_failed" | "verification_failed" | "webhook_limit" | "webhook_url_refused" | "worktree_busy" | "worktree_discarded" | "worktree_limit" | "worktree_reference" | "worktree_state" | "worktree_unit_limit";
        /**
         * @description Code-specific facts of a problem. The keys below are the ones the server sets (each
         *     only with the codes that need it); other keys may appear.
         */
        ProblemDetails: {
            /** @description validation_failed: the offending field (null: the body itself). */
            field?: string | null;
            /** @description validation_failed: up to 10 failures. */
            errors?: components["schemas"]["FieldError"][];
            /** @description validation_failed: the accepted values. */
            allowed?: string[];
            /** @description rate_limited: seconds to wait (also in `Retry-After`). */
            retry_after?: number;
            /** @description The operation the conflict is about (idempotency replays, purges). */
            operation_id?: string;
            /** @description ancestor_trashed: restore this batch first. */
            enclosing_batch_id?: string;
            /** @description Changesets: the index of the failing operation. */
            op_index?: number;
            /** @description Why a retry or an action is not possible. */
            reason?: string;
        };
        /**
         * @description A process seen within the window (``wharf.observability.heartbeats``); ``state``:
         *     ``running``, ``stopped`` (a clean stop, ``stopped_at``) or ``silent`` (missed its last
         *     beats).
         */
        ProcessView: {
            process_id: string;
            role: string;
            hostname: string;
            pid: number;
            version: string;
            /** Format: date-time */
            started_at: string;
            /** Format: date-time */
            last_seen_at: string;
            stopped_at: string | null;
            state: string;
            /** @description Since its last heartbeat. */
            age_seconds: number;
            details: Record<string, never>;
        };
        /**
         * @description A protected range of the unit and what the caller may do with it (advisory: the
         *     snapshot is not filtered; docs/protection.md).
         */
        ProtectedRange: {
            view: boolean;
            edit: boolean;
            copy: boolean;
            print: boolean;
            export: boolean;
            manage: boolean;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            object_id: string;
            name: string;
            /** @description null: not bound. */
            target: string | null;
        };
        /** @description ``publish_asset``: an uploaded unit asset verified and published. */
        PublishAssetOperation: {
            /** @enum {unknown} */
            kind: "publish_asset";
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            status: components["schemas"]["OperationStatus"];
            /** @description The status is completed or failed. */
            done: boolean;
            attempts: number;
            max_attempts: number;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            updated_at: string;
            completed_at: string | null;
            /** @description When the next attempt is due (after a retryable failure). */
            next_attempt_at: string | null;
            /** @description Why it failed (status failed), or the last retryable failure. */
            error: components["schemas"]["OperationError"] | null;
            /** @description `POST /api/operations/{id}/retry` can reopen it: it failed, and its kind's failure did not dispose of its input (otherwise the retry answers 409 `retry_not_possible` or `operation_state_conflict`; submit the request again instead). */
            can_retry: boolean;
            /** @description Once completed: the asset and where its bytes are served. */
            result: components["schemas"]["PublishAssetResult"] | null;
        };
        PublishAssetResult: {
            unit_id: string;
            /** @description null: a trunk asset (worktree assets arrive with worktrees). */
            worktree_id: string | null;
            /**
             * @description The type declared at upload (its `Content-Type`), served as `Content-Type`.
             * @example image/png
             */
            media_type: string;
            /** @description What the server detected from the bytes (HTML, SVG, XML or script in either type: always served as an attachment). */
            detected_media_type: string;
            size: number;
            sha256: string;
            /**
             * @description The same-origin path of the bytes: the trunk gateway, or the worktree's for a worktree asset.
             * @example /api/assets/0f8fad5bd9cb469fa16570867728950e/content
             */
            content_url: string;
            asset_id: string;
        };
        /**
         * @description Who deleted the trash: its owner or a space admin (``purge``), or the trash
         *     retention sweep (``retention``).
         * @enum {string}
         */
        PurgeReason: "purge" | "retention";
        /** @description ``purge_trash``: a trash batch deleted permanently. */
        PurgeTrashOperation: {
            /** @enum {unknown} */
            kind: "purge_trash";
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            status: components["schemas"]["OperationStatus"];
            /** @description The status is completed or failed. */
            done: boolean;
            attempts: number;
            max_attempts: number;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            updated_at: string;
            completed_at: string | null;
            /** @description When the next attempt is due (after a retryable failure). */
            next_attempt_at: string | null;
            /** @description Why it failed (status failed), or the last retryable failure. */
            error: components["schemas"]["OperationError"] | null;
            /** @description `POST /api/operations/{id}/retry` can reopen it: it failed, and its kind's failure did not dispose of its input (otherwise the retry answers 409 `retry_not_possible` or `operation_state_conflict`; submit the request again instead). */
            can_retry: boolean;
            /** @description Once completed: what was deleted. */
            result: components["schemas"]["PurgeTrashResult"] | null;
        };
        PurgeTrashResult: {
            batch_id: string;
            nodes_deleted: number;
            resources_deleted: number;
            objects_queued: number;
            batches_deleted: number;
            nested_batch_ids: string[];
        };
        PutGrantByNameRequest: {
            /** @description The user's name, any case (404 `user_not_found` when no user has it). */
            username: string;
            role: components["schemas"]["ShareRole"];
        };
        PutGrantRequest: {
            role: components["schemas"]["ShareRole"];
        };
        PutMemberByNameRequest: {
            /** @description The user's name, any case (404 `user_not_found` when no user has it). */
            username: string;
            role: components["schemas"]["MemberRole"];
        };
        PutMemberRequest: {
            role: components["schemas"]["MemberRole"];
        };
        /**
         * @description Queue lag: operations due now (pending and due, or running with an expired lease)
         *     and the age of the oldest of them (since it became due).
         */
        QueuePanel: {
            due: number;
            oldest_due_at: string | null;
            lag_seconds: number;
            running: number;
            expired_leases: number;
            /** @description Each count stops here: a count equal to it means at least that many. */
            count_cap: number;
        };
        /**
         * @description Who views a permission object (``content_permission_objects.read_scope``).
         * @enum {string}
         */
        ReadScope: "all_collaborators" | "specified";
        /** @description ``/readyz`` when ready: each check is ``ok`` or ``error: <type>``. */
        Readiness: {
            status: components["schemas"]["HealthStatus"];
            checks: {
                [key: string]: string;
            };
        };
        RebaseRequest: {
            draft_revision: number;
            /** @default [] */
            resolutions?: components["schemas"]["Resolution"][];
        };
        RebaseResult: {
            draft_revision: number;
            base_revision: number;
        };
        RecentItem: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            resource_id: string;
            kind: components["schemas"]["ResourceKind"];
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            node_id: string;
            name: string;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            space_id: string;
            parent_id: string | null;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            opened_at: string;
        };
        RecentList: {
            items: components["schemas"]["RecentItem"][];
            next_cursor: string | null;
        };
        RecoveryCodes: {
            /**
             * @description Ten one-time codes, shown only in this answer; any earlier set no longer works.
             * @example [
             *       "abcd-efgh-ijkl-mnop",
             *       "abcd-efgh-ijkl-mnop",
             *       "abcd-efgh-ijkl-mnop",
             *       "abcd-efgh-ijkl-mnop",
             *       "abcd-efgh-ijkl-mnop",
             *       "abcd-efgh-ijkl-mnop",
             *       "abcd-efgh-ijkl-mnop",
             *       "abcd-efgh-ijkl-mnop",
             *       "abcd-efgh-ijkl-mnop",
             *       "abcd-efgh-ijkl-mnop"
             *     ]
             */
            codes: string[];
        };
        /**
         * @description ``POST /api/me/recovery-codes``: the password re-authenticates; without it, only a
         *     login session younger than ``WHARF_ACCOUNT_REAUTH_SECONDS`` may make codes.
         */
        RecoveryCodesRequest: {
            /** @default null */
            current_password?: string | null;
        };
        RegisterRequest: {
            /** @example alice */
            username: string;
            password: string;
        };
        RegisterResult: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            username: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            personal_space_id: string;
        };
        /** @description ``replace_blob_content``: a blob's bytes replaced. */
        ReplaceBlobContentOperation: {
            /** @enum {unknown} */
            kind: "replace_blob_content";
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            status: components["schemas"]["OperationStatus"];
            /** @description The status is completed or failed. */
            done: boolean;
            attempts: number;
            max_attempts: number;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            updated_at: string;
            completed_at: string | null;
            /** @description When the next attempt is due (after a retryable failure). */
            next_attempt_at: string | null;
            /** @description Why it failed (status failed), or the last retryable failure. */
            error: components["schemas"]["OperationError"] | null;
            /** @description `POST /api/operations/{id}/retry` can reopen it: it failed, and its kind's failure did not dispose of its input (otherwise the retry answers 409 `retry_not_possible` or `operation_state_conflict`; submit the request again instead). */
            can_retry: boolean;
            /** @description Once completed: the blob's new ETag. */
            result: components["schemas"]["ReplaceBlobContentResult"] | null;
        };
        ReplaceBlobContentResult: {
            resource_id: string;
            etag: string;
        };
        Resolution: {
            /** @description A conflict's JSON Pointer. */
            path: string;
            take: components["schemas"]["Take"];
        };
        Resource: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            kind: components["schemas"]["ResourceKind"];
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            node_id: string;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            created_by: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            unit: components["schemas"]["ResourceUnit"] | null;
            node: components["schemas"]["Node"];
        };
        /** @enum {string} */
        ResourceKind: "blob" | "unit";
        ResourceUnit: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            unit_id: string;
            unit_type: components["schemas"]["UnitType"];
        };
        RestoreRequest: {
            /** @description The revision to restore. */
            revision: number;
            /** @description The unit's current revision (compare-and-set: 409 `revision_conflict` if stale). */
            base_revision: number;
        };
        RestoreResult: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            space_id: string;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            root_node_id: string;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            created_by: string;
            node_count: number;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            restored_nodes: number;
        };
        RevisionDetail: {
            /** @description The revision (grouped: the newest). */
            revision: number;
            /** @description Who wrote it (a deleted account: the `~deleted` placeholder); null: nobody's. */
            author: components["schemas"]["api.schemas.issues.UserRef"] | null;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            origin: components["schemas"]["Origin"];
            /** @description RFC 6902 operations (grouped: all). */
            op_count: number;
            /** @description Bytes of the changeset as compact JSON (grouped: all of them). */
            size: number;
            /** @description The oldest revision of the entry (ungrouped: `revision`). */
            first_revision: number;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            first_created_at: string;
            /** @description Revisions in the entry (ungrouped: 1). */
            count: number;
            /** @description The RFC 6902 operations that made this revision from the one before. */
            changes: Record<string, never>[];
        };
        RevisionEntry: {
            /** @description The revision (grouped: the newest). */
            revision: number;
            /** @description Who wrote it (a deleted account: the `~deleted` placeholder); null: nobody's. */
            author: components["schemas"]["api.schemas.issues.UserRef"] | null;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            origin: components["schemas"]["Origin"];
            /** @description RFC 6902 operations (grouped: all). */
            op_count: number;
            /** @description Bytes of the changeset as compact JSON (grouped: all of them). */
            size: number;
            /** @description The oldest revision of the entry (ungrouped: `revision`). */
            first_revision: number;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            first_created_at: string;
            /** @description Revisions in the entry (ungrouped: 1). */
            count: number;
        };
        RevisionList: {
            items: components["schemas"]["RevisionEntry"][];
            next_cursor: string | null;
            /**
             * @description Revisions up to this one were pruned by retention (WHARF_HISTORY_RETENTION): the document after it is the oldest that reads; null: the whole history is here.
             * @default null
             */
            pruned_through?: number | null;
        };
        RevisionSnapshot: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            unit_id: string;
            revision: number;
            /** @description The document as it was after this revision. */
            snapshot: Record<string, never>;
        };
        /**
         * @description The effective role of a principal on a space or node, weakest first.
         * @enum {string}
         */
        Role: "admin" | "editor" | "owner" | "viewer";
        SearchItem: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            node_id: string;
            name: string;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            space_id: string;
            parent_id: string | null;
            /** @description None for a folder. */
            resource_id: string | null;
            /** @description None for a folder. */
            kind: components["schemas"]["ResourceKind"] | null;
            /**
             * @description `kind=name`: the name with its first match between « and ». `kind=content`: a passage of the unit's text around its best match, the words found between « and ».
             * @example Quarterly «plan»
             */
            snippet: string;
            /** @description `kind=name`: `[start, end)` of that match in the name, in characters (None when it cannot be placed exactly); None for `kind=content`. */
            match: number[] | null;
        };
        SearchList: {
            items: components["schemas"]["SearchItem"][];
            next_cursor: string | null;
        };
        /**
         * @description The role a direct grant or link sharing gives on a node.
         * @enum {string}
         */
        ShareRole: "editor" | "viewer";
        SolvedRequest: {
            solved: boolean;
            /** @description The generation the client read: the write applies only if it is still the current one (else 409 `comment_conflict`). */
            generation: number;
        };
        Space: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            type: components["schemas"]["SpaceType"];
            name: string;
            description: string;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            owner_id: string;
            public_read: boolean;
            /** @description The caller's role (null: none). */
            role: components["schemas"]["Role"] | null;
            /** @description Nobody writes in the space: it is archived, it is being deleted, or its owner's account was deleted and it has no owner yet (writes answer 403 `space_read_only`). */
            read_only: boolean;
            /** @description Archived by its owner or an admin (`POST /api/spaces/{id}/unarchive` ends it). */
            archived: boolean;
            archived_at: string | null;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            updated_at: string;
        };
        SpaceList: {
            items: components["schemas"]["Space"][];
            next_cursor: string | null;
        };
        /** @enum {string} */
        SpaceType: "personal" | "team";
        StarItem: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            resource_id: string;
            kind: components["schemas"]["ResourceKind"];
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            node_id: string;
            name: string;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            space_id: string;
            parent_id: string | null;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            starred_at: string;
        };
        StarList: {
            items: components["schemas"]["StarItem"][];
            next_cursor: string | null;
        };
        /** @description Operations by status and kind: open ones exactly, finished ones over the window. */
        StatusPanel: {
            open: components["schemas"]["KindCount"][];
            finished: components["schemas"]["KindCount"][];
            finished_window_seconds: number;
            /** @description More finished rows than the scan cap: `finished` counts the newest. */
            finished_capped: boolean;
            /** @description More open rows than `open_cap`: `open` counts the oldest `open_cap`. */
            open_capped: boolean;
            open_cap: number;
        };
        /**
         * @description The least right each action needs: `reader` (view the object), `editor` (edit
         *     it), `owner` (manage it).
         */
        Strategies: {
            /** @default reader */
            copy?: components["schemas"]["StrategyLevel"];
            /** @default editor */
            print?: components["schemas"]["StrategyLevel"];
            /** @default editor */
            export?: components["schemas"]["StrategyLevel"];
        };
        StrategiesPatch: {
            copy?: components["schemas"]["StrategyLevel"];
            print?: components["schemas"]["StrategyLevel"];
            export?: components["schemas"]["StrategyLevel"];
        };
        /**
         * @description The least right an action (copy, print, export) on a permission object needs.
         * @enum {string}
         */
        StrategyLevel: "editor" | "owner" | "reader";
        SweepView: {
            schedule: string;
            spec: string;
            last_tick: string | null;
            last_status: string | null;
            next_tick: string | null;
            /** @description Skipped ticks over the last 24 h. */
            skipped: number;
            last_skipped_at: string | null;
        };
        /** @enum {string} */
        Take: "draft" | "trunk";
        TeamSpaceRef: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            name: string;
        };
        /** @description Finished per minute over the last hour (oldest minute first) and the failure rate. */
        ThroughputPanel: {
            window_seconds: number;
            minutes: components["schemas"]["Minute"][];
            completed: number;
            failed: number;
            /** @description failed / (completed + failed) over the window; null when none. */
            failure_rate: number | null;
            capped: boolean;
        };
        Timeline: {
            items: (components["schemas"]["TimelineComment"] | components["schemas"]["TimelineEvent"])[];
            next_cursor: string | null;
        };
        TimelineComment: {
            /** @enum {unknown} */
            type: "comment";
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            author: components["schemas"]["api.schemas.issues.UserRef"] | null;
            body: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            updated_at: string;
        };
        TimelineEvent: {
            /** @enum {unknown} */
            type: "event";
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            kind: components["schemas"]["IssueEventKind"];
            /** @description null: the system. */
            actor: components["schemas"]["api.schemas.issues.UserRef"] | null;
            payload: components["schemas"]["EventPayload"];
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
        };
        /** @enum {string} */
        TokenScope: "read" | "write";
        /**
         * @description The new owner: a current member, named by ``user_id`` or ``username`` (one of
         *     them).
         */
        TransferSpaceRequest: {
            /** @default null */
            user_id?: string | null;
            /** @default null */
            username?: string | null;
        };
        TrashBatch: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            space_id: string;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            root_node_id: string;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            created_by: string;
            node_count: number;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
        };
        TrashBatchList: {
            items: components["schemas"]["TrashBatchListItem"][];
            next_cursor: string | null;
        };
        /**
         * @description In the listing: the batch enclosing this one (its root lies below a node trashed
         *     later; restore that first) and how many batches sit directly inside it (purging this
         *     batch deletes them too).
         */
        TrashBatchListItem: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            space_id: string;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            root_node_id: string;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            created_by: string;
            node_count: number;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            enclosing_batch_id: string | null;
            nested_batches: number;
        };
        Unit: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            unit_id: string;
            unit_type: components["schemas"]["UnitType"];
            revision: number;
            snapshot: Record<string, never>;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            resource_id: string;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            node_id: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            updated_at: string;
            /** @description `GET /api/units/{unit_id}` of a unit with protected ranges: each one and the caller's rights on it (absent when it has none). */
            protected_ranges?: components["schemas"]["ProtectedRange"][];
        };
        UnitComment: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            /** @description Its thread: the thread's first comment's id. */
            thread_id: string;
            /** @description `~deleted` once the author's account was deleted. */
            author: components["schemas"]["api.schemas.issues.UserRef"];
            body: string;
            /** @description Bumped by every edit. */
            generation: number;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            updated_at: string;
        };
        /** @description A node's unit resource. */
        UnitRef: {
            /** @enum {unknown} */
            kind: "unit";
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            unit_id: string;
            unit_type: components["schemas"]["UnitType"];
        };
        /** @enum {string} */
        UnitType: "base" | "board" | "doc" | "sheet" | "slide";
        UpdateIssueRequest: {
            /** @example Totals row is off by one */
            title?: string;
            /** @description Markdown (at most 65,536 characters). */
            body?: string;
        };
        UpdateLabelRequest: {
            /** @example bug */
            name?: string;
            color?: components["schemas"]["LabelColor"];
        };
        UpdateNodeRequest: {
            /** @example Q3 plans */
            name?: string;
            parent_id?: string | null;
        };
        UpdatePermissionObjectRequest: {
            /** @example Q3 totals */
            name?: string;
            /**
             * @description What the object is in the editor's terms (free text: `range`, `worksheet`, ...).
             * @example range
             */
            object_type?: string;
            /**
             * @description An RFC 6901 JSON Pointer inside the document's body (`/body...`): the prefix protected (whole reference tokens; `~0`/`~1` compared decoded).
             * @example /body/sheets/s1/cellData/2
             */
            target?: string;
            read_scope?: components["schemas"]["ReadScope"];
            edit_scope?: components["schemas"]["EditScope"];
            strategies?: components["schemas"]["StrategiesPatch"];
        };
        UpdateSpaceRequest: {
            /** @example Design team */
            name?: string;
            /**
             * @description Free text; line breaks allowed; trimmed.
             * @example Plans and designs of the design team.
             */
            description?: string;
            public_read?: boolean;
        };
        UpdateWorktreeRequest: {
            /**
             * @description 1-255 characters, no control characters or `/`.
             * @example Q3 plan review
             */
            name?: string;
            summary?: string | null;
            /** @description Team worktrees only (400 for a user worktree). */
            visibility?: components["schemas"]["WorktreeVisibility"];
        };
        UpdateWorktreeUnitRequest: {
            /**
             * @description 1-255 characters, no control characters or `/`.
             * @example Q3 plan review
             */
            name?: string;
            target?: components["schemas"]["WorktreeTargetRequest"];
        };
        UploadResult: {
            size: number;
            /** @description SHA-256 of the bytes, lowercase hex. */
            sha256: string;
            /**
             * @description Detected by the server from the bytes.
             * @example text/csv
             */
            mime_type: string;
        };
        UploadSession: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            state: components["schemas"]["UploadState"];
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            space_id: string;
            parent_id: string | null;
            filename: string;
            size: number;
            received_size: number | null;
            sha256: string | null;
            mime_type: string | null;
            /** @description The create_blob_resource operation, once completing, or the import_file operation that took it (`importing`, `imported`). */
            operation_id: string | null;
            /** @description Why it went back to waiting_for_upload (upload_interrupted) or failed (verification_failed, permission_revoked; after an import from it, the import's error code). */
            error_code: string | null;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            node_id: string;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            resource_id: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            updated_at: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            expires_at: string;
        };
        /**
         * @description A blob upload session (``blob_upload_sessions.state``). ``verifying`` and
         *     ``completed``: consumed by its own publish (``create_blob_resource``); ``importing``
         *     and ``imported``: consumed by an import (``import_file`` reads the bytes; once it is
         *     done, completed or failed, the object is queued for deletion: ``imported``, or
         *     ``failed`` with the import's error code).
         * @enum {string}
         */
        UploadState: "aborted" | "completed" | "expired" | "failed" | "imported" | "importing" | "uploaded" | "verifying" | "waiting_for_upload";
        User: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            username: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
        };
        UserRefList: {
            /** @description The one user with that name, or none. */
            items: components["schemas"]["api.schemas.identity.UserRef"][];
        };
        UserSnapshot: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            username: string;
        };
        Webhook: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            url: string;
            events: components["schemas"]["WebhookEvent"][];
            enabled: boolean;
            disabled_reason: string | null;
            disabled_at: string | null;
            consecutive_failures: number;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
        };
        WebhookCreated: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            url: string;
            events: components["schemas"]["WebhookEvent"][];
            enabled: boolean;
            disabled_reason: string | null;
            disabled_at: string | null;
            consecutive_failures: number;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            /** @description The signing secret (`whsec_…`); shown only in this answer. */
            secret: string;
        };
        WebhookDelivery: {
            /** @description Also the `webhook-id` header. */
            id: string;
            type: components["schemas"]["WebhookEvent"];
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            operation_id: string;
            status: components["schemas"]["DeliveryStatus"];
            attempts: number;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            last_attempt_at: string | null;
            last_status_code: number | null;
            last_error: string | null;
            next_attempt_at: string | null;
        };
        WebhookDeliveryList: {
            items: components["schemas"]["WebhookDelivery"][];
            next_cursor: string | null;
        };
        /** @enum {string} */
        WebhookEvent: "operation.completed" | "operation.failed";
        WebhookList: {
            items: components["schemas"]["Webhook"][];
        };
        /**
         * @description A worktree's summary. A `user` worktree is its creator's alone (always `private`);
         *     a `team` worktree belongs to a team space, seen by the creator and the space's
         *     owner and admins, and by every member when its visibility is `space`.
         */
        Worktree: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            kind: components["schemas"]["WorktreeKind"];
            name: string;
            summary: string | null;
            /** @description The team space (null: a user worktree). */
            team_space: components["schemas"]["TeamSpaceRef"] | null;
            visibility: components["schemas"]["WorktreeVisibility"];
            /** @description `draft` (editable) → `ready` (frozen for review) → `merging` → `merged`; `draft|ready` → `discarding` → `discarded`. */
            state: components["schemas"]["WorktreeState"];
            creator: components["schemas"]["api.schemas.worktrees.UserRef"];
            unit_count: number;
            /** @description The merge or discard under way (states `merging`, `discarding`). */
            busy_operation_id: string | null;
            last_merge_operation_id: string | null;
            /** @description When it was merged or discarded (null while active). */
            processed_at: string | null;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            updated_at: string;
            capabilities: components["schemas"]["WorktreeCapabilities"];
        };
        /**
         * @description What the caller may do with the worktree now (its state, their role and every
         *     unit's own permission considered); the API's ``WorktreeCapabilities``.
         */
        WorktreeCapabilities: {
            /** @description See its units, drafts and conflicts. */
            review: boolean;
            edit_draft: boolean;
            add_unit: boolean;
            change_visibility: boolean;
            mark_ready: boolean;
            reopen: boolean;
            merge: boolean;
            discard: boolean;
        };
        /** @description The summary and the units (empty when the caller may not review them). */
        WorktreeDetail: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            kind: components["schemas"]["WorktreeKind"];
            name: string;
            summary: string | null;
            /** @description The team space (null: a user worktree). */
            team_space: components["schemas"]["TeamSpaceRef"] | null;
            visibility: components["schemas"]["WorktreeVisibility"];
            /** @description `draft` (editable) → `ready` (frozen for review) → `merging` → `merged`; `draft|ready` → `discarding` → `discarded`. */
            state: components["schemas"]["WorktreeState"];
            creator: components["schemas"]["api.schemas.worktrees.UserRef"];
            unit_count: number;
            /** @description The merge or discard under way (states `merging`, `discarding`). */
            busy_operation_id: string | null;
            last_merge_operation_id: string | null;
            /** @description When it was merged or discarded (null while active). */
            processed_at: string | null;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            updated_at: string;
            capabilities: components["schemas"]["WorktreeCapabilities"];
            units: components["schemas"]["WorktreeUnit"][];
        };
        /**
         * @description Something done to the worktree by someone else: the permanent delete of trash
         *     (by its owner or a space admin, or by the trash retention) took a unit out of it
         *     (`unit_purged`: its draft is gone) or deleted the folder a unit new in it was to be
         *     created in (`target_purged`: the merge answers `activation_blocked` for it;
         *     activate it elsewhere).
         */
        WorktreeEvent: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            kind: components["schemas"]["WorktreeEventKind"];
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            unit_id: string;
            /** @description The deleted resource (`unit_purged`). */
            resource_id: string | null;
            /** @description The `purge_trash` operation. */
            operation_id: string | null;
            /** @description `purge`: the trash's owner or a space admin; `retention`: WHARF_TRASH_RETENTION. */
            reason: components["schemas"]["PurgeReason"];
            /**
             * Format: date-time
             * @example 2026-01-31T12:00:00.000000Z
             */
            at: string;
        };
        /**
         * @description What a permanent delete of trash did to a worktree it did not wait for.
         * @enum {string}
         */
        WorktreeEventKind: "target_purged" | "unit_purged";
        WorktreeEventList: {
            items: components["schemas"]["WorktreeEvent"][];
            next_cursor: string | null;
        };
        /**
         * @description A user worktree is private to its creator; a team worktree belongs to a team space.
         * @enum {string}
         */
        WorktreeKind: "team" | "user";
        WorktreeList: {
            items: components["schemas"]["Worktree"][];
            next_cursor: string | null;
        };
        /**
         * @description ``active``: not merged or discarded yet; ``processed``: merged or discarded.
         * @enum {string}
         */
        WorktreeScope: "active" | "processed";
        /**
         * @description ``draft`` → ``ready`` → ``merging`` → ``merged`` (or back to ``draft`` after a
         *     partial merge); ``draft|ready`` → ``discarding`` → ``discarded``.
         * @enum {string}
         */
        WorktreeState: "discarded" | "discarding" | "draft" | "merged" | "merging" | "ready";
        WorktreeTarget: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            space_id: string;
            parent_id: string | null;
        };
        /** @description Where a unit new in the worktree gets its node when the worktree is merged. */
        WorktreeTargetRequest: {
            /** @description An id (unknown ids are 404). */
            space_id: string;
            /**
             * @description The folder (null: the space's root).
             * @default null
             */
            parent_id?: string | null;
        };
        /** @description A unit in a worktree: a trunk unit's draft, or a unit new in the worktree. */
        WorktreeUnit: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            unit_id: string;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            resource_id: string;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            node_id: string;
            source: components["schemas"]["WorktreeUnitSource"];
            unit_type: components["schemas"]["UnitType"];
            name: string;
            target: components["schemas"]["WorktreeTarget"] | null;
            base_revision: number;
            draft_revision: number;
            /** @enum {string} */
            change: "added" | "modified" | "unchanged";
            trunk_revision: number | null;
            trunk_moved: boolean;
            merge_state: components["schemas"]["MergeState"];
            conflict_count: number;
            /** @enum {string} */
            activation: "not_applicable" | "waiting" | "activated" | "discarded" | "blocked";
        };
        /** @description A unit in a worktree and its draft's document (the draft head). */
        WorktreeUnitDetail: {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            unit_id: string;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            resource_id: string;
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            node_id: string;
            source: components["schemas"]["WorktreeUnitSource"];
            unit_type: components["schemas"]["UnitType"];
            name: string;
            target: components["schemas"]["WorktreeTarget"] | null;
            base_revision: number;
            draft_revision: number;
            /** @enum {string} */
            change: "added" | "modified" | "unchanged";
            trunk_revision: number | null;
            trunk_moved: boolean;
            merge_state: components["schemas"]["MergeState"];
            conflict_count: number;
            /** @enum {string} */
            activation: "not_applicable" | "waiting" | "activated" | "discarded" | "blocked";
            snapshot: Record<string, never>;
        };
        /**
         * @description ``trunk``: a copy of an existing unit; ``worktree``: a unit new in the worktree,
         *     created in trunk (with its node) when the worktree is merged.
         * @enum {string}
         */
        WorktreeUnitSource: "trunk" | "worktree";
        /** @enum {string} */
        WorktreeVisibility: "private" | "space";
        "api.schemas.identity.UserRef": {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            username: string;
        };
        "api.schemas.issues.UserRef": {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            username: string;
        };
        "api.schemas.worktrees.UserRef": {
            /**
             * @description An id: 32 lowercase hex digits.
             * @example 0f8fad5bd9cb469fa16570867728950e
             */
            id: string;
            username: string;
        };
    };
    responses: {
        /** @description The request is malformed or fails validation (`malformed_json`, `validation_failed`, `invalid_cursor`, ...). */
        BadRequest: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description No valid credentials (`unauthenticated`, `invalid_token`, ...). */
        Unauthenticated: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description Not allowed (`forbidden`, `insufficient_scope`, `cross_origin`, `account_disabled`: an operator disabled the account, ...). */
        Forbidden: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description No such target, or the caller may not see it. */
        NotFound: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description The request conflicts with the current state. */
        Conflict: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description It existed, and retention deleted it (`draft_purged`). */
        Gone: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description Send `Content-Length`. */
        LengthRequired: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description A precondition (`If-Match`) did not hold. */
        PreconditionFailed: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description The body is larger than the configured limit. */
        PayloadTooLarge: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description Send `application/json`. */
        UnsupportedMediaType: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description The range is outside the content. */
        RangeNotSatisfiable: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description Send `If-Match`. */
        PreconditionRequired: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description Too many attempts (`rate_limited`), or a quota is used up (`quota_exceeded`: `details` name the `quota`, its `limit` and the `current` count); retry after `Retry-After` seconds. */
        TooManyRequests: {
            headers: {
                "Retry-After": components["headers"]["Retry-After"];
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description A dependency is busy or down; retry after `Retry-After`. */
        ServiceUnavailable: {
            headers: {
                "Retry-After": components["headers"]["Retry-After"];
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
    };
    parameters: {
        /** @description Text the title contains (case-insensitive). */
        IssueQuery_q: string;
        /** @description `open` (default), `closed` or `all`. */
        IssueQuery_state: string;
        /** @description `name` (the default): node names; `content`: the text of units. */
        SearchQuery_kind: "content" | "name";
        /** @description Only user or only team worktrees. */
        WorktreeListQuery_kind: components["schemas"]["WorktreeKind"];
        /** @description An action, or a prefix of actions ending in a dot. */
        actionQuery: string;
        /** @description An id (unknown ids are 404). */
        actor_idQuery: string;
        /** @description The revision the client holds: changesets of later revisions are listed. */
        afterQuery: number;
        /** @description An id (32 lowercase hex digits); unknown ids are 404. */
        asset_id: string;
        /** @description A user id: issues assigned to them. */
        assigneeQuery: string;
        /** @description A user id: issues they opened. */
        authorQuery: string;
        /** @description An id (32 lowercase hex digits); unknown ids are 404. */
        batch_id: string;
        /** @description The authorization code. */
        codeQuery: string;
        /** @description An id (32 lowercase hex digits); unknown ids are 404. */
        comment_id: string;
        /** @description `next_cursor` of the page before. */
        cursor: string;
        /** @description The provider's error code (the user refused, ...). */
        errorQuery: string;
        /** @description An id (32 lowercase hex digits); unknown ids are 404. */
        export_id: string;
        /** @description The original file name (for `Content-Disposition`); default `asset`. No control characters or `/`. */
        filenameQuery: string;
        /** @description `session`: consecutive edits by one author within WHARF_HISTORY_SESSION_GAP seconds are one entry (`first_revision`..`revision`, `count`). */
        groupQuery: "session";
        /** @description Only operations of this kind (a kind with no operations gives an empty page). */
        kindQuery: "activate_worktree_resource" | "add_worktree_unit" | "create_blob_resource" | "create_resource" | "create_worktree" | "create_worktree_unit" | "delete_account" | "delete_space" | "discard_worktree" | "export_takeout" | "export_unit" | "import_file" | "merge_worktree" | "publish_asset" | "purge_trash" | "replace_blob_content";
        /** @description A label name (case-insensitive). */
        labelQuery: string;
        /** @description An id (32 lowercase hex digits); unknown ids are 404. */
        label_id: string;
        /** @description Page size. */
        limit: number;
        /** @description Where to go after signing in: a path of this origin (`/…`); anything else is `/`. */
        nextQuery: string;
        /** @description An id (32 lowercase hex digits); unknown ids are 404. */
        node_id: string;
        /** @description An issue's `#N` in its space (digits); an unknown number is 404. */
        number: string;
        /** @description An id (32 lowercase hex digits); unknown ids are 404. */
        object_id: string;
        /** @description An id (32 lowercase hex digits); unknown ids are 404. */
        operation_id: string;
        /** @description A sign-in provider: `oidc` (OpenID Connect) or `github`; one not configured is 404. */
        provider: string;
        /** @description What to find, case-insensitive. Names: 3 characters or more match anywhere in a name, 1 or 2 match name prefixes only. Content: the words (letters and digits) a unit's text must all hold. */
        qQuery: string;
        /** @description An id (32 lowercase hex digits); unknown ids are 404. */
        resource_id: string;
        /** @description An id (32 lowercase hex digits); unknown ids are 404. */
        revision: string;
        /** @description `active` (default) or `processed` (merged or discarded). */
        scopeQuery: components["schemas"]["WorktreeScope"];
        /** @description An id (32 lowercase hex digits); unknown ids are 404. */
        session_id: string;
        /** @description Rows at or after this instant (RFC 3339; UTC when no offset). */
        sinceQuery: string;
        /** @description `true`: only solved threads; `false`: only open ones; absent: all. */
        solvedQuery: string;
        /** @description An id (32 lowercase hex digits); unknown ids are 404. */
        space_id: string;
        /** @description An id (unknown ids are 404). */
        space_idQuery: string;
        /** @description The request's `state`. */
        stateQuery: string;
        statusQuery: components["schemas"]["OperationStatus"];
        /** @description Only the worktrees of this team space. */
        team_space_idQuery: string;
        /** @description An id (32 lowercase hex digits); unknown ids are 404. */
        thread_id: string;
        /** @description An id (32 lowercase hex digits); unknown ids are 404. */
        token_id: string;
        /** @description An id (32 lowercase hex digits); unknown ids are 404. */
        unit_id: string;
        /** @description Rows before this instant. */
        untilQuery: string;
        /** @description An id (32 lowercase hex digits); unknown ids are 404. */
        user_code: string;
        /** @description An id (32 lowercase hex digits); unknown ids are 404. */
        user_id: string;
        /** @description The exact username, any case. */
        usernameQuery: string;
        /** @description Long-poll: answer as soon as the operation is done, or after this many seconds. Up to 3600 is accepted; the server waits at most 60 s (a larger value counts as 60). 0 or absent: answer at once. */
        waitQuery: number;
        /** @description An id (32 lowercase hex digits); unknown ids are 404. */
        webhook_id: string;
        /** @description An id (32 lowercase hex digits); unknown ids are 404. */
        worktree_id: string;
        /**
         * @description Repeating a request with the same key (and body) answers with the same operation instead of starting another one.
         * @example create-q3-plans-2026-01-31
         */
        "Idempotency-Key": string;
        /**
         * @description `wait=<seconds>` (RFC 7240): wait up to that long (at most 60 s) for the operation to be done and answer 200 with it (and `Preference-Applied`) instead of 202 at once: one request instead of a POST and a long-poll. Still 202 if it is not done by then, if the server's long-poll slots are taken, or if the operation could not be read while waiting (the submission stands either way). On a changeset (`POST /api/units/{unit_id}/changesets`), `return=minimal` leaves the document out of the answer. Other preferences, and a malformed one, are ignored.
         * @example wait=10
         */
        Prefer: string;
        /**
         * @description The current strong ETag (as sent in `ETag`); 412 if it changed.
         * @example "5d41402abc4b2a76b9719d911017c592"
         */
        "If-Match": string;
        /** @description ETags of the copy the client has (or `*`): 304 if one is current. */
        "If-None-Match": string;
        /**
         * @description One byte range (`bytes=0-99`, `bytes=100-`, `bytes=-100`): 206 with that part; a range beyond the end is 416. Several ranges or a malformed value: the whole content (200).
         * @example bytes=0-1023
         */
        Range: string;
        /** @description The SHA-256 of the body (64 hex digits): the upload fails 400 `checksum_mismatch` if the bytes differ, and a replay of the same Idempotency-Key naming other bytes is 409 `idempotency_key_reused`. */
        "Content-SHA256": string;
        /** @description Serve `Range` only if the ETag still matches (else the whole content). */
        "If-Range": string;
    };
    requestBodies: never;
    headers: {
        /** @description The URL of the created or tracked resource. */
        Location: string;
        /** @description Strong entity tag of the representation. */
        ETag: string;
        /** @description `wharf_session=<secret>; HttpOnly; SameSite=Lax; Path=/` (login) or its removal (logout). */
        "Set-Cookie": string;
        /** @description Seconds to wait before trying again. */
        "Retry-After": string;
        /** @description `bytes`: single byte ranges are served (`Range`). */
        "Accept-Ranges": "bytes";
        /** @description `bytes <first>-<last>/<size>` of a 206, or `bytes *\/<size>` of a 416. */
        "Content-Range": string;
        /** @description `attachment; filename="<ASCII fallback>"; filename*=UTF-8''<percent-encoded name>` (RFC 6266). */
        "Content-Disposition": string;
        /** @description `wait=<seconds>` (the wait the server allowed: the request's, at most the server's limit): the request's `Prefer: wait` was honoured and the answer is the finished operation (RFC 7240). */
        "Preference-Applied": string;
        /** @description The request's id (the client's `X-Request-Id` when it is 1-128 of `[A-Za-z0-9._:-]`); logs carry it. */
        "X-Request-Id": string;
    };
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    listApiTokens: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApiTokenList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createApiToken: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "ci",
                 *       "scopes": [
                 *         "read"
                 *       ],
                 *       "expires_in_days": 30
                 *     }
                 */
                "application/json": components["schemas"]["CreateTokenRequest"];
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApiTokenCreated"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    revokeApiToken: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                token_id: components["parameters"]["token_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description revoked */
            204: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getAsset: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                asset_id: components["parameters"]["asset_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Asset"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteAsset: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                asset_id: components["parameters"]["asset_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted. */
            204: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getAssetContent: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description One byte range (`bytes=0-99`, `bytes=100-`, `bytes=-100`): 206 with that part; a range beyond the end is 416. Several ranges or a malformed value: the whole content (200).
                 * @example bytes=0-1023
                 */
                Range?: components["parameters"]["Range"];
                /** @description Serve `Range` only if the ETag still matches (else the whole content). */
                "If-Range"?: components["parameters"]["If-Range"];
                /** @description ETags of the copy the client has (or `*`): 304 if one is current. */
                "If-None-Match"?: components["parameters"]["If-None-Match"];
            };
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                asset_id: components["parameters"]["asset_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The bytes as an attachment. */
            200: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "Accept-Ranges": components["headers"]["Accept-Ranges"];
                    "Content-Disposition": components["headers"]["Content-Disposition"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/octet-stream": string;
                    "*/*": string;
                };
            };
            /** @description One byte range (`Range`). */
            206: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "Accept-Ranges": components["headers"]["Accept-Ranges"];
                    "Content-Disposition": components["headers"]["Content-Disposition"];
                    "Content-Range": components["headers"]["Content-Range"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/octet-stream": string;
                    "*/*": string;
                };
            };
            /** @description Not modified (`If-None-Match`). */
            304: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "Accept-Ranges": components["headers"]["Accept-Ranges"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            /** @description The range starts beyond the content. */
            416: {
                headers: {
                    "Content-Range": components["headers"]["Content-Range"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getAssetContentHead: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description One byte range (`bytes=0-99`, `bytes=100-`, `bytes=-100`): 206 with that part; a range beyond the end is 416. Several ranges or a malformed value: the whole content (200).
                 * @example bytes=0-1023
                 */
                Range?: components["parameters"]["Range"];
                /** @description Serve `Range` only if the ETag still matches (else the whole content). */
                "If-Range"?: components["parameters"]["If-Range"];
                /** @description ETags of the copy the client has (or `*`): 304 if one is current. */
                "If-None-Match"?: components["parameters"]["If-None-Match"];
            };
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                asset_id: components["parameters"]["asset_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The bytes as an attachment. */
            200: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "Accept-Ranges": components["headers"]["Accept-Ranges"];
                    "Content-Disposition": components["headers"]["Content-Disposition"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description One byte range (`Range`). */
            206: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "Accept-Ranges": components["headers"]["Accept-Ranges"];
                    "Content-Disposition": components["headers"]["Content-Disposition"];
                    "Content-Range": components["headers"]["Content-Range"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Not modified (`If-None-Match`). */
            304: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "Accept-Ranges": components["headers"]["Accept-Ranges"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            /** @description The range starts beyond the content. */
            416: {
                headers: {
                    "Content-Range": components["headers"]["Content-Range"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    finishExternalLogin: {
        parameters: {
            query?: {
                /** @description The request's `state`. */
                state?: components["parameters"]["stateQuery"];
                /** @description The authorization code. */
                code?: components["parameters"]["codeQuery"];
                /** @description The provider's error code (the user refused, ...). */
                error?: components["parameters"]["errorQuery"];
            };
            header?: never;
            path: {
                /** @description A sign-in provider: `oidc` (OpenID Connect) or `github`; one not configured is 404. */
                provider: components["parameters"]["provider"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description signed in or linked */
            302: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Set-Cookie": components["headers"]["Set-Cookie"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    startExternalLogin: {
        parameters: {
            query?: {
                /** @description Where to go after signing in: a path of this origin (`/…`); anything else is `/`. */
                next?: components["parameters"]["nextQuery"];
            };
            header?: never;
            path: {
                /** @description A sign-in provider: `oidc` (OpenID Connect) or `github`; one not configured is 404. */
                provider: components["parameters"]["provider"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description to the provider */
            302: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Set-Cookie": components["headers"]["Set-Cookie"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getBlobResource: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                resource_id: components["parameters"]["resource_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The metadata. */
            200: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BlobResource"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getBlobContent: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description One byte range (`bytes=0-99`, `bytes=100-`, `bytes=-100`): 206 with that part; a range beyond the end is 416. Several ranges or a malformed value: the whole content (200).
                 * @example bytes=0-1023
                 */
                Range?: components["parameters"]["Range"];
                /** @description Serve `Range` only if the ETag still matches (else the whole content). */
                "If-Range"?: components["parameters"]["If-Range"];
                /** @description ETags of the copy the client has (or `*`): 304 if one is current. */
                "If-None-Match"?: components["parameters"]["If-None-Match"];
            };
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                resource_id: components["parameters"]["resource_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The bytes. */
            200: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "Accept-Ranges": components["headers"]["Accept-Ranges"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/octet-stream": string;
                    "*/*": string;
                };
            };
            /** @description One byte range (`Range`). */
            206: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "Accept-Ranges": components["headers"]["Accept-Ranges"];
                    "Content-Range": components["headers"]["Content-Range"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/octet-stream": string;
                    "*/*": string;
                };
            };
            /** @description Not modified (`If-None-Match`). */
            304: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "Accept-Ranges": components["headers"]["Accept-Ranges"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            /** @description The range starts beyond the content. */
            416: {
                headers: {
                    "Content-Range": components["headers"]["Content-Range"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    replaceBlobContent: {
        parameters: {
            query?: never;
            header: {
                /**
                 * @description Repeating a request with the same key (and body) answers with the same operation instead of starting another one.
                 * @example create-q3-plans-2026-01-31
                 */
                "Idempotency-Key": components["parameters"]["Idempotency-Key"];
                /**
                 * @description `wait=<seconds>` (RFC 7240): wait up to that long (at most 60 s) for the operation to be done and answer 200 with it (and `Preference-Applied`) instead of 202 at once: one request instead of a POST and a long-poll. Still 202 if it is not done by then, if the server's long-poll slots are taken, or if the operation could not be read while waiting (the submission stands either way). On a changeset (`POST /api/units/{unit_id}/changesets`), `return=minimal` leaves the document out of the answer. Other preferences, and a malformed one, are ignored.
                 * @example wait=10
                 */
                Prefer?: components["parameters"]["Prefer"];
                /**
                 * @description The current strong ETag (as sent in `ETag`); 412 if it changed.
                 * @example "5d41402abc4b2a76b9719d911017c592"
                 */
                "If-Match": components["parameters"]["If-Match"];
            };
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                resource_id: components["parameters"]["resource_id"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/octet-stream": string;
            };
        };
        responses: {
            /** @description The operation is done: it finished within the request's `Prefer: wait=N`, or this is a replay (same Idempotency-Key and request) of one that is done. */
            200: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActivateWorktreeResourceOperation"] | components["schemas"]["AddWorktreeUnitOperation"] | components["schemas"]["CreateBlobResourceOperation"] | components["schemas"]["CreateResourceOperation"] | components["schemas"]["CreateWorktreeOperation"] | components["schemas"]["CreateWorktreeUnitOperation"] | components["schemas"]["DeleteAccountOperation"] | components["schemas"]["DeleteSpaceOperation"] | components["schemas"]["DiscardWorktreeOperation"] | components["schemas"]["ExportTakeoutOperation"] | components["schemas"]["ExportUnitOperation"] | components["schemas"]["ImportFileOperation"] | components["schemas"]["MergeWorktreeOperation"] | components["schemas"]["PublishAssetOperation"] | components["schemas"]["PurgeTrashOperation"] | components["schemas"]["ReplaceBlobContentOperation"];
                };
            };
            /** @description Accepted (or a replay while not done). */
            202: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActivateWorktreeResourceOperation"] | components["schemas"]["AddWorktreeUnitOperation"] | components["schemas"]["CreateBlobResourceOperation"] | components["schemas"]["CreateResourceOperation"] | components["schemas"]["CreateWorktreeOperation"] | components["schemas"]["CreateWorktreeUnitOperation"] | components["schemas"]["DeleteAccountOperation"] | components["schemas"]["DeleteSpaceOperation"] | components["schemas"]["DiscardWorktreeOperation"] | components["schemas"]["ExportTakeoutOperation"] | components["schemas"]["ExportUnitOperation"] | components["schemas"]["ImportFileOperation"] | components["schemas"]["MergeWorktreeOperation"] | components["schemas"]["PublishAssetOperation"] | components["schemas"]["PurgeTrashOperation"] | components["schemas"]["ReplaceBlobContentOperation"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            411: components["responses"]["LengthRequired"];
            412: components["responses"]["PreconditionFailed"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            428: components["responses"]["PreconditionRequired"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getBlobContentHead: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description One byte range (`bytes=0-99`, `bytes=100-`, `bytes=-100`): 206 with that part; a range beyond the end is 416. Several ranges or a malformed value: the whole content (200).
                 * @example bytes=0-1023
                 */
                Range?: components["parameters"]["Range"];
                /** @description Serve `Range` only if the ETag still matches (else the whole content). */
                "If-Range"?: components["parameters"]["If-Range"];
                /** @description ETags of the copy the client has (or `*`): 304 if one is current. */
                "If-None-Match"?: components["parameters"]["If-None-Match"];
            };
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                resource_id: components["parameters"]["resource_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The bytes. */
            200: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "Accept-Ranges": components["headers"]["Accept-Ranges"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description One byte range (`Range`). */
            206: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "Accept-Ranges": components["headers"]["Accept-Ranges"];
                    "Content-Range": components["headers"]["Content-Range"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Not modified (`If-None-Match`). */
            304: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "Accept-Ranges": components["headers"]["Accept-Ranges"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            /** @description The range starts beyond the content. */
            416: {
                headers: {
                    "Content-Range": components["headers"]["Content-Range"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    downloadBlob: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description One byte range (`bytes=0-99`, `bytes=100-`, `bytes=-100`): 206 with that part; a range beyond the end is 416. Several ranges or a malformed value: the whole content (200).
                 * @example bytes=0-1023
                 */
                Range?: components["parameters"]["Range"];
                /** @description Serve `Range` only if the ETag still matches (else the whole content). */
                "If-Range"?: components["parameters"]["If-Range"];
                /** @description ETags of the copy the client has (or `*`): 304 if one is current. */
                "If-None-Match"?: components["parameters"]["If-None-Match"];
            };
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                resource_id: components["parameters"]["resource_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The bytes as an attachment. */
            200: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "Accept-Ranges": components["headers"]["Accept-Ranges"];
                    "Content-Disposition": components["headers"]["Content-Disposition"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/octet-stream": string;
                    "*/*": string;
                };
            };
            /** @description One byte range (`Range`). */
            206: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "Accept-Ranges": components["headers"]["Accept-Ranges"];
                    "Content-Disposition": components["headers"]["Content-Disposition"];
                    "Content-Range": components["headers"]["Content-Range"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/octet-stream": string;
                    "*/*": string;
                };
            };
            /** @description Not modified (`If-None-Match`). */
            304: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "Accept-Ranges": components["headers"]["Accept-Ranges"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            /** @description The range starts beyond the content. */
            416: {
                headers: {
                    "Content-Range": components["headers"]["Content-Range"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    downloadBlobHead: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description One byte range (`bytes=0-99`, `bytes=100-`, `bytes=-100`): 206 with that part; a range beyond the end is 416. Several ranges or a malformed value: the whole content (200).
                 * @example bytes=0-1023
                 */
                Range?: components["parameters"]["Range"];
                /** @description Serve `Range` only if the ETag still matches (else the whole content). */
                "If-Range"?: components["parameters"]["If-Range"];
                /** @description ETags of the copy the client has (or `*`): 304 if one is current. */
                "If-None-Match"?: components["parameters"]["If-None-Match"];
            };
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                resource_id: components["parameters"]["resource_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The bytes as an attachment. */
            200: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "Accept-Ranges": components["headers"]["Accept-Ranges"];
                    "Content-Disposition": components["headers"]["Content-Disposition"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description One byte range (`Range`). */
            206: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "Accept-Ranges": components["headers"]["Accept-Ranges"];
                    "Content-Disposition": components["headers"]["Content-Disposition"];
                    "Content-Range": components["headers"]["Content-Range"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Not modified (`If-None-Match`). */
            304: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "Accept-Ranges": components["headers"]["Accept-Ranges"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            /** @description The range starts beyond the content. */
            416: {
                headers: {
                    "Content-Range": components["headers"]["Content-Range"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    quarantineBlob: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                resource_id: components["parameters"]["resource_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The blob, quarantined. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BlobResource"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    releaseBlob: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                resource_id: components["parameters"]["resource_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The blob, ready. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BlobResource"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createUploadSession: {
        parameters: {
            query?: never;
            header: {
                /**
                 * @description Repeating a request with the same key (and body) answers with the same operation instead of starting another one.
                 * @example create-q3-plans-2026-01-31
                 */
                "Idempotency-Key": components["parameters"]["Idempotency-Key"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "space_id": "0f8fad5bd9cb469fa16570867728950e",
                 *       "filename": "report.csv",
                 *       "size": 1024
                 *     }
                 */
                "application/json": components["schemas"]["CreateUploadSessionRequest"];
            };
        };
        responses: {
            /** @description A replay. */
            200: {
                headers: {
                    Location: components["headers"]["Location"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UploadSession"];
                };
            };
            /** @description Created. */
            201: {
                headers: {
                    Location: components["headers"]["Location"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UploadSession"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getUploadSession: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                session_id: components["parameters"]["session_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UploadSession"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    abortUploadSession: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                session_id: components["parameters"]["session_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Aborted. */
            204: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    completeUpload: {
        parameters: {
            query?: never;
            header: {
                /**
                 * @description Repeating a request with the same key (and body) answers with the same operation instead of starting another one.
                 * @example create-q3-plans-2026-01-31
                 */
                "Idempotency-Key": components["parameters"]["Idempotency-Key"];
                /**
                 * @description `wait=<seconds>` (RFC 7240): wait up to that long (at most 60 s) for the operation to be done and answer 200 with it (and `Preference-Applied`) instead of 202 at once: one request instead of a POST and a long-poll. Still 202 if it is not done by then, if the server's long-poll slots are taken, or if the operation could not be read while waiting (the submission stands either way). On a changeset (`POST /api/units/{unit_id}/changesets`), `return=minimal` leaves the document out of the answer. Other preferences, and a malformed one, are ignored.
                 * @example wait=10
                 */
                Prefer?: components["parameters"]["Prefer"];
            };
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                session_id: components["parameters"]["session_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The operation is done: it finished within the request's `Prefer: wait=N`, or this is a replay (same Idempotency-Key and request) of one that is done. */
            200: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActivateWorktreeResourceOperation"] | components["schemas"]["AddWorktreeUnitOperation"] | components["schemas"]["CreateBlobResourceOperation"] | components["schemas"]["CreateResourceOperation"] | components["schemas"]["CreateWorktreeOperation"] | components["schemas"]["CreateWorktreeUnitOperation"] | components["schemas"]["DeleteAccountOperation"] | components["schemas"]["DeleteSpaceOperation"] | components["schemas"]["DiscardWorktreeOperation"] | components["schemas"]["ExportTakeoutOperation"] | components["schemas"]["ExportUnitOperation"] | components["schemas"]["ImportFileOperation"] | components["schemas"]["MergeWorktreeOperation"] | components["schemas"]["PublishAssetOperation"] | components["schemas"]["PurgeTrashOperation"] | components["schemas"]["ReplaceBlobContentOperation"];
                };
            };
            /** @description Accepted (or a replay while not done). */
            202: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActivateWorktreeResourceOperation"] | components["schemas"]["AddWorktreeUnitOperation"] | components["schemas"]["CreateBlobResourceOperation"] | components["schemas"]["CreateResourceOperation"] | components["schemas"]["CreateWorktreeOperation"] | components["schemas"]["CreateWorktreeUnitOperation"] | components["schemas"]["DeleteAccountOperation"] | components["schemas"]["DeleteSpaceOperation"] | components["schemas"]["DiscardWorktreeOperation"] | components["schemas"]["ExportTakeoutOperation"] | components["schemas"]["ExportUnitOperation"] | components["schemas"]["ImportFileOperation"] | components["schemas"]["MergeWorktreeOperation"] | components["schemas"]["PublishAssetOperation"] | components["schemas"]["PurgeTrashOperation"] | components["schemas"]["ReplaceBlobContentOperation"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    uploadContent: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                session_id: components["parameters"]["session_id"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/octet-stream": string;
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UploadResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            411: components["responses"]["LengthRequired"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    setCommentThreadSolved: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                thread_id: components["parameters"]["thread_id"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "solved": true,
                 *       "generation": 2
                 *     }
                 */
                "application/json": components["schemas"]["SolvedRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CommentThread"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteUnitComment: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                comment_id: components["parameters"]["comment_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description deleted */
            204: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    editUnitComment: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                comment_id: components["parameters"]["comment_id"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "body": "Is this total right? (Q3)",
                 *       "generation": 1
                 *     }
                 */
                "application/json": components["schemas"]["EditCommentRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UnitComment"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    startDeviceLogin: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["DeviceAuthorizationRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeviceAuthorizationStarted"];
                };
            };
            400: components["responses"]["BadRequest"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
        };
    };
    pollDeviceLogin: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["DeviceTokenRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeviceTokenIssued"];
                };
            };
            400: components["responses"]["BadRequest"];
            403: components["responses"]["Forbidden"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
        };
    };
    getDeviceLogin: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                user_code: components["parameters"]["user_code"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeviceAuthorization"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    approveDeviceLogin: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                user_code: components["parameters"]["user_code"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeviceAuthorization"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    denyDeviceLogin: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                user_code: components["parameters"]["user_code"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeviceAuthorization"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getExportContent: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description One byte range (`bytes=0-99`, `bytes=100-`, `bytes=-100`): 206 with that part; a range beyond the end is 416. Several ranges or a malformed value: the whole content (200).
                 * @example bytes=0-1023
                 */
                Range?: components["parameters"]["Range"];
                /** @description Serve `Range` only if the ETag still matches (else the whole content). */
                "If-Range"?: components["parameters"]["If-Range"];
                /** @description ETags of the copy the client has (or `*`): 304 if one is current. */
                "If-None-Match"?: components["parameters"]["If-None-Match"];
            };
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                export_id: components["parameters"]["export_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The bytes as an attachment. */
            200: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "Accept-Ranges": components["headers"]["Accept-Ranges"];
                    "Content-Disposition": components["headers"]["Content-Disposition"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/octet-stream": string;
                    "*/*": string;
                };
            };
            /** @description One byte range (`Range`). */
            206: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "Accept-Ranges": components["headers"]["Accept-Ranges"];
                    "Content-Disposition": components["headers"]["Content-Disposition"];
                    "Content-Range": components["headers"]["Content-Range"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/octet-stream": string;
                    "*/*": string;
                };
            };
            /** @description Not modified (`If-None-Match`). */
            304: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "Accept-Ranges": components["headers"]["Accept-Ranges"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            /** @description The range starts beyond the content. */
            416: {
                headers: {
                    "Content-Range": components["headers"]["Content-Range"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getExportContentHead: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description One byte range (`bytes=0-99`, `bytes=100-`, `bytes=-100`): 206 with that part; a range beyond the end is 416. Several ranges or a malformed value: the whole content (200).
                 * @example bytes=0-1023
                 */
                Range?: components["parameters"]["Range"];
                /** @description Serve `Range` only if the ETag still matches (else the whole content). */
                "If-Range"?: components["parameters"]["If-Range"];
                /** @description ETags of the copy the client has (or `*`): 304 if one is current. */
                "If-None-Match"?: components["parameters"]["If-None-Match"];
            };
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                export_id: components["parameters"]["export_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The bytes as an attachment. */
            200: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "Accept-Ranges": components["headers"]["Accept-Ranges"];
                    "Content-Disposition": components["headers"]["Content-Disposition"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description One byte range (`Range`). */
            206: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "Accept-Ranges": components["headers"]["Accept-Ranges"];
                    "Content-Disposition": components["headers"]["Content-Disposition"];
                    "Content-Range": components["headers"]["Content-Range"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Not modified (`If-None-Match`). */
            304: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "Accept-Ranges": components["headers"]["Accept-Ranges"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            /** @description The range starts beyond the content. */
            416: {
                headers: {
                    "Content-Range": components["headers"]["Content-Range"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createFeedTicket: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["FeedTicket"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createImport: {
        parameters: {
            query?: never;
            header: {
                /**
                 * @description Repeating a request with the same key (and body) answers with the same operation instead of starting another one.
                 * @example create-q3-plans-2026-01-31
                 */
                "Idempotency-Key": components["parameters"]["Idempotency-Key"];
                /**
                 * @description `wait=<seconds>` (RFC 7240): wait up to that long (at most 60 s) for the operation to be done and answer 200 with it (and `Preference-Applied`) instead of 202 at once: one request instead of a POST and a long-poll. Still 202 if it is not done by then, if the server's long-poll slots are taken, or if the operation could not be read while waiting (the submission stands either way). On a changeset (`POST /api/units/{unit_id}/changesets`), `return=minimal` leaves the document out of the answer. Other preferences, and a malformed one, are ignored.
                 * @example wait=10
                 */
                Prefer?: components["parameters"]["Prefer"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "upload_session_id": "7c9e6679742540de944be07fc1f90ae7",
                 *       "space_id": "0f8fad5bd9cb469fa16570867728950e",
                 *       "name": "Q3 budget"
                 *     }
                 */
                "application/json": components["schemas"]["ImportRequest"];
            };
        };
        responses: {
            /** @description The operation is done: it finished within the request's `Prefer: wait=N`, or this is a replay (same Idempotency-Key and request) of one that is done. */
            200: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActivateWorktreeResourceOperation"] | components["schemas"]["AddWorktreeUnitOperation"] | components["schemas"]["CreateBlobResourceOperation"] | components["schemas"]["CreateResourceOperation"] | components["schemas"]["CreateWorktreeOperation"] | components["schemas"]["CreateWorktreeUnitOperation"] | components["schemas"]["DeleteAccountOperation"] | components["schemas"]["DeleteSpaceOperation"] | components["schemas"]["DiscardWorktreeOperation"] | components["schemas"]["ExportTakeoutOperation"] | components["schemas"]["ExportUnitOperation"] | components["schemas"]["ImportFileOperation"] | components["schemas"]["MergeWorktreeOperation"] | components["schemas"]["PublishAssetOperation"] | components["schemas"]["PurgeTrashOperation"] | components["schemas"]["ReplaceBlobContentOperation"];
                };
            };
            /** @description Accepted (or a replay while not done). */
            202: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActivateWorktreeResourceOperation"] | components["schemas"]["AddWorktreeUnitOperation"] | components["schemas"]["CreateBlobResourceOperation"] | components["schemas"]["CreateResourceOperation"] | components["schemas"]["CreateWorktreeOperation"] | components["schemas"]["CreateWorktreeUnitOperation"] | components["schemas"]["DeleteAccountOperation"] | components["schemas"]["DeleteSpaceOperation"] | components["schemas"]["DiscardWorktreeOperation"] | components["schemas"]["ExportTakeoutOperation"] | components["schemas"]["ExportUnitOperation"] | components["schemas"]["ImportFileOperation"] | components["schemas"]["MergeWorktreeOperation"] | components["schemas"]["PublishAssetOperation"] | components["schemas"]["PurgeTrashOperation"] | components["schemas"]["ReplaceBlobContentOperation"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listLoginSessions: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LoginSessionList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    login: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "username": "alice",
                 *       "password": "correct horse battery"
                 *     }
                 */
                "application/json": components["schemas"]["LoginRequest"];
            };
        };
        responses: {
            /** @description logged in */
            201: {
                headers: {
                    "Set-Cookie": components["headers"]["Set-Cookie"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LoginResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    logout: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description logged out */
            204: {
                headers: {
                    "Set-Cookie": components["headers"]["Set-Cookie"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    endLoginSession: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                session_id: components["parameters"]["session_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description ended */
            204: {
                headers: {
                    "Set-Cookie": components["headers"]["Set-Cookie"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    me: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Me"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteAccount: {
        parameters: {
            query?: never;
            header: {
                /**
                 * @description Repeating a request with the same key (and body) answers with the same operation instead of starting another one.
                 * @example create-q3-plans-2026-01-31
                 */
                "Idempotency-Key": components["parameters"]["Idempotency-Key"];
                /**
                 * @description `wait=<seconds>` (RFC 7240): wait up to that long (at most 60 s) for the operation to be done and answer 200 with it (and `Preference-Applied`) instead of 202 at once: one request instead of a POST and a long-poll. Still 202 if it is not done by then, if the server's long-poll slots are taken, or if the operation could not be read while waiting (the submission stands either way). On a changeset (`POST /api/units/{unit_id}/changesets`), `return=minimal` leaves the document out of the answer. Other preferences, and a malformed one, are ignored.
                 * @example wait=10
                 */
                Prefer?: components["parameters"]["Prefer"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "password": "correct horse battery"
                 *     }
                 */
                "application/json": components["schemas"]["DeleteAccountRequest"];
            };
        };
        responses: {
            /** @description The operation is done: it finished within the request's `Prefer: wait=N`, or this is a replay (same Idempotency-Key and request) of one that is done. */
            200: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActivateWorktreeResourceOperation"] | components["schemas"]["AddWorktreeUnitOperation"] | components["schemas"]["CreateBlobResourceOperation"] | components["schemas"]["CreateResourceOperation"] | components["schemas"]["CreateWorktreeOperation"] | components["schemas"]["CreateWorktreeUnitOperation"] | components["schemas"]["DeleteAccountOperation"] | components["schemas"]["DeleteSpaceOperation"] | components["schemas"]["DiscardWorktreeOperation"] | components["schemas"]["ExportTakeoutOperation"] | components["schemas"]["ExportUnitOperation"] | components["schemas"]["ImportFileOperation"] | components["schemas"]["MergeWorktreeOperation"] | components["schemas"]["PublishAssetOperation"] | components["schemas"]["PurgeTrashOperation"] | components["schemas"]["ReplaceBlobContentOperation"];
                };
            };
            /** @description Accepted: the account is being deleted. */
            202: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActivateWorktreeResourceOperation"] | components["schemas"]["AddWorktreeUnitOperation"] | components["schemas"]["CreateBlobResourceOperation"] | components["schemas"]["CreateResourceOperation"] | components["schemas"]["CreateWorktreeOperation"] | components["schemas"]["CreateWorktreeUnitOperation"] | components["schemas"]["DeleteAccountOperation"] | components["schemas"]["DeleteSpaceOperation"] | components["schemas"]["DiscardWorktreeOperation"] | components["schemas"]["ExportTakeoutOperation"] | components["schemas"]["ExportUnitOperation"] | components["schemas"]["ImportFileOperation"] | components["schemas"]["MergeWorktreeOperation"] | components["schemas"]["PublishAssetOperation"] | components["schemas"]["PurgeTrashOperation"] | components["schemas"]["ReplaceBlobContentOperation"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    myAudit: {
        parameters: {
            query?: {
                /** @description An action, or a prefix of actions ending in a dot. */
                action?: components["parameters"]["actionQuery"];
                /** @description Rows at or after this instant (RFC 3339; UTC when no offset). */
                since?: components["parameters"]["sinceQuery"];
                /** @description Rows before this instant. */
                until?: components["parameters"]["untilQuery"];
                /** @description Page size. */
                limit?: components["parameters"]["limit"];
                /** @description `next_cursor` of the page before. */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AuditPage"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    exportMine: {
        parameters: {
            query?: never;
            header: {
                /**
                 * @description Repeating a request with the same key (and body) answers with the same operation instead of starting another one.
                 * @example create-q3-plans-2026-01-31
                 */
                "Idempotency-Key": components["parameters"]["Idempotency-Key"];
                /**
                 * @description `wait=<seconds>` (RFC 7240): wait up to that long (at most 60 s) for the operation to be done and answer 200 with it (and `Preference-Applied`) instead of 202 at once: one request instead of a POST and a long-poll. Still 202 if it is not done by then, if the server's long-poll slots are taken, or if the operation could not be read while waiting (the submission stands either way). On a changeset (`POST /api/units/{unit_id}/changesets`), `return=minimal` leaves the document out of the answer. Other preferences, and a malformed one, are ignored.
                 * @example wait=10
                 */
                Prefer?: components["parameters"]["Prefer"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The operation is done: it finished within the request's `Prefer: wait=N`, or this is a replay (same Idempotency-Key and request) of one that is done. */
            200: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActivateWorktreeResourceOperation"] | components["schemas"]["AddWorktreeUnitOperation"] | components["schemas"]["CreateBlobResourceOperation"] | components["schemas"]["CreateResourceOperation"] | components["schemas"]["CreateWorktreeOperation"] | components["schemas"]["CreateWorktreeUnitOperation"] | components["schemas"]["DeleteAccountOperation"] | components["schemas"]["DeleteSpaceOperation"] | components["schemas"]["DiscardWorktreeOperation"] | components["schemas"]["ExportTakeoutOperation"] | components["schemas"]["ExportUnitOperation"] | components["schemas"]["ImportFileOperation"] | components["schemas"]["MergeWorktreeOperation"] | components["schemas"]["PublishAssetOperation"] | components["schemas"]["PurgeTrashOperation"] | components["schemas"]["ReplaceBlobContentOperation"];
                };
            };
            /** @description Accepted (or a replay while not done). */
            202: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActivateWorktreeResourceOperation"] | components["schemas"]["AddWorktreeUnitOperation"] | components["schemas"]["CreateBlobResourceOperation"] | components["schemas"]["CreateResourceOperation"] | components["schemas"]["CreateWorktreeOperation"] | components["schemas"]["CreateWorktreeUnitOperation"] | components["schemas"]["DeleteAccountOperation"] | components["schemas"]["DeleteSpaceOperation"] | components["schemas"]["DiscardWorktreeOperation"] | components["schemas"]["ExportTakeoutOperation"] | components["schemas"]["ExportUnitOperation"] | components["schemas"]["ImportFileOperation"] | components["schemas"]["MergeWorktreeOperation"] | components["schemas"]["PublishAssetOperation"] | components["schemas"]["PurgeTrashOperation"] | components["schemas"]["ReplaceBlobContentOperation"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listExternalIdentities: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ExternalIdentityList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    unlinkExternalIdentity: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A sign-in provider: `oidc` (OpenID Connect) or `github`; one not configured is 404. */
                provider: components["parameters"]["provider"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description unlinked */
            204: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    changePassword: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "current_password": "correct horse battery",
                 *       "new_password": "a new one, long enough"
                 *     }
                 */
                "application/json": components["schemas"]["ChangePasswordRequest"];
            };
        };
        responses: {
            /** @description changed */
            204: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    myRecent: {
        parameters: {
            query?: {
                /** @description Page size. */
                limit?: components["parameters"]["limit"];
                /** @description `next_cursor` of the page before. */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RecentList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createRecoveryCodes: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "current_password": "correct horse battery"
                 *     }
                 */
                "application/json": components["schemas"]["RecoveryCodesRequest"];
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RecoveryCodes"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    myStars: {
        parameters: {
            query?: {
                /** @description Page size. */
                limit?: components["parameters"]["limit"];
                /** @description `next_cursor` of the page before. */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["StarList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    starResource: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                resource_id: components["parameters"]["resource_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description starred */
            204: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    unstarResource: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                resource_id: components["parameters"]["resource_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description not starred */
            204: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createNode: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "space_id": "0f8fad5bd9cb469fa16570867728950e",
                 *       "parent_id": null,
                 *       "name": "Q3 plans"
                 *     }
                 */
                "application/json": components["schemas"]["CreateNodeRequest"];
            };
        };
        responses: {
            /** @description created */
            201: {
                headers: {
                    Location: components["headers"]["Location"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Node"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getNode: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                node_id: components["parameters"]["node_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Node"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    purgeNode: {
        parameters: {
            query?: never;
            header: {
                /**
                 * @description Repeating a request with the same key (and body) answers with the same operation instead of starting another one.
                 * @example create-q3-plans-2026-01-31
                 */
                "Idempotency-Key": components["parameters"]["Idempotency-Key"];
                /**
                 * @description `wait=<seconds>` (RFC 7240): wait up to that long (at most 60 s) for the operation to be done and answer 200 with it (and `Preference-Applied`) instead of 202 at once: one request instead of a POST and a long-poll. Still 202 if it is not done by then, if the server's long-poll slots are taken, or if the operation could not be read while waiting (the submission stands either way). On a changeset (`POST /api/units/{unit_id}/changesets`), `return=minimal` leaves the document out of the answer. Other preferences, and a malformed one, are ignored.
                 * @example wait=10
                 */
                Prefer?: components["parameters"]["Prefer"];
            };
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                node_id: components["parameters"]["node_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The operation is done: it finished within the request's `Prefer: wait=N`, or this is a replay (same Idempotency-Key and request) of one that is done. */
            200: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActivateWorktreeResourceOperation"] | components["schemas"]["AddWorktreeUnitOperation"] | components["schemas"]["CreateBlobResourceOperation"] | components["schemas"]["CreateResourceOperation"] | components["schemas"]["CreateWorktreeOperation"] | components["schemas"]["CreateWorktreeUnitOperation"] | components["schemas"]["DeleteAccountOperation"] | components["schemas"]["DeleteSpaceOperation"] | components["schemas"]["DiscardWorktreeOperation"] | components["schemas"]["ExportTakeoutOperation"] | components["schemas"]["ExportUnitOperation"] | components["schemas"]["ImportFileOperation"] | components["schemas"]["MergeWorktreeOperation"] | components["schemas"]["PublishAssetOperation"] | components["schemas"]["PurgeTrashOperation"] | components["schemas"]["ReplaceBlobContentOperation"];
                };
            };
            /** @description Accepted (or a replay while not done). */
            202: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActivateWorktreeResourceOperation"] | components["schemas"]["AddWorktreeUnitOperation"] | components["schemas"]["CreateBlobResourceOperation"] | components["schemas"]["CreateResourceOperation"] | components["schemas"]["CreateWorktreeOperation"] | components["schemas"]["CreateWorktreeUnitOperation"] | components["schemas"]["DeleteAccountOperation"] | components["schemas"]["DeleteSpaceOperation"] | components["schemas"]["DiscardWorktreeOperation"] | components["schemas"]["ExportTakeoutOperation"] | components["schemas"]["ExportUnitOperation"] | components["schemas"]["ImportFileOperation"] | components["schemas"]["MergeWorktreeOperation"] | components["schemas"]["PublishAssetOperation"] | components["schemas"]["PurgeTrashOperation"] | components["schemas"]["ReplaceBlobContentOperation"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    updateNode: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                node_id: components["parameters"]["node_id"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "Q4 plans"
                 *     }
                 */
                "application/json": components["schemas"]["UpdateNodeRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Node"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listChildren: {
        parameters: {
            query?: {
                /** @description Page size. */
                limit?: components["parameters"]["limit"];
                /** @description `next_cursor` of the page before. */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                node_id: components["parameters"]["node_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NodeList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listGrants: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                node_id: components["parameters"]["node_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["GrantList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    putGrantByUsername: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                node_id: components["parameters"]["node_id"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "username": "bob",
                 *       "role": "viewer"
                 *     }
                 */
                "application/json": components["schemas"]["PutGrantByNameRequest"];
            };
        };
        responses: {
            /** @description changed */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Grant"];
                };
            };
            /** @description granted */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Grant"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    putGrant: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                node_id: components["parameters"]["node_id"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                user_id: components["parameters"]["user_id"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "role": "viewer"
                 *     }
                 */
                "application/json": components["schemas"]["PutGrantRequest"];
            };
        };
        responses: {
            /** @description changed */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Grant"];
                };
            };
            /** @description granted */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Grant"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteGrant: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                node_id: components["parameters"]["node_id"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                user_id: components["parameters"]["user_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description revoked */
            204: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getLinkSharing: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                node_id: components["parameters"]["node_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LinkSharingState"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    putLinkSharing: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                node_id: components["parameters"]["node_id"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "enabled": true,
                 *       "role": "viewer"
                 *     }
                 */
                "application/json": components["schemas"]["LinkSharingRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LinkSharingState"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    trashNode: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                node_id: components["parameters"]["node_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TrashBatch"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    openapi: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the OpenAPI document */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, never>;
                };
            };
            400: components["responses"]["BadRequest"];
            413: components["responses"]["PayloadTooLarge"];
        };
    };
    listOperations: {
        parameters: {
            query?: {
                /** @description Page size. */
                limit?: components["parameters"]["limit"];
                /** @description `next_cursor` of the page before. */
                cursor?: components["parameters"]["cursor"];
                status?: components["parameters"]["statusQuery"];
                /** @description Only operations of this kind (a kind with no operations gives an empty page). */
                kind?: components["parameters"]["kindQuery"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OperationList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getOperation: {
        parameters: {
            query?: {
                /** @description Long-poll: answer as soon as the operation is done, or after this many seconds. Up to 3600 is accepted; the server waits at most 60 s (a larger value counts as 60). 0 or absent: answer at once. */
                wait?: components["parameters"]["waitQuery"];
            };
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                operation_id: components["parameters"]["operation_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The operation. */
            200: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActivateWorktreeResourceOperation"] | components["schemas"]["AddWorktreeUnitOperation"] | components["schemas"]["CreateBlobResourceOperation"] | components["schemas"]["CreateResourceOperation"] | components["schemas"]["CreateWorktreeOperation"] | components["schemas"]["CreateWorktreeUnitOperation"] | components["schemas"]["DeleteAccountOperation"] | components["schemas"]["DeleteSpaceOperation"] | components["schemas"]["DiscardWorktreeOperation"] | components["schemas"]["ExportTakeoutOperation"] | components["schemas"]["ExportUnitOperation"] | components["schemas"]["ImportFileOperation"] | components["schemas"]["MergeWorktreeOperation"] | components["schemas"]["PublishAssetOperation"] | components["schemas"]["PurgeTrashOperation"] | components["schemas"]["ReplaceBlobContentOperation"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listOperationAttempts: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                operation_id: components["parameters"]["operation_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OperationAttemptList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    cancelOperation: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                operation_id: components["parameters"]["operation_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Cancelled (failed). */
            200: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActivateWorktreeResourceOperation"] | components["schemas"]["AddWorktreeUnitOperation"] | components["schemas"]["CreateBlobResourceOperation"] | components["schemas"]["CreateResourceOperation"] | components["schemas"]["CreateWorktreeOperation"] | components["schemas"]["CreateWorktreeUnitOperation"] | components["schemas"]["DeleteAccountOperation"] | components["schemas"]["DeleteSpaceOperation"] | components["schemas"]["DiscardWorktreeOperation"] | components["schemas"]["ExportTakeoutOperation"] | components["schemas"]["ExportUnitOperation"] | components["schemas"]["ImportFileOperation"] | components["schemas"]["MergeWorktreeOperation"] | components["schemas"]["PublishAssetOperation"] | components["schemas"]["PurgeTrashOperation"] | components["schemas"]["ReplaceBlobContentOperation"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    retryOperation: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                operation_id: components["parameters"]["operation_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Pending again. */
            200: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActivateWorktreeResourceOperation"] | components["schemas"]["AddWorktreeUnitOperation"] | components["schemas"]["CreateBlobResourceOperation"] | components["schemas"]["CreateResourceOperation"] | components["schemas"]["CreateWorktreeOperation"] | components["schemas"]["CreateWorktreeUnitOperation"] | components["schemas"]["DeleteAccountOperation"] | components["schemas"]["DeleteSpaceOperation"] | components["schemas"]["DiscardWorktreeOperation"] | components["schemas"]["ExportTakeoutOperation"] | components["schemas"]["ExportUnitOperation"] | components["schemas"]["ImportFileOperation"] | components["schemas"]["MergeWorktreeOperation"] | components["schemas"]["PublishAssetOperation"] | components["schemas"]["PurgeTrashOperation"] | components["schemas"]["ReplaceBlobContentOperation"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    submitOperations: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "items": [
                 *         {
                 *           "idempotency_key": "3c1d9b7e-batch-0001",
                 *           "kind": "create_resource",
                 *           "input": {
                 *             "space_id": "0f8fad5bd9cb469fa16570867728950e",
                 *             "name": "Q3 plans",
                 *             "unit_type": "doc"
                 *           }
                 *         }
                 *       ]
                 *     }
                 */
                "application/json": components["schemas"]["BatchRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BatchAnswer"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    operatorAudit: {
        parameters: {
            query?: {
                /** @description An action, or a prefix of actions ending in a dot. */
                action?: components["parameters"]["actionQuery"];
                /** @description Rows at or after this instant (RFC 3339; UTC when no offset). */
                since?: components["parameters"]["sinceQuery"];
                /** @description Rows before this instant. */
                until?: components["parameters"]["untilQuery"];
                /** @description Page size. */
                limit?: components["parameters"]["limit"];
                /** @description `next_cursor` of the page before. */
                cursor?: components["parameters"]["cursor"];
                /** @description An id (unknown ids are 404). */
                actor_id?: components["parameters"]["actor_idQuery"];
                /** @description An id (unknown ids are 404). */
                space_id?: components["parameters"]["space_idQuery"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AuditPage"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getDashboard: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Dashboard"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    resetPassword: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "username": "alice",
                 *       "code": "abcd-efgh-ijkl-mnop",
                 *       "new_password": "a new one, long enough"
                 *     }
                 */
                "application/json": components["schemas"]["PasswordResetRequest"];
            };
        };
        responses: {
            /** @description reset */
            204: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getPermissionObject: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                object_id: components["parameters"]["object_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PermissionObject"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deletePermissionObject: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                object_id: components["parameters"]["object_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description deleted */
            204: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    updatePermissionObject: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                object_id: components["parameters"]["object_id"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "edit_scope": "specified"
                 *     }
                 */
                "application/json": components["schemas"]["UpdatePermissionObjectRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PermissionObject"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    putPermissionObjectCollaborator: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                object_id: components["parameters"]["object_id"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                user_id: components["parameters"]["user_id"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "role": "editor"
                 *     }
                 */
                "application/json": components["schemas"]["CollaboratorRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PermissionObject"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deletePermissionObjectCollaborator: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                object_id: components["parameters"]["object_id"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                user_id: components["parameters"]["user_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description removed (or had none) */
            204: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createResource: {
        parameters: {
            query?: never;
            header: {
                /**
                 * @description Repeating a request with the same key (and body) answers with the same operation instead of starting another one.
                 * @example create-q3-plans-2026-01-31
                 */
                "Idempotency-Key": components["parameters"]["Idempotency-Key"];
                /**
                 * @description `wait=<seconds>` (RFC 7240): wait up to that long (at most 60 s) for the operation to be done and answer 200 with it (and `Preference-Applied`) instead of 202 at once: one request instead of a POST and a long-poll. Still 202 if it is not done by then, if the server's long-poll slots are taken, or if the operation could not be read while waiting (the submission stands either way). On a changeset (`POST /api/units/{unit_id}/changesets`), `return=minimal` leaves the document out of the answer. Other preferences, and a malformed one, are ignored.
                 * @example wait=10
                 */
                Prefer?: components["parameters"]["Prefer"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "space_id": "0f8fad5bd9cb469fa16570867728950e",
                 *       "name": "Q3 plans",
                 *       "unit_type": "doc"
                 *     }
                 */
                "application/json": components["schemas"]["CreateResourceRequest"];
            };
        };
        responses: {
            /** @description The operation is done: it finished within the request's `Prefer: wait=N`, or this is a replay (same Idempotency-Key and request) of one that is done. */
            200: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActivateWorktreeResourceOperation"] | components["schemas"]["AddWorktreeUnitOperation"] | components["schemas"]["CreateBlobResourceOperation"] | components["schemas"]["CreateResourceOperation"] | components["schemas"]["CreateWorktreeOperation"] | components["schemas"]["CreateWorktreeUnitOperation"] | components["schemas"]["DeleteAccountOperation"] | components["schemas"]["DeleteSpaceOperation"] | components["schemas"]["DiscardWorktreeOperation"] | components["schemas"]["ExportTakeoutOperation"] | components["schemas"]["ExportUnitOperation"] | components["schemas"]["ImportFileOperation"] | components["schemas"]["MergeWorktreeOperation"] | components["schemas"]["PublishAssetOperation"] | components["schemas"]["PurgeTrashOperation"] | components["schemas"]["ReplaceBlobContentOperation"];
                };
            };
            /** @description Accepted (or a replay while not done). */
            202: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActivateWorktreeResourceOperation"] | components["schemas"]["AddWorktreeUnitOperation"] | components["schemas"]["CreateBlobResourceOperation"] | components["schemas"]["CreateResourceOperation"] | components["schemas"]["CreateWorktreeOperation"] | components["schemas"]["CreateWorktreeUnitOperation"] | components["schemas"]["DeleteAccountOperation"] | components["schemas"]["DeleteSpaceOperation"] | components["schemas"]["DiscardWorktreeOperation"] | components["schemas"]["ExportTakeoutOperation"] | components["schemas"]["ExportUnitOperation"] | components["schemas"]["ImportFileOperation"] | components["schemas"]["MergeWorktreeOperation"] | components["schemas"]["PublishAssetOperation"] | components["schemas"]["PurgeTrashOperation"] | components["schemas"]["ReplaceBlobContentOperation"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getResource: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                resource_id: components["parameters"]["resource_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Resource"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    openResource: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                resource_id: components["parameters"]["resource_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The resource. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Resource"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    search: {
        parameters: {
            query?: {
                /** @description What to find, case-insensitive. Names: 3 characters or more match anywhere in a name, 1 or 2 match name prefixes only. Content: the words (letters and digits) a unit's text must all hold. */
                q?: components["parameters"]["qQuery"];
                /** @description An id (unknown ids are 404). */
                space_id?: components["parameters"]["space_idQuery"];
                /** @description `name` (the default): node names; `content`: the text of units. */
                kind?: components["parameters"]["SearchQuery_kind"];
                /** @description Page size. */
                limit?: components["parameters"]["limit"];
                /** @description `next_cursor` of the page before. */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SearchList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listSpaces: {
        parameters: {
            query?: {
                /** @description Page size. */
                limit?: components["parameters"]["limit"];
                /** @description `next_cursor` of the page before. */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SpaceList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createSpace: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "Design team"
                 *     }
                 */
                "application/json": components["schemas"]["CreateSpaceRequest"];
            };
        };
        responses: {
            /** @description created */
            201: {
                headers: {
                    Location: components["headers"]["Location"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Space"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getSpace: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Space"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteSpace: {
        parameters: {
            query?: never;
            header: {
                /**
                 * @description Repeating a request with the same key (and body) answers with the same operation instead of starting another one.
                 * @example create-q3-plans-2026-01-31
                 */
                "Idempotency-Key": components["parameters"]["Idempotency-Key"];
                /**
                 * @description `wait=<seconds>` (RFC 7240): wait up to that long (at most 60 s) for the operation to be done and answer 200 with it (and `Preference-Applied`) instead of 202 at once: one request instead of a POST and a long-poll. Still 202 if it is not done by then, if the server's long-poll slots are taken, or if the operation could not be read while waiting (the submission stands either way). On a changeset (`POST /api/units/{unit_id}/changesets`), `return=minimal` leaves the document out of the answer. Other preferences, and a malformed one, are ignored.
                 * @example wait=10
                 */
                Prefer?: components["parameters"]["Prefer"];
            };
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "confirm_name": "Design team"
                 *     }
                 */
                "application/json": components["schemas"]["DeleteSpaceRequest"];
            };
        };
        responses: {
            /** @description The operation is done: it finished within the request's `Prefer: wait=N`, or this is a replay (same Idempotency-Key and request) of one that is done. */
            200: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActivateWorktreeResourceOperation"] | components["schemas"]["AddWorktreeUnitOperation"] | components["schemas"]["CreateBlobResourceOperation"] | components["schemas"]["CreateResourceOperation"] | components["schemas"]["CreateWorktreeOperation"] | components["schemas"]["CreateWorktreeUnitOperation"] | components["schemas"]["DeleteAccountOperation"] | components["schemas"]["DeleteSpaceOperation"] | components["schemas"]["DiscardWorktreeOperation"] | components["schemas"]["ExportTakeoutOperation"] | components["schemas"]["ExportUnitOperation"] | components["schemas"]["ImportFileOperation"] | components["schemas"]["MergeWorktreeOperation"] | components["schemas"]["PublishAssetOperation"] | components["schemas"]["PurgeTrashOperation"] | components["schemas"]["ReplaceBlobContentOperation"];
                };
            };
            /** @description Accepted: the space is being deleted. */
            202: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActivateWorktreeResourceOperation"] | components["schemas"]["AddWorktreeUnitOperation"] | components["schemas"]["CreateBlobResourceOperation"] | components["schemas"]["CreateResourceOperation"] | components["schemas"]["CreateWorktreeOperation"] | components["schemas"]["CreateWorktreeUnitOperation"] | components["schemas"]["DeleteAccountOperation"] | components["schemas"]["DeleteSpaceOperation"] | components["schemas"]["DiscardWorktreeOperation"] | components["schemas"]["ExportTakeoutOperation"] | components["schemas"]["ExportUnitOperation"] | components["schemas"]["ImportFileOperation"] | components["schemas"]["MergeWorktreeOperation"] | components["schemas"]["PublishAssetOperation"] | components["schemas"]["PurgeTrashOperation"] | components["schemas"]["ReplaceBlobContentOperation"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    updateSpace: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "public_read": true
                 *     }
                 */
                "application/json": components["schemas"]["UpdateSpaceRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Space"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    archiveSpace: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Space"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    spaceAudit: {
        parameters: {
            query?: {
                /** @description An action, or a prefix of actions ending in a dot. */
                action?: components["parameters"]["actionQuery"];
                /** @description Rows at or after this instant (RFC 3339; UTC when no offset). */
                since?: components["parameters"]["sinceQuery"];
                /** @description Rows before this instant. */
                until?: components["parameters"]["untilQuery"];
                /** @description Page size. */
                limit?: components["parameters"]["limit"];
                /** @description `next_cursor` of the page before. */
                cursor?: components["parameters"]["cursor"];
                /** @description An id (unknown ids are 404). */
                actor_id?: components["parameters"]["actor_idQuery"];
            };
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AuditPage"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    exportSpace: {
        parameters: {
            query?: never;
            header: {
                /**
                 * @description Repeating a request with the same key (and body) answers with the same operation instead of starting another one.
                 * @example create-q3-plans-2026-01-31
                 */
                "Idempotency-Key": components["parameters"]["Idempotency-Key"];
                /**
                 * @description `wait=<seconds>` (RFC 7240): wait up to that long (at most 60 s) for the operation to be done and answer 200 with it (and `Preference-Applied`) instead of 202 at once: one request instead of a POST and a long-poll. Still 202 if it is not done by then, if the server's long-poll slots are taken, or if the operation could not be read while waiting (the submission stands either way). On a changeset (`POST /api/units/{unit_id}/changesets`), `return=minimal` leaves the document out of the answer. Other preferences, and a malformed one, are ignored.
                 * @example wait=10
                 */
                Prefer?: components["parameters"]["Prefer"];
            };
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The operation is done: it finished within the request's `Prefer: wait=N`, or this is a replay (same Idempotency-Key and request) of one that is done. */
            200: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActivateWorktreeResourceOperation"] | components["schemas"]["AddWorktreeUnitOperation"] | components["schemas"]["CreateBlobResourceOperation"] | components["schemas"]["CreateResourceOperation"] | components["schemas"]["CreateWorktreeOperation"] | components["schemas"]["CreateWorktreeUnitOperation"] | components["schemas"]["DeleteAccountOperation"] | components["schemas"]["DeleteSpaceOperation"] | components["schemas"]["DiscardWorktreeOperation"] | components["schemas"]["ExportTakeoutOperation"] | components["schemas"]["ExportUnitOperation"] | components["schemas"]["ImportFileOperation"] | components["schemas"]["MergeWorktreeOperation"] | components["schemas"]["PublishAssetOperation"] | components["schemas"]["PurgeTrashOperation"] | components["schemas"]["ReplaceBlobContentOperation"];
                };
            };
            /** @description Accepted (or a replay while not done). */
            202: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActivateWorktreeResourceOperation"] | components["schemas"]["AddWorktreeUnitOperation"] | components["schemas"]["CreateBlobResourceOperation"] | components["schemas"]["CreateResourceOperation"] | components["schemas"]["CreateWorktreeOperation"] | components["schemas"]["CreateWorktreeUnitOperation"] | components["schemas"]["DeleteAccountOperation"] | components["schemas"]["DeleteSpaceOperation"] | components["schemas"]["DiscardWorktreeOperation"] | components["schemas"]["ExportTakeoutOperation"] | components["schemas"]["ExportUnitOperation"] | components["schemas"]["ImportFileOperation"] | components["schemas"]["MergeWorktreeOperation"] | components["schemas"]["PublishAssetOperation"] | components["schemas"]["PurgeTrashOperation"] | components["schemas"]["ReplaceBlobContentOperation"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listIssues: {
        parameters: {
            query?: {
                /** @description `open` (default), `closed` or `all`. */
                state?: components["parameters"]["IssueQuery_state"];
                /** @description A label name (case-insensitive). */
                label?: components["parameters"]["labelQuery"];
                /** @description A user id: issues assigned to them. */
                assignee?: components["parameters"]["assigneeQuery"];
                /** @description A user id: issues they opened. */
                author?: components["parameters"]["authorQuery"];
                /** @description Text the title contains (case-insensitive). */
                q?: components["parameters"]["IssueQuery_q"];
                /** @description Page size. */
                limit?: components["parameters"]["limit"];
                /** @description `next_cursor` of the page before. */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["IssueList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createIssue: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "title": "Totals row is off by one",
                 *       "body": "Steps to reproduce: ..."
                 *     }
                 */
                "application/json": components["schemas"]["CreateIssueRequest"];
            };
        };
        responses: {
            /** @description created */
            201: {
                headers: {
                    Location: components["headers"]["Location"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Issue"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listIssueLabels: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LabelList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createIssueLabel: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "bug",
                 *       "color": "red"
                 *     }
                 */
                "application/json": components["schemas"]["CreateLabelRequest"];
            };
        };
        responses: {
            /** @description created */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Label"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteIssueLabel: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                label_id: components["parameters"]["label_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description deleted */
            204: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    updateIssueLabel: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                label_id: components["parameters"]["label_id"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "color": "orange"
                 *     }
                 */
                "application/json": components["schemas"]["UpdateLabelRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Label"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getIssue: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
                /** @description An issue's `#N` in its space (digits); an unknown number is 404. */
                number: components["parameters"]["number"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Issue"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    updateIssue: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
                /** @description An issue's `#N` in its space (digits); an unknown number is 404. */
                number: components["parameters"]["number"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "title": "Totals row is off by two"
                 *     }
                 */
                "application/json": components["schemas"]["UpdateIssueRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Issue"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    addIssueAssigneeByUsername: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
                /** @description An issue's `#N` in its space (digits); an unknown number is 404. */
                number: components["parameters"]["number"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "username": "bob"
                 *     }
                 */
                "application/json": components["schemas"]["AssignByNameRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Issue"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    addIssueAssignee: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
                /** @description An issue's `#N` in its space (digits); an unknown number is 404. */
                number: components["parameters"]["number"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                user_id: components["parameters"]["user_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Issue"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    removeIssueAssignee: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
                /** @description An issue's `#N` in its space (digits); an unknown number is 404. */
                number: components["parameters"]["number"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                user_id: components["parameters"]["user_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Issue"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    closeIssue: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
                /** @description An issue's `#N` in its space (digits); an unknown number is 404. */
                number: components["parameters"]["number"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "reason": "completed",
                 *       "comment": "Fixed in the Q3 sheet."
                 *     }
                 */
                "application/json": components["schemas"]["CloseIssueRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Issue"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createIssueComment: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
                /** @description An issue's `#N` in its space (digits); an unknown number is 404. */
                number: components["parameters"]["number"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "body": "I can reproduce this."
                 *     }
                 */
                "application/json": components["schemas"]["CommentRequest"];
            };
        };
        responses: {
            /** @description created */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Comment"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteIssueComment: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
                /** @description An issue's `#N` in its space (digits); an unknown number is 404. */
                number: components["parameters"]["number"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                comment_id: components["parameters"]["comment_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description deleted */
            204: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    updateIssueComment: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
                /** @description An issue's `#N` in its space (digits); an unknown number is 404. */
                number: components["parameters"]["number"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                comment_id: components["parameters"]["comment_id"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "body": "I can reproduce this."
                 *     }
                 */
                "application/json": components["schemas"]["CommentRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Comment"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    addIssueLabel: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
                /** @description An issue's `#N` in its space (digits); an unknown number is 404. */
                number: components["parameters"]["number"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                label_id: components["parameters"]["label_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Issue"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    removeIssueLabel: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
                /** @description An issue's `#N` in its space (digits); an unknown number is 404. */
                number: components["parameters"]["number"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                label_id: components["parameters"]["label_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Issue"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    addIssueNodeRef: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
                /** @description An issue's `#N` in its space (digits); an unknown number is 404. */
                number: components["parameters"]["number"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                node_id: components["parameters"]["node_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Issue"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    removeIssueNodeRef: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
                /** @description An issue's `#N` in its space (digits); an unknown number is 404. */
                number: components["parameters"]["number"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                node_id: components["parameters"]["node_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Issue"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    reopenIssue: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
                /** @description An issue's `#N` in its space (digits); an unknown number is 404. */
                number: components["parameters"]["number"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Issue"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    issueTimeline: {
        parameters: {
            query?: {
                /** @description Page size. */
                limit?: components["parameters"]["limit"];
                /** @description `next_cursor` of the page before. */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
                /** @description An issue's `#N` in its space (digits); an unknown number is 404. */
                number: components["parameters"]["number"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Timeline"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listMembers: {
        parameters: {
            query?: {
                /** @description Page size. */
                limit?: components["parameters"]["limit"];
                /** @description `next_cursor` of the page before. */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MemberList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    putMemberByUsername: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "username": "bob",
                 *       "role": "editor"
                 *     }
                 */
                "application/json": components["schemas"]["PutMemberByNameRequest"];
            };
        };
        responses: {
            /** @description role changed */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Member"];
                };
            };
            /** @description added */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Member"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    putMember: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                user_id: components["parameters"]["user_id"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "role": "editor"
                 *     }
                 */
                "application/json": components["schemas"]["PutMemberRequest"];
            };
        };
        responses: {
            /** @description role changed */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Member"];
                };
            };
            /** @description added */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Member"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteMember: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                user_id: components["parameters"]["user_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description removed */
            204: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listRootNodes: {
        parameters: {
            query?: {
                /** @description Page size. */
                limit?: components["parameters"]["limit"];
                /** @description `next_cursor` of the page before. */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["NodeList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    transferSpace: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "user_id": "0f8fad5bd9cb469fa16570867728950e"
                 *     }
                 */
                "application/json": components["schemas"]["TransferSpaceRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Space"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listTrash: {
        parameters: {
            query?: {
                /** @description Page size. */
                limit?: components["parameters"]["limit"];
                /** @description `next_cursor` of the page before. */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TrashBatchList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    unarchiveSpace: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                space_id: components["parameters"]["space_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Space"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    restoreTrash: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                batch_id: components["parameters"]["batch_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RestoreResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getUnit: {
        parameters: {
            query?: never;
            header?: {
                /** @description ETags of the copy the client has (or `*`): 304 if one is current. */
                "If-None-Match"?: components["parameters"]["If-None-Match"];
            };
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The unit. */
            200: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Unit"];
                };
            };
            /** @description Not modified (`If-None-Match`). */
            304: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listAssets: {
        parameters: {
            query?: {
                /** @description Page size. */
                limit?: components["parameters"]["limit"];
                /** @description `next_cursor` of the page before. */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AssetList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    uploadAsset: {
        parameters: {
            query?: {
                /** @description The original file name (for `Content-Disposition`); default `asset`. No control characters or `/`. */
                filename?: components["parameters"]["filenameQuery"];
            };
            header: {
                /**
                 * @description Repeating a request with the same key (and body) answers with the same operation instead of starting another one.
                 * @example create-q3-plans-2026-01-31
                 */
                "Idempotency-Key": components["parameters"]["Idempotency-Key"];
                /**
                 * @description `wait=<seconds>` (RFC 7240): wait up to that long (at most 60 s) for the operation to be done and answer 200 with it (and `Preference-Applied`) instead of 202 at once: one request instead of a POST and a long-poll. Still 202 if it is not done by then, if the server's long-poll slots are taken, or if the operation could not be read while waiting (the submission stands either way). On a changeset (`POST /api/units/{unit_id}/changesets`), `return=minimal` leaves the document out of the answer. Other preferences, and a malformed one, are ignored.
                 * @example wait=10
                 */
                Prefer?: components["parameters"]["Prefer"];
                /** @description The SHA-256 of the body (64 hex digits): the upload fails 400 `checksum_mismatch` if the bytes differ, and a replay of the same Idempotency-Key naming other bytes is 409 `idempotency_key_reused`. */
                "Content-SHA256"?: components["parameters"]["Content-SHA256"];
            };
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/octet-stream": string;
            };
        };
        responses: {
            /** @description The operation is done: it finished within the request's `Prefer: wait=N`, or this is a replay (same Idempotency-Key and request) of one that is done. */
            200: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActivateWorktreeResourceOperation"] | components["schemas"]["AddWorktreeUnitOperation"] | components["schemas"]["CreateBlobResourceOperation"] | components["schemas"]["CreateResourceOperation"] | components["schemas"]["CreateWorktreeOperation"] | components["schemas"]["CreateWorktreeUnitOperation"] | components["schemas"]["DeleteAccountOperation"] | components["schemas"]["DeleteSpaceOperation"] | components["schemas"]["DiscardWorktreeOperation"] | components["schemas"]["ExportTakeoutOperation"] | components["schemas"]["ExportUnitOperation"] | components["schemas"]["ImportFileOperation"] | components["schemas"]["MergeWorktreeOperation"] | components["schemas"]["PublishAssetOperation"] | components["schemas"]["PurgeTrashOperation"] | components["schemas"]["ReplaceBlobContentOperation"];
                };
            };
            /** @description Stored; publishing (or a replay while not done). */
            202: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActivateWorktreeResourceOperation"] | components["schemas"]["AddWorktreeUnitOperation"] | components["schemas"]["CreateBlobResourceOperation"] | components["schemas"]["CreateResourceOperation"] | components["schemas"]["CreateWorktreeOperation"] | components["schemas"]["CreateWorktreeUnitOperation"] | components["schemas"]["DeleteAccountOperation"] | components["schemas"]["DeleteSpaceOperation"] | components["schemas"]["DiscardWorktreeOperation"] | components["schemas"]["ExportTakeoutOperation"] | components["schemas"]["ExportUnitOperation"] | components["schemas"]["ImportFileOperation"] | components["schemas"]["MergeWorktreeOperation"] | components["schemas"]["PublishAssetOperation"] | components["schemas"]["PurgeTrashOperation"] | components["schemas"]["ReplaceBlobContentOperation"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            411: components["responses"]["LengthRequired"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listChangesets: {
        parameters: {
            query?: {
                /** @description The revision the client holds: changesets of later revisions are listed. */
                after?: components["parameters"]["afterQuery"];
                /** @description Page size. */
                limit?: components["parameters"]["limit"];
            };
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ChangesetList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            410: components["responses"]["Gone"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    applyChangeset: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description `wait=<seconds>` (RFC 7240): wait up to that long (at most 60 s) for the operation to be done and answer 200 with it (and `Preference-Applied`) instead of 202 at once: one request instead of a POST and a long-poll. Still 202 if it is not done by then, if the server's long-poll slots are taken, or if the operation could not be read while waiting (the submission stands either way). On a changeset (`POST /api/units/{unit_id}/changesets`), `return=minimal` leaves the document out of the answer. Other preferences, and a malformed one, are ignored.
                 * @example wait=10
                 */
                Prefer?: components["parameters"]["Prefer"];
            };
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "base_revision": 0,
                 *       "changes": [
                 *         {
                 *           "op": "add",
                 *           "path": "/body/title",
                 *           "value": "Hello"
                 *         }
                 *       ]
                 *     }
                 */
                "application/json": components["schemas"]["ChangesetRequest"];
            };
        };
        responses: {
            /** @description Applied. */
            200: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ChangesetResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listUnitComments: {
        parameters: {
            query?: {
                /** @description `true`: only solved threads; `false`: only open ones; absent: all. */
                solved?: components["parameters"]["solvedQuery"];
                /** @description Page size. */
                limit?: components["parameters"]["limit"];
                /** @description `next_cursor` of the page before. */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CommentThreadList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createUnitComment: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "anchor": {
                 *         "sheet": "s1",
                 *         "range": "B2:C4"
                 *       },
                 *       "body": "Is this total right?"
                 *     }
                 */
                "application/json": components["schemas"]["CreateCommentRequest"];
            };
        };
        responses: {
            /** @description created */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UnitComment"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    exportUnit: {
        parameters: {
            query?: never;
            header: {
                /**
                 * @description Repeating a request with the same key (and body) answers with the same operation instead of starting another one.
                 * @example create-q3-plans-2026-01-31
                 */
                "Idempotency-Key": components["parameters"]["Idempotency-Key"];
                /**
                 * @description `wait=<seconds>` (RFC 7240): wait up to that long (at most 60 s) for the operation to be done and answer 200 with it (and `Preference-Applied`) instead of 202 at once: one request instead of a POST and a long-poll. Still 202 if it is not done by then, if the server's long-poll slots are taken, or if the operation could not be read while waiting (the submission stands either way). On a changeset (`POST /api/units/{unit_id}/changesets`), `return=minimal` leaves the document out of the answer. Other preferences, and a malformed one, are ignored.
                 * @example wait=10
                 */
                Prefer?: components["parameters"]["Prefer"];
            };
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "format": "xlsx"
                 *     }
                 */
                "application/json": components["schemas"]["ExportRequest"];
            };
        };
        responses: {
            /** @description The operation is done: it finished within the request's `Prefer: wait=N`, or this is a replay (same Idempotency-Key and request) of one that is done. */
            200: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActivateWorktreeResourceOperation"] | components["schemas"]["AddWorktreeUnitOperation"] | components["schemas"]["CreateBlobResourceOperation"] | components["schemas"]["CreateResourceOperation"] | components["schemas"]["CreateWorktreeOperation"] | components["schemas"]["CreateWorktreeUnitOperation"] | components["schemas"]["DeleteAccountOperation"] | components["schemas"]["DeleteSpaceOperation"] | components["schemas"]["DiscardWorktreeOperation"] | components["schemas"]["ExportTakeoutOperation"] | components["schemas"]["ExportUnitOperation"] | components["schemas"]["ImportFileOperation"] | components["schemas"]["MergeWorktreeOperation"] | components["schemas"]["PublishAssetOperation"] | components["schemas"]["PurgeTrashOperation"] | components["schemas"]["ReplaceBlobContentOperation"];
                };
            };
            /** @description Accepted (or a replay while not done). */
            202: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActivateWorktreeResourceOperation"] | components["schemas"]["AddWorktreeUnitOperation"] | components["schemas"]["CreateBlobResourceOperation"] | components["schemas"]["CreateResourceOperation"] | components["schemas"]["CreateWorktreeOperation"] | components["schemas"]["CreateWorktreeUnitOperation"] | components["schemas"]["DeleteAccountOperation"] | components["schemas"]["DeleteSpaceOperation"] | components["schemas"]["DiscardWorktreeOperation"] | components["schemas"]["ExportTakeoutOperation"] | components["schemas"]["ExportUnitOperation"] | components["schemas"]["ImportFileOperation"] | components["schemas"]["MergeWorktreeOperation"] | components["schemas"]["PublishAssetOperation"] | components["schemas"]["PurgeTrashOperation"] | components["schemas"]["ReplaceBlobContentOperation"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listPermissionObjects: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PermissionObjectList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createPermissionObject: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "Q3 totals",
                 *       "object_type": "range",
                 *       "target": "/body/sheets/s1/cellData/2",
                 *       "read_scope": "all_collaborators",
                 *       "edit_scope": "specified",
                 *       "strategies": {
                 *         "copy": "reader",
                 *         "print": "editor",
                 *         "export": "editor"
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["CreatePermissionObjectRequest"];
            };
        };
        responses: {
            /** @description created */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PermissionObject"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    restoreUnitRevision: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["RestoreRequest"];
            };
        };
        responses: {
            /** @description Restored. */
            200: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Unit"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listUnitRevisions: {
        parameters: {
            query?: {
                /** @description Page size. */
                limit?: components["parameters"]["limit"];
                /** @description `next_cursor` of the page before. */
                cursor?: components["parameters"]["cursor"];
                /** @description `session`: consecutive edits by one author within WHARF_HISTORY_SESSION_GAP seconds are one entry (`first_revision`..`revision`, `count`). */
                group?: components["parameters"]["groupQuery"];
            };
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RevisionList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getUnitRevision: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                revision: components["parameters"]["revision"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RevisionDetail"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getUnitRevisionSnapshot: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                revision: components["parameters"]["revision"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RevisionSnapshot"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    findUsers: {
        parameters: {
            query?: {
                /** @description The exact username, any case. */
                username?: components["parameters"]["usernameQuery"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UserRefList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    registerUser: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "username": "alice",
                 *       "password": "correct horse battery"
                 *     }
                 */
                "application/json": components["schemas"]["RegisterRequest"];
            };
        };
        responses: {
            /** @description registered */
            201: {
                headers: {
                    Location: components["headers"]["Location"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RegisterResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listWebhooks: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "url": "https://ci.example.com/wharf-hook",
                 *       "events": [
                 *         "operation.completed"
                 *       ]
                 *     }
                 */
                "application/json": components["schemas"]["CreateWebhookRequest"];
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookCreated"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                webhook_id: components["parameters"]["webhook_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Webhook"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                webhook_id: components["parameters"]["webhook_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description deleted */
            204: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listWebhookDeliveries: {
        parameters: {
            query?: {
                /** @description Page size. */
                limit?: components["parameters"]["limit"];
                /** @description `next_cursor` of the page before. */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                webhook_id: components["parameters"]["webhook_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookDeliveryList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    enableWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                webhook_id: components["parameters"]["webhook_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Webhook"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listWorktrees: {
        parameters: {
            query?: {
                /** @description `active` (default) or `processed` (merged or discarded). */
                scope?: components["parameters"]["scopeQuery"];
                /** @description Only user or only team worktrees. */
                kind?: components["parameters"]["WorktreeListQuery_kind"];
                /** @description Only the worktrees of this team space. */
                team_space_id?: components["parameters"]["team_space_idQuery"];
                /** @description Page size. */
                limit?: components["parameters"]["limit"];
                /** @description `next_cursor` of the page before. */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WorktreeList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createWorktree: {
        parameters: {
            query?: never;
            header: {
                /**
                 * @description Repeating a request with the same key (and body) answers with the same operation instead of starting another one.
                 * @example create-q3-plans-2026-01-31
                 */
                "Idempotency-Key": components["parameters"]["Idempotency-Key"];
                /**
                 * @description `wait=<seconds>` (RFC 7240): wait up to that long (at most 60 s) for the operation to be done and answer 200 with it (and `Preference-Applied`) instead of 202 at once: one request instead of a POST and a long-poll. Still 202 if it is not done by then, if the server's long-poll slots are taken, or if the operation could not be read while waiting (the submission stands either way). On a changeset (`POST /api/units/{unit_id}/changesets`), `return=minimal` leaves the document out of the answer. Other preferences, and a malformed one, are ignored.
                 * @example wait=10
                 */
                Prefer?: components["parameters"]["Prefer"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "kind": "team",
                 *       "name": "Q3 plan review",
                 *       "team_space_id": "0f8fad5bd9cb469fa16570867728950e",
                 *       "visibility": "space"
                 *     }
                 */
                "application/json": components["schemas"]["CreateWorktreeRequest"];
            };
        };
        responses: {
            /** @description The operation is done: it finished within the request's `Prefer: wait=N`, or this is a replay (same Idempotency-Key and request) of one that is done. */
            200: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActivateWorktreeResourceOperation"] | components["schemas"]["AddWorktreeUnitOperation"] | components["schemas"]["CreateBlobResourceOperation"] | components["schemas"]["CreateResourceOperation"] | components["schemas"]["CreateWorktreeOperation"] | components["schemas"]["CreateWorktreeUnitOperation"] | components["schemas"]["DeleteAccountOperation"] | components["schemas"]["DeleteSpaceOperation"] | components["schemas"]["DiscardWorktreeOperation"] | components["schemas"]["ExportTakeoutOperation"] | components["schemas"]["ExportUnitOperation"] | components["schemas"]["ImportFileOperation"] | components["schemas"]["MergeWorktreeOperation"] | components["schemas"]["PublishAssetOperation"] | components["schemas"]["PurgeTrashOperation"] | components["schemas"]["ReplaceBlobContentOperation"];
                };
            };
            /** @description Accepted (or a replay while not done). */
            202: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActivateWorktreeResourceOperation"] | components["schemas"]["AddWorktreeUnitOperation"] | components["schemas"]["CreateBlobResourceOperation"] | components["schemas"]["CreateResourceOperation"] | components["schemas"]["CreateWorktreeOperation"] | components["schemas"]["CreateWorktreeUnitOperation"] | components["schemas"]["DeleteAccountOperation"] | components["schemas"]["DeleteSpaceOperation"] | components["schemas"]["DiscardWorktreeOperation"] | components["schemas"]["ExportTakeoutOperation"] | components["schemas"]["ExportUnitOperation"] | components["schemas"]["ImportFileOperation"] | components["schemas"]["MergeWorktreeOperation"] | components["schemas"]["PublishAssetOperation"] | components["schemas"]["PurgeTrashOperation"] | components["schemas"]["ReplaceBlobContentOperation"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getWorktree: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                worktree_id: components["parameters"]["worktree_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WorktreeDetail"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    updateWorktree: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                worktree_id: components["parameters"]["worktree_id"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "Q3 plan review (final)"
                 *     }
                 */
                "application/json": components["schemas"]["UpdateWorktreeRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WorktreeDetail"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getWorktreeAssetContent: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description One byte range (`bytes=0-99`, `bytes=100-`, `bytes=-100`): 206 with that part; a range beyond the end is 416. Several ranges or a malformed value: the whole content (200).
                 * @example bytes=0-1023
                 */
                Range?: components["parameters"]["Range"];
                /** @description Serve `Range` only if the ETag still matches (else the whole content). */
                "If-Range"?: components["parameters"]["If-Range"];
                /** @description ETags of the copy the client has (or `*`): 304 if one is current. */
                "If-None-Match"?: components["parameters"]["If-None-Match"];
            };
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                worktree_id: components["parameters"]["worktree_id"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                asset_id: components["parameters"]["asset_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The bytes as an attachment. */
            200: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "Accept-Ranges": components["headers"]["Accept-Ranges"];
                    "Content-Disposition": components["headers"]["Content-Disposition"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/octet-stream": string;
                    "*/*": string;
                };
            };
            /** @description One byte range (`Range`). */
            206: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "Accept-Ranges": components["headers"]["Accept-Ranges"];
                    "Content-Disposition": components["headers"]["Content-Disposition"];
                    "Content-Range": components["headers"]["Content-Range"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/octet-stream": string;
                    "*/*": string;
                };
            };
            /** @description Not modified (`If-None-Match`). */
            304: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "Accept-Ranges": components["headers"]["Accept-Ranges"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            /** @description The range starts beyond the content. */
            416: {
                headers: {
                    "Content-Range": components["headers"]["Content-Range"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"];
                };
            };
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getWorktreeAssetContentHead: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description One byte range (`bytes=0-99`, `bytes=100-`, `bytes=-100`): 206 with that part; a range beyond the end is 416. Several ranges or a malformed value: the whole content (200).
                 * @example bytes=0-1023
                 */
                Range?: components["parameters"]["Range"];
                /** @description Serve `Range` only if the ETag still matches (else the whole content). */
                "If-Range"?: components["parameters"]["If-Range"];
                /** @description ETags of the copy the client has (or `*`): 304 if one is current. */
                "If-None-Match"?: components["parameters"]["If-None-Match"];
            };
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                worktree_id: components["parameters"]["worktree_id"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                asset_id: components["parameters"]["asset_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The bytes as an attachment. */
            200: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "Accept-Ranges": components["headers"]["Accept-Ranges"];
                    "Content-Disposition": components["headers"]["Content-Disposition"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description One byte range (`Range`). */
            206: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "Accept-Ranges": components["headers"]["Accept-Ranges"];
                    "Content-Disposition": components["headers"]["Content-Disposition"];
                    "Content-Range": components["headers"]["Content-Range"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Not modified (`If-None-Match`). */
            304: {
                headers: {
                    ETag: components["headers"]["ETag"];
                    "Accept-Ranges": components["headers"]["Accept-Ranges"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            /** @description The range starts beyond the content. */
            416: {
                headers: {
                    "Content-Range": components["headers"]["Content-Range"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    discardWorktree: {
        parameters: {
            query?: never;
            header: {
                /**
                 * @description Repeating a request with the same key (and body) answers with the same operation instead of starting another one.
                 * @example create-q3-plans-2026-01-31
                 */
                "Idempotency-Key": components["parameters"]["Idempotency-Key"];
                /**
                 * @description `wait=<seconds>` (RFC 7240): wait up to that long (at most 60 s) for the operation to be done and answer 200 with it (and `Preference-Applied`) instead of 202 at once: one request instead of a POST and a long-poll. Still 202 if it is not done by then, if the server's long-poll slots are taken, or if the operation could not be read while waiting (the submission stands either way). On a changeset (`POST /api/units/{unit_id}/changesets`), `return=minimal` leaves the document out of the answer. Other preferences, and a malformed one, are ignored.
                 * @example wait=10
                 */
                Prefer?: components["parameters"]["Prefer"];
            };
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                worktree_id: components["parameters"]["worktree_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The operation is done: it finished within the request's `Prefer: wait=N`, or this is a replay (same Idempotency-Key and request) of one that is done. */
            200: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActivateWorktreeResourceOperation"] | components["schemas"]["AddWorktreeUnitOperation"] | components["schemas"]["CreateBlobResourceOperation"] | components["schemas"]["CreateResourceOperation"] | components["schemas"]["CreateWorktreeOperation"] | components["schemas"]["CreateWorktreeUnitOperation"] | components["schemas"]["DeleteAccountOperation"] | components["schemas"]["DeleteSpaceOperation"] | components["schemas"]["DiscardWorktreeOperation"] | components["schemas"]["ExportTakeoutOperation"] | components["schemas"]["ExportUnitOperation"] | components["schemas"]["ImportFileOperation"] | components["schemas"]["MergeWorktreeOperation"] | components["schemas"]["PublishAssetOperation"] | components["schemas"]["PurgeTrashOperation"] | components["schemas"]["ReplaceBlobContentOperation"];
                };
            };
            /** @description Accepted (or a replay while not done). */
            202: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActivateWorktreeResourceOperation"] | components["schemas"]["AddWorktreeUnitOperation"] | components["schemas"]["CreateBlobResourceOperation"] | components["schemas"]["CreateResourceOperation"] | components["schemas"]["CreateWorktreeOperation"] | components["schemas"]["CreateWorktreeUnitOperation"] | components["schemas"]["DeleteAccountOperation"] | components["schemas"]["DeleteSpaceOperation"] | components["schemas"]["DiscardWorktreeOperation"] | components["schemas"]["ExportTakeoutOperation"] | components["schemas"]["ExportUnitOperation"] | components["schemas"]["ImportFileOperation"] | components["schemas"]["MergeWorktreeOperation"] | components["schemas"]["PublishAssetOperation"] | components["schemas"]["PurgeTrashOperation"] | components["schemas"]["ReplaceBlobContentOperation"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listWorktreeEvents: {
        parameters: {
            query?: {
                /** @description Page size. */
                limit?: components["parameters"]["limit"];
                /** @description `next_cursor` of the page before. */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                worktree_id: components["parameters"]["worktree_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WorktreeEventList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    mergeWorktree: {
        parameters: {
            query?: never;
            header: {
                /**
                 * @description Repeating a request with the same key (and body) answers with the same operation instead of starting another one.
                 * @example create-q3-plans-2026-01-31
                 */
                "Idempotency-Key": components["parameters"]["Idempotency-Key"];
                /**
                 * @description `wait=<seconds>` (RFC 7240): wait up to that long (at most 60 s) for the operation to be done and answer 200 with it (and `Preference-Applied`) instead of 202 at once: one request instead of a POST and a long-poll. Still 202 if it is not done by then, if the server's long-poll slots are taken, or if the operation could not be read while waiting (the submission stands either way). On a changeset (`POST /api/units/{unit_id}/changesets`), `return=minimal` leaves the document out of the answer. Other preferences, and a malformed one, are ignored.
                 * @example wait=10
                 */
                Prefer?: components["parameters"]["Prefer"];
            };
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                worktree_id: components["parameters"]["worktree_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The operation is done: it finished within the request's `Prefer: wait=N`, or this is a replay (same Idempotency-Key and request) of one that is done. */
            200: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActivateWorktreeResourceOperation"] | components["schemas"]["AddWorktreeUnitOperation"] | components["schemas"]["CreateBlobResourceOperation"] | components["schemas"]["CreateResourceOperation"] | components["schemas"]["CreateWorktreeOperation"] | components["schemas"]["CreateWorktreeUnitOperation"] | components["schemas"]["DeleteAccountOperation"] | components["schemas"]["DeleteSpaceOperation"] | components["schemas"]["DiscardWorktreeOperation"] | components["schemas"]["ExportTakeoutOperation"] | components["schemas"]["ExportUnitOperation"] | components["schemas"]["ImportFileOperation"] | components["schemas"]["MergeWorktreeOperation"] | components["schemas"]["PublishAssetOperation"] | components["schemas"]["PurgeTrashOperation"] | components["schemas"]["ReplaceBlobContentOperation"];
                };
            };
            /** @description Accepted (or a replay while not done). */
            202: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActivateWorktreeResourceOperation"] | components["schemas"]["AddWorktreeUnitOperation"] | components["schemas"]["CreateBlobResourceOperation"] | components["schemas"]["CreateResourceOperation"] | components["schemas"]["CreateWorktreeOperation"] | components["schemas"]["CreateWorktreeUnitOperation"] | components["schemas"]["DeleteAccountOperation"] | components["schemas"]["DeleteSpaceOperation"] | components["schemas"]["DiscardWorktreeOperation"] | components["schemas"]["ExportTakeoutOperation"] | components["schemas"]["ExportUnitOperation"] | components["schemas"]["ImportFileOperation"] | components["schemas"]["MergeWorktreeOperation"] | components["schemas"]["PublishAssetOperation"] | components["schemas"]["PurgeTrashOperation"] | components["schemas"]["ReplaceBlobContentOperation"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    markWorktreeReady: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                worktree_id: components["parameters"]["worktree_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Worktree"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    reopenWorktree: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                worktree_id: components["parameters"]["worktree_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Worktree"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    addWorktreeUnit: {
        parameters: {
            query?: never;
            header: {
                /**
                 * @description Repeating a request with the same key (and body) answers with the same operation instead of starting another one.
                 * @example create-q3-plans-2026-01-31
                 */
                "Idempotency-Key": components["parameters"]["Idempotency-Key"];
                /**
                 * @description `wait=<seconds>` (RFC 7240): wait up to that long (at most 60 s) for the operation to be done and answer 200 with it (and `Preference-Applied`) instead of 202 at once: one request instead of a POST and a long-poll. Still 202 if it is not done by then, if the server's long-poll slots are taken, or if the operation could not be read while waiting (the submission stands either way). On a changeset (`POST /api/units/{unit_id}/changesets`), `return=minimal` leaves the document out of the answer. Other preferences, and a malformed one, are ignored.
                 * @example wait=10
                 */
                Prefer?: components["parameters"]["Prefer"];
            };
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                worktree_id: components["parameters"]["worktree_id"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "source": "trunk",
                 *       "resource_id": "0f8fad5bd9cb469fa16570867728950e"
                 *     }
                 */
                "application/json": components["schemas"]["AddWorktreeUnitRequest"];
            };
        };
        responses: {
            /** @description The operation is done: it finished within the request's `Prefer: wait=N`, or this is a replay (same Idempotency-Key and request) of one that is done. */
            200: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActivateWorktreeResourceOperation"] | components["schemas"]["AddWorktreeUnitOperation"] | components["schemas"]["CreateBlobResourceOperation"] | components["schemas"]["CreateResourceOperation"] | components["schemas"]["CreateWorktreeOperation"] | components["schemas"]["CreateWorktreeUnitOperation"] | components["schemas"]["DeleteAccountOperation"] | components["schemas"]["DeleteSpaceOperation"] | components["schemas"]["DiscardWorktreeOperation"] | components["schemas"]["ExportTakeoutOperation"] | components["schemas"]["ExportUnitOperation"] | components["schemas"]["ImportFileOperation"] | components["schemas"]["MergeWorktreeOperation"] | components["schemas"]["PublishAssetOperation"] | components["schemas"]["PurgeTrashOperation"] | components["schemas"]["ReplaceBlobContentOperation"];
                };
            };
            /** @description Accepted (or a replay while not done). */
            202: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActivateWorktreeResourceOperation"] | components["schemas"]["AddWorktreeUnitOperation"] | components["schemas"]["CreateBlobResourceOperation"] | components["schemas"]["CreateResourceOperation"] | components["schemas"]["CreateWorktreeOperation"] | components["schemas"]["CreateWorktreeUnitOperation"] | components["schemas"]["DeleteAccountOperation"] | components["schemas"]["DeleteSpaceOperation"] | components["schemas"]["DiscardWorktreeOperation"] | components["schemas"]["ExportTakeoutOperation"] | components["schemas"]["ExportUnitOperation"] | components["schemas"]["ImportFileOperation"] | components["schemas"]["MergeWorktreeOperation"] | components["schemas"]["PublishAssetOperation"] | components["schemas"]["PurgeTrashOperation"] | components["schemas"]["ReplaceBlobContentOperation"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getWorktreeUnit: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                worktree_id: components["parameters"]["worktree_id"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WorktreeUnitDetail"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            410: components["responses"]["Gone"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    removeWorktreeUnit: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                worktree_id: components["parameters"]["worktree_id"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Removed. */
            204: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    updateWorktreeUnit: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                worktree_id: components["parameters"]["worktree_id"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "Budget 2027"
                 *     }
                 */
                "application/json": components["schemas"]["UpdateWorktreeUnitRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WorktreeUnit"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    activateWorktreeUnit: {
        parameters: {
            query?: never;
            header: {
                /**
                 * @description Repeating a request with the same key (and body) answers with the same operation instead of starting another one.
                 * @example create-q3-plans-2026-01-31
                 */
                "Idempotency-Key": components["parameters"]["Idempotency-Key"];
                /**
                 * @description `wait=<seconds>` (RFC 7240): wait up to that long (at most 60 s) for the operation to be done and answer 200 with it (and `Preference-Applied`) instead of 202 at once: one request instead of a POST and a long-poll. Still 202 if it is not done by then, if the server's long-poll slots are taken, or if the operation could not be read while waiting (the submission stands either way). On a changeset (`POST /api/units/{unit_id}/changesets`), `return=minimal` leaves the document out of the answer. Other preferences, and a malformed one, are ignored.
                 * @example wait=10
                 */
                Prefer?: components["parameters"]["Prefer"];
            };
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                worktree_id: components["parameters"]["worktree_id"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "target": {
                 *         "space_id": "0f8fad5bd9cb469fa16570867728950e",
                 *         "parent_id": null
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["ActivateUnitRequest"];
            };
        };
        responses: {
            /** @description The operation is done: it finished within the request's `Prefer: wait=N`, or this is a replay (same Idempotency-Key and request) of one that is done. */
            200: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActivateWorktreeResourceOperation"] | components["schemas"]["AddWorktreeUnitOperation"] | components["schemas"]["CreateBlobResourceOperation"] | components["schemas"]["CreateResourceOperation"] | components["schemas"]["CreateWorktreeOperation"] | components["schemas"]["CreateWorktreeUnitOperation"] | components["schemas"]["DeleteAccountOperation"] | components["schemas"]["DeleteSpaceOperation"] | components["schemas"]["DiscardWorktreeOperation"] | components["schemas"]["ExportTakeoutOperation"] | components["schemas"]["ExportUnitOperation"] | components["schemas"]["ImportFileOperation"] | components["schemas"]["MergeWorktreeOperation"] | components["schemas"]["PublishAssetOperation"] | components["schemas"]["PurgeTrashOperation"] | components["schemas"]["ReplaceBlobContentOperation"];
                };
            };
            /** @description Accepted (or a replay while not done). */
            202: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActivateWorktreeResourceOperation"] | components["schemas"]["AddWorktreeUnitOperation"] | components["schemas"]["CreateBlobResourceOperation"] | components["schemas"]["CreateResourceOperation"] | components["schemas"]["CreateWorktreeOperation"] | components["schemas"]["CreateWorktreeUnitOperation"] | components["schemas"]["DeleteAccountOperation"] | components["schemas"]["DeleteSpaceOperation"] | components["schemas"]["DiscardWorktreeOperation"] | components["schemas"]["ExportTakeoutOperation"] | components["schemas"]["ExportUnitOperation"] | components["schemas"]["ImportFileOperation"] | components["schemas"]["MergeWorktreeOperation"] | components["schemas"]["PublishAssetOperation"] | components["schemas"]["PurgeTrashOperation"] | components["schemas"]["ReplaceBlobContentOperation"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listWorktreeAssets: {
        parameters: {
            query?: {
                /** @description Page size. */
                limit?: components["parameters"]["limit"];
                /** @description `next_cursor` of the page before. */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                worktree_id: components["parameters"]["worktree_id"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AssetList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    uploadWorktreeAsset: {
        parameters: {
            query?: {
                /** @description The original file name (for `Content-Disposition`); default `asset`. No control characters or `/`. */
                filename?: components["parameters"]["filenameQuery"];
            };
            header: {
                /**
                 * @description Repeating a request with the same key (and body) answers with the same operation instead of starting another one.
                 * @example create-q3-plans-2026-01-31
                 */
                "Idempotency-Key": components["parameters"]["Idempotency-Key"];
                /**
                 * @description `wait=<seconds>` (RFC 7240): wait up to that long (at most 60 s) for the operation to be done and answer 200 with it (and `Preference-Applied`) instead of 202 at once: one request instead of a POST and a long-poll. Still 202 if it is not done by then, if the server's long-poll slots are taken, or if the operation could not be read while waiting (the submission stands either way). On a changeset (`POST /api/units/{unit_id}/changesets`), `return=minimal` leaves the document out of the answer. Other preferences, and a malformed one, are ignored.
                 * @example wait=10
                 */
                Prefer?: components["parameters"]["Prefer"];
                /** @description The SHA-256 of the body (64 hex digits): the upload fails 400 `checksum_mismatch` if the bytes differ, and a replay of the same Idempotency-Key naming other bytes is 409 `idempotency_key_reused`. */
                "Content-SHA256"?: components["parameters"]["Content-SHA256"];
            };
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                worktree_id: components["parameters"]["worktree_id"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/octet-stream": string;
            };
        };
        responses: {
            /** @description The operation is done: it finished within the request's `Prefer: wait=N`, or this is a replay (same Idempotency-Key and request) of one that is done. */
            200: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActivateWorktreeResourceOperation"] | components["schemas"]["AddWorktreeUnitOperation"] | components["schemas"]["CreateBlobResourceOperation"] | components["schemas"]["CreateResourceOperation"] | components["schemas"]["CreateWorktreeOperation"] | components["schemas"]["CreateWorktreeUnitOperation"] | components["schemas"]["DeleteAccountOperation"] | components["schemas"]["DeleteSpaceOperation"] | components["schemas"]["DiscardWorktreeOperation"] | components["schemas"]["ExportTakeoutOperation"] | components["schemas"]["ExportUnitOperation"] | components["schemas"]["ImportFileOperation"] | components["schemas"]["MergeWorktreeOperation"] | components["schemas"]["PublishAssetOperation"] | components["schemas"]["PurgeTrashOperation"] | components["schemas"]["ReplaceBlobContentOperation"];
                };
            };
            /** @description Stored; publishing (or a replay while not done). */
            202: {
                headers: {
                    Location: components["headers"]["Location"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ActivateWorktreeResourceOperation"] | components["schemas"]["AddWorktreeUnitOperation"] | components["schemas"]["CreateBlobResourceOperation"] | components["schemas"]["CreateResourceOperation"] | components["schemas"]["CreateWorktreeOperation"] | components["schemas"]["CreateWorktreeUnitOperation"] | components["schemas"]["DeleteAccountOperation"] | components["schemas"]["DeleteSpaceOperation"] | components["schemas"]["DiscardWorktreeOperation"] | components["schemas"]["ExportTakeoutOperation"] | components["schemas"]["ExportUnitOperation"] | components["schemas"]["ImportFileOperation"] | components["schemas"]["MergeWorktreeOperation"] | components["schemas"]["PublishAssetOperation"] | components["schemas"]["PurgeTrashOperation"] | components["schemas"]["ReplaceBlobContentOperation"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            411: components["responses"]["LengthRequired"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    applyWorktreeChangeset: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description `wait=<seconds>` (RFC 7240): wait up to that long (at most 60 s) for the operation to be done and answer 200 with it (and `Preference-Applied`) instead of 202 at once: one request instead of a POST and a long-poll. Still 202 if it is not done by then, if the server's long-poll slots are taken, or if the operation could not be read while waiting (the submission stands either way). On a changeset (`POST /api/units/{unit_id}/changesets`), `return=minimal` leaves the document out of the answer. Other preferences, and a malformed one, are ignored.
                 * @example wait=10
                 */
                Prefer?: components["parameters"]["Prefer"];
            };
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                worktree_id: components["parameters"]["worktree_id"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "base_revision": 0,
                 *       "changes": [
                 *         {
                 *           "op": "add",
                 *           "path": "/body/title",
                 *           "value": "Hello"
                 *         }
                 *       ]
                 *     }
                 */
                "application/json": components["schemas"]["ChangesetRequest"];
            };
        };
        responses: {
            /** @description Applied. */
            200: {
                headers: {
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ChangesetResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            410: components["responses"]["Gone"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listUnitMergeConflicts: {
        parameters: {
            query?: {
                /** @description Page size. */
                limit?: components["parameters"]["limit"];
                /** @description `next_cursor` of the page before. */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                worktree_id: components["parameters"]["worktree_id"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ConflictList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            410: components["responses"]["Gone"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    previewUnitMerge: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                worktree_id: components["parameters"]["worktree_id"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MergePreview"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    rebaseWorktreeUnit: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                worktree_id: components["parameters"]["worktree_id"];
                /** @description An id (32 lowercase hex digits); unknown ids are 404. */
                unit_id: components["parameters"]["unit_id"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "draft_revision": 3,
                 *       "resolutions": [
                 *         {
                 *           "path": "/sheets/s1/cellData/0/0/v",
                 *           "take": "draft"
                 *         }
                 *       ]
                 *     }
                 */
                "application/json": components["schemas"]["RebaseRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RebaseResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deviceLoginPage: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the page */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deviceLoginScript: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the script */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "text/javascript": string;
                };
            };
            400: components["responses"]["BadRequest"];
            413: components["responses"]["PayloadTooLarge"];
        };
    };
    favicon: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description No icon. */
            204: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            413: components["responses"]["PayloadTooLarge"];
        };
    };
    healthz: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Health"];
                };
            };
            400: components["responses"]["BadRequest"];
            413: components["responses"]["PayloadTooLarge"];
        };
    };
    healthDetails: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HealthDetails"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            413: components["responses"]["PayloadTooLarge"];
            /** @description unavailable: the database does not answer */
            503: {
                headers: {
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HealthDetails"];
                };
            };
        };
    };
    metrics: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description text exposition format */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "text/plain": string;
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            413: components["responses"]["PayloadTooLarge"];
        };
    };
    dashboardPage: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the dashboard */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthenticated"];
            403: components["responses"]["Forbidden"];
            /** @description not an operator */
            404: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
            413: components["responses"]["PayloadTooLarge"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    dashboardStyle: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the stylesheet */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "text/css": string;
                };
            };
            400: components["responses"]["BadRequest"];
            413: components["responses"]["PayloadTooLarge"];
        };
    };
    dashboardScript: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description the script */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "text/javascript": string;
                };
            };
            400: components["responses"]["BadRequest"];
            413: components["responses"]["PayloadTooLarge"];
        };
    };
    readyz: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Readiness"];
                };
            };
            400: components["responses"]["BadRequest"];
            413: components["responses"]["PayloadTooLarge"];
            /** @description not ready: the database does not answer */
            503: {
                headers: {
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Readiness"];
                };
            };
        };
    };
}
type FlattenedDeepRequired<T> = {
    [K in keyof T]-?: FlattenedDeepRequired<T[K] extends unknown[] | undefined | null ? Extract<T[K], unknown[]>[number] : T[K]>;
};
type ReadonlyArray<T> = [
    Exclude<T, undefined>
] extends [
    unknown[]
] ? Readonly<Exclude<T, undefined>> : Readonly<Exclude<T, undefined>[]>;
export const activateWorktreeResourceOperationKindValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["ActivateWorktreeResourceOperation"]["kind"]> = ["activate_worktree_resource"];
export const addWorktreeUnitOperationKindValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["AddWorktreeUnitOperation"]["kind"]> = ["add_worktree_unit"];
export const attemptOutcomeValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["AttemptOutcome"]> = ["completed", "failed", "lost", "retry"];
export const authMethodValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["AuthMethod"]> = ["session", "token"];
export const batchItemRequestKindValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["BatchItemRequest"]["kind"]> = ["create_resource"];
export const blobRefKindValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["BlobRef"]["kind"]> = ["blob"];
export const blobStateValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["BlobState"]> = ["quarantined", "ready"];
export const checkStateValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["CheckState"]> = ["down", "ok"];
export const createBlobResourceOperationKindValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["CreateBlobResourceOperation"]["kind"]> = ["create_blob_resource"];
export const createResourceOperationKindValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["CreateResourceOperation"]["kind"]> = ["create_resource"];
export const createWorktreeOperationKindValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["CreateWorktreeOperation"]["kind"]> = ["create_worktree"];
export const createWorktreeUnitOperationKindValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["CreateWorktreeUnitOperation"]["kind"]> = ["create_worktree_unit"];
export const deleteAccountOperationKindValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["DeleteAccountOperation"]["kind"]> = ["delete_account"];
export const deleteSpaceOperationKindValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["DeleteSpaceOperation"]["kind"]> = ["delete_space"];
export const deliveryStatusValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["DeliveryStatus"]> = ["delivered", "failed", "pending"];
export const deviceAuthorizationStatusValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["DeviceAuthorization"]["status"]> = ["approved", "denied", "expired", "issued", "pending"];
export const deviceTokenIssuedToken_typeValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["DeviceTokenIssued"]["token_type"]> = ["Bearer"];
export const discardWorktreeOperationKindValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["DiscardWorktreeOperation"]["kind"]> = ["discard_worktree"];
export const editScopeValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["EditScope"]> = ["one_self", "specified"];
export const exportRequestFormatValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["ExportRequest"]["format"]> = ["csv", "docx", "pptx", "xlsx"];
export const exportTakeoutOperationKindValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["ExportTakeoutOperation"]["kind"]> = ["export_takeout"];
export const exportUnitOperationKindValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["ExportUnitOperation"]["kind"]> = ["export_unit"];
export const healthStatusValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["HealthStatus"]> = ["degraded", "ok", "unavailable"];
export const importFileOperationKindValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["ImportFileOperation"]["kind"]> = ["import_file"];
export const importRequestUnit_typeAnyOf0Values: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["ImportRequest"]["unit_type"]> = ["doc", "sheet", "slide"];
export const issueEventKindValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["IssueEventKind"]> = ["assigned", "closed", "labeled", "node_referenced", "node_unreferenced", "renamed", "reopened", "unassigned", "unlabeled"];
export const issueStateValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["IssueState"]> = ["closed", "open"];
export const issueStateReasonValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["IssueStateReason"]> = ["completed", "not_planned"];
export const labelColorValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["LabelColor"]> = ["blue", "gray", "green", "orange", "pink", "purple", "red", "yellow"];
export const memberRoleValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["MemberRole"]> = ["admin", "editor", "viewer"];
export const mergeStateValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["MergeState"]> = ["activation_blocked", "conflict", "created", "fast_forward", "merged", "pending", "unchanged"];
export const mergeWorktreeOperationKindValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["MergeWorktreeOperation"]["kind"]> = ["merge_worktree"];
export const objectRoleValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["ObjectRole"]> = ["editor", "viewer"];
export const operationStatusValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["OperationStatus"]> = ["completed", "failed", "pending", "running"];
export const originKindValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["Origin"]["kind"]> = ["edit", "merge", "restore"];
export const patchAddOpValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["PatchAdd"]["op"]> = ["add"];
export const patchCopyOpValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["PatchCopy"]["op"]> = ["copy"];
export const patchMoveOpValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["PatchMove"]["op"]> = ["move"];
export const patchRemoveOpValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["PatchRemove"]["op"]> = ["remove"];
export const patchReplaceOpValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["PatchReplace"]["op"]> = ["replace"];
export const patchTestOpValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["PatchTest"]["op"]> = ["test"];
export const previewOutcomeValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["PreviewOutcome"]> = ["conflict", "created", "fast_forward", "merged", "unchanged"];
export const problemCodeValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["ProblemCode"]> = ["access_denied", "account_deleted", "account_disabled", "activation_blocked", "ancestor_trashed", "anchor_too_large", "asset_too_large", "assignee_limit", "assignee_not_member", "authorization_pending", "bad_request", "batch_restored", "blob_not_found", "blob_store_bucket_missing", "blob_store_unavailable", "changeset_too_large", "checksum_mismatch", "comment_conflict", "comment_reply_limit", "comment_thread_limit", "comment_too_long", "confirm_name_mismatch", "conflict", "conversion_timeout", "corrupt_file", "cross_origin", "cross_space_move", "database_busy", "device_authorization_decided", "device_authorization_expired", "draft_purged", "draft_quota_exceeded", "expired_token", "external_identity_taken", "external_login_failed", "file_too_complex", "forbidden", "grants_not_allowed", "headers_too_large", "history_pruned", "http_error", "idempotency_key_required", "idempotency_key_reused", "incomplete_body", "insufficient_scope", "internal_error", "invalid_changeset", "invalid_credentials", "invalid_cursor", "invalid_grant", "invalid_idempotency_key", "invalid_metrics_token", "invalid_recovery_code", "invalid_request", "invalid_ticket", "invalid_token", "issue_label_limit", "issue_state", "label_limit", "label_name_taken", "last_login_method", "length_required", "malformed_json", "malformed_request", "merge_conflict", "method_not_allowed", "move_cycle", "new_owner_not_member", "no_session", "node_in_other_space", "node_ref_limit", "node_trashed", "not_a_member", "not_a_team_space", "not_a_unit", "not_acceptable", "not_blocked", "not_found", "not_local_unit", "not_trashed", "operation_state_conflict", "outside_team_space", "owner_not_grantee", "owner_not_member", "owner_required", "parent_in_other_space", "payload_too_large", "permission_revoked", "precondition_failed", "precondition_required", "protected_range", "provider_already_linked", "purge_forbidden", "purge_in_progress", "quarantined", "quota_exceeded", "range_not_satisfiable", "rate_limited", "reauthentication_required", "retry_not_possible", "revision_conflict", "service_unavailable", "size_mismatch", "slow_down", "space_deleted", "space_deleting", "space_read_only", "star_limit", "storage_failure", "token_cannot_mint", "too_many_requests", "transient_failure", "tree_too_deep", "unauthenticated", "unit_already_added", "unit_conflict", "unit_missing", "unit_too_deep", "unit_too_large", "unit_unavailable", "unitstore_unavailable", "unknown_conflict_path", "unknown_kind", "unsupported_format", "unsupported_grant_type", "unsupported_media_type", "upload_abandoned", "upload_expired", "upload_incomplete", "upload_not_received", "upload_session_expired", "upload_session_state", "uri_too_long", "user_not_found", "username_taken", "validation_failed", "verification_failed", "webhook_limit", "webhook_url_refused", "worktree_busy", "worktree_discarded", "worktree_limit", "worktree_reference", "worktree_state", "worktree_unit_limit"];
export const publishAssetOperationKindValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["PublishAssetOperation"]["kind"]> = ["publish_asset"];
export const purgeReasonValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["PurgeReason"]> = ["purge", "retention"];
export const purgeTrashOperationKindValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["PurgeTrashOperation"]["kind"]> = ["purge_trash"];
export const readScopeValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["ReadScope"]> = ["all_collaborators", "specified"];
export const replaceBlobContentOperationKindValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["ReplaceBlobContentOperation"]["kind"]> = ["replace_blob_content"];
export const resourceKindValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["ResourceKind"]> = ["blob", "unit"];
export const roleValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["Role"]> = ["admin", "editor", "owner", "viewer"];
export const shareRoleValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["ShareRole"]> = ["editor", "viewer"];
export const spaceTypeValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["SpaceType"]> = ["personal", "team"];
export const strategyLevelValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["StrategyLevel"]> = ["editor", "owner", "reader"];
export const takeValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["Take"]> = ["draft", "trunk"];
export const timelineCommentTypeValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["TimelineComment"]["type"]> = ["comment"];
export const timelineEventTypeValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["TimelineEvent"]["type"]> = ["event"];
export const tokenScopeValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["TokenScope"]> = ["read", "write"];
export const unitRefKindValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["UnitRef"]["kind"]> = ["unit"];
export const unitTypeValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["UnitType"]> = ["base", "board", "doc", "sheet", "slide"];
export const uploadStateValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["UploadState"]> = ["aborted", "completed", "expired", "failed", "imported", "importing", "uploaded", "verifying", "waiting_for_upload"];
export const webhookEventValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["WebhookEvent"]> = ["operation.completed", "operation.failed"];
export const worktreeEventKindValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["WorktreeEventKind"]> = ["target_purged", "unit_purged"];
export const worktreeKindValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["WorktreeKind"]> = ["team", "user"];
export const worktreeScopeValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["WorktreeScope"]> = ["active", "processed"];
export const worktreeStateValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["WorktreeState"]> = ["discarded", "discarding", "draft", "merged", "merging", "ready"];
export const worktreeUnitChangeValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["WorktreeUnit"]["change"]> = ["added", "modified", "unchanged"];
export const worktreeUnitActivationValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["WorktreeUnit"]["activation"]> = ["not_applicable", "waiting", "activated", "discarded", "blocked"];
export const worktreeUnitDetailChangeValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["WorktreeUnitDetail"]["change"]> = ["added", "modified", "unchanged"];
export const worktreeUnitDetailActivationValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["WorktreeUnitDetail"]["activation"]> = ["not_applicable", "waiting", "activated", "discarded", "blocked"];
export const worktreeUnitSourceValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["WorktreeUnitSource"]> = ["trunk", "worktree"];
export const worktreeVisibilityValues: ReadonlyArray<FlattenedDeepRequired<components>["schemas"]["WorktreeVisibility"]> = ["private", "space"];
export const componentsParametersSearchQuery_kindValues: ReadonlyArray<FlattenedDeepRequired<components>["parameters"]["SearchQuery_kind"]> = ["content", "name"];
export const componentsParametersGroupQueryValues: ReadonlyArray<FlattenedDeepRequired<components>["parameters"]["groupQuery"]> = ["session"];
export const componentsParametersKindQueryValues: ReadonlyArray<FlattenedDeepRequired<components>["parameters"]["kindQuery"]> = ["activate_worktree_resource", "add_worktree_unit", "create_blob_resource", "create_resource", "create_worktree", "create_worktree_unit", "delete_account", "delete_space", "discard_worktree", "export_takeout", "export_unit", "import_file", "merge_worktree", "publish_asset", "purge_trash", "replace_blob_content"];
export const componentsHeadersAcceptRangesValues: ReadonlyArray<FlattenedDeepRequired<components>["headers"]["Accept-Ranges"]> = ["bytes"];
