// Listings are keyset pages: `{items, next_cursor}`, the next page asked with `cursor`.
import { unwrap } from "./client.js";

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

/** Every item of a listing, page after page:
 * `for await (const node of pages((cursor) => wharf.api.GET("/api/spaces/{space_id}/nodes",
 *     { params: { path: { space_id }, query: { limit: 100, cursor } } })))`. */
export async function* pages<T>(
  fetchPage: (cursor: string | undefined) => Promise<
    { data: Page<T>; error?: never; response: Response } | { data?: never; error: unknown; response: Response }>,
): AsyncGenerator<T, void, undefined> {
  let cursor: string | undefined;
  do {
    const page = await unwrap(fetchPage(cursor));
    yield* page.items;
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
}
