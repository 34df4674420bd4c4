// galaxy's paging (docs/galaxy.md#listing-ips): clamped page and size, and its exact arithmetic for the fields of a
// page, including its answers for a page past the end (`number` = the last page, `first` false).
// Counts are bigints: with an IPv6 range in the configuration the unfiltered list is that long.

export const DEFAULT_SIZE = 10;
const MAX_PAGE = 99999;
const MAX_SIZE = 9999;

export function clampPage(page: number | undefined): number {
  if (page === undefined || !Number.isFinite(page) || page < 0) return 0;
  return Math.min(Math.trunc(page), MAX_PAGE);
}

export function clampSize(size: number | undefined): number {
  if (size === undefined || !Number.isFinite(size) || size <= 0) return DEFAULT_SIZE;
  return Math.min(Math.trunc(size), MAX_SIZE);
}

export interface PageWindow {
  /** First rank on the page. */
  readonly start: bigint;
  /** One past the last rank on the page. */
  readonly end: bigint;
  readonly last: boolean;
  readonly totalElements: bigint;
  readonly totalPages: bigint;
  readonly first: boolean;
  readonly numberOfElements: number;
  readonly size: number;
  readonly number: bigint;
}

export function pageWindow(total: bigint, page: number, size: number): PageWindow {
  const s = BigInt(size);
  const start = BigInt(page) * s < total ? BigInt(page) * s : total;
  const end = start + s < total ? start + s : total;
  return {
    start,
    end,
    last: end >= total,
    totalElements: total,
    totalPages: (total + s - 1n) / s,
    first: start === 0n,
    numberOfElements: Number(end - start),
    size,
    number: start / s,
  };
}

/**
 * The page's JSON in galaxy's field order. Counts above 2^53 are written as exact integers (which
 * JSON allows), not rounded through a double; `content` is left out when the page is empty.
 */
export function pageBody(window: PageWindow, content: readonly unknown[]): { json?: object; text?: string } {
  const items = content.length > 0 ? { content } : {};
  if (window.totalElements <= BigInt(Number.MAX_SAFE_INTEGER)) {
    return {
      json: {
        last: window.last,
        totalElements: Number(window.totalElements),
        totalPages: Number(window.totalPages),
        first: window.first,
        numberOfElements: window.numberOfElements,
        size: window.size,
        number: Number(window.number),
        ...items,
      },
    };
  }
  // the text is put together field by field, each value where it belongs: a marker replaced in the
  // finished JSON would be replaced wherever it occurs, in a key or a name too, which callers write
  const counts =
    `{"last":${window.last},"totalElements":${window.totalElements},"totalPages":${window.totalPages},` +
    `"first":${window.first},"numberOfElements":${window.numberOfElements},"size":${window.size},` +
    `"number":${window.number}`;
  return { text: content.length > 0 ? `${counts},"content":${JSON.stringify(content)}}` : `${counts}}` };
}
