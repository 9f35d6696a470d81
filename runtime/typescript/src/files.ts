// `holon://files/` handles and `ctx.download`, as the Rust runtime does them.
//
// With each `tools/call` the gateway passes, in the request's `_meta` under `holon/files`, an
// object mapping each handle in the arguments to `{url, size, sha256, expires_at}` (seconds since
// the Unix epoch). Only that link is fetched, never a redirect, never after `expires_at`; the read
// stops one byte past `size`, and the bytes are returned only when the size and the SHA-256
// match. In the function mode, `holon://files/NAME` is `NAME` in the folder `HOLON_FILES` names
// (the `files/` folder beside the manifest), never outside it.

import { createHash } from 'node:crypto';
import { readFile, realpath } from 'node:fs/promises';
import { join, sep } from 'node:path';

export const HANDLE_PREFIX = 'holon://files/';
export const FILES_META_KEY = 'holon/files';

/** Why `ctx.download` returned no bytes: each cause its own `kind`. */
export type DownloadErrorKind =
  /** The string is not a `holon://files/NAME` handle. */
  | 'not_a_handle'
  /** The call carries no link for this handle. */
  | 'no_link'
  /** The link expired before the download (nothing was fetched). */
  | 'expired'
  /** The bytes are not the announced size (a longer body is read one byte past it). */
  | 'wrong_size'
  /** The bytes do not hash to the announced SHA-256. */
  | 'wrong_hash'
  /** The file server answered another status than 200 (`status`; a redirect is one). */
  | 'http'
  /** The link could not be fetched at all. */
  | 'unreachable'
  /** In the function mode: `files/NAME` is missing or leaves the folder. */
  | 'no_test_file';

/**
 * Why `ctx.download` returned no bytes. `kind` tells the causes apart, so the agent can map each
 * to a declared code: `if (e instanceof DownloadError) throw ctx.fail('file_unreadable', e.message)`.
 */
export class DownloadError extends Error {
  readonly kind: DownloadErrorKind;
  readonly handle: string;
  /** The HTTP status, for `http`. */
  readonly status: number | undefined;

  constructor(kind: DownloadErrorKind, handle: string, message: string, status?: number) {
    super(message);
    this.name = 'DownloadError';
    this.kind = kind;
    this.handle = handle;
    this.status = status;
  }
}

/** One signed link, as the gateway sends it. */
export interface FileLink {
  url: string;
  size: number;
  sha256: string;
  expires_at: number;
}

/** The links of a request's `_meta["holon/files"]`; a malformed entry gives none. */
export function linksFromMeta(meta: unknown): Map<string, FileLink> {
  const links = new Map<string, FileLink>();
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) {
    return links;
  }
  const count = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
  for (const [handle, link] of Object.entries(meta)) {
    if (typeof link !== 'object' || link === null) continue;
    const { url, size, sha256, expires_at: expiresAt, ...rest } = link as Record<string, unknown>;
    if (Object.keys(rest).length > 0) continue;
    if (typeof url === 'string' && typeof sha256 === 'string' && count(size) && count(expiresAt)) {
      links.set(handle, { url, size, sha256, expires_at: expiresAt });
    }
  }
  return links;
}

/** `NAME` of `holon://files/NAME`, or why it names nothing inside `files/`. */
function handleName(handle: string): string {
  const name = handle.slice(HANDLE_PREFIX.length);
  if (name === '') throw new Error('the handle names no file');
  if (name.includes('\\') || name.includes('\0')) throw new Error('a file name may not contain `\\` or NUL');
  if (name.startsWith('/') || name.split('/').some((part) => part === '' || part === '.' || part === '..')) {
    throw new Error('the name leaves the `files/` folder');
  }
  return name;
}

/** The function mode's `holon://files/NAME`: `NAME` in `folder`, never outside it. */
async function readTestFile(folder: string, handle: string): Promise<Uint8Array> {
  const fail = (why: string) => new DownloadError('no_test_file', handle, `no test file for \`${handle}\`: ${why}`);
  let name: string;
  try {
    name = handleName(handle);
  } catch (e) {
    throw fail((e as Error).message);
  }
  if (folder === '') throw fail('`HOLON_FILES` names no folder (the function mode is started by `holon-test`)');
  let root: string;
  let path: string;
  try {
    root = await realpath(folder);
    path = await realpath(join(root, name));
  } catch (e) {
    throw fail(`\`files/${name}\`: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
  // A symlink inside `files/` may not lead out of it either.
  if (!path.startsWith(root + sep)) throw fail('the file leaves the `files/` folder');
  try {
    return new Uint8Array(await readFile(path));
  } catch (e) {
    throw fail(`\`files/${name}\`: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
}

/** The bytes of `link`, checked; streamed, never more than `size + 1` bytes held. */
async function fetchLink(handle: string, link: FileLink, signal: AbortSignal): Promise<Uint8Array> {
  if (Date.now() / 1000 >= link.expires_at) {
    throw new DownloadError('expired', handle, `the link for \`${handle}\` expired at ${link.expires_at}`);
  }
  const unreachable = (why: string) => new DownloadError('unreachable', handle, `cannot fetch \`${handle}\`: ${why}`);
  let url: URL;
  try {
    url = new URL(link.url);
  } catch {
    throw unreachable('bad link');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw unreachable(`\`${url.protocol.slice(0, -1)}\` links are not fetched`);
  }
  const limit = link.size + 1;
  const chunks: Uint8Array[] = [];
  let held = 0;
  try {
    // The bytes as they are: no compression asked for, none undone; no redirect followed.
    const response = await fetch(url, { redirect: 'manual', headers: { 'accept-encoding': 'identity' }, signal });
    if (response.status !== 200) {
      await response.body?.cancel();
      const moved = response.status >= 300 && response.status < 400 ? ' (a redirect, not followed)' : '';
      throw new DownloadError(
        'http',
        handle,
        `fetching \`${handle}\` failed with HTTP ${response.status}${moved}`,
        response.status,
      );
    }
    const reader = response.body?.getReader();
    while (reader !== undefined) {
      const { done, value } = await reader.read();
      if (done) break;
      const kept = value.subarray(0, limit - held);
      chunks.push(kept);
      held += kept.length;
      if (held >= limit) {
        await reader.cancel();
        break;
      }
    }
  } catch (e) {
    if (e instanceof DownloadError || signal.aborted) throw e;
    const cause = (e as { cause?: { message?: string } }).cause?.message;
    throw unreachable(cause === undefined ? String(e) : `${(e as Error).message}: ${cause}`);
  }
  if (held !== link.size) {
    const got = held > link.size ? `more than ${link.size}` : String(held);
    throw new DownloadError('wrong_size', handle, `\`${handle}\` should be ${link.size} bytes, got ${got}`);
  }
  const bytes = new Uint8Array(held);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  if (createHash('sha256').update(bytes).digest('hex') !== link.sha256.toLowerCase()) {
    throw new DownloadError('wrong_hash', handle, `\`${handle}\` does not match its SHA-256`);
  }
  return bytes;
}

/** Where one call's files come from: its links, or the function mode's folder. */
export class Files {
  readonly #links: Map<string, FileLink>;
  readonly #folder: string | undefined;

  constructor(links: Map<string, FileLink>, folder?: string) {
    this.#links = links;
    this.#folder = folder;
  }

  static ofFunctionMode(): Files {
    return new Files(new Map(), process.env.HOLON_FILES ?? '');
  }

  async download(handle: string, signal: AbortSignal): Promise<Uint8Array> {
    if (typeof handle !== 'string' || !handle.startsWith(HANDLE_PREFIX)) {
      throw new DownloadError('not_a_handle', String(handle), `\`${handle}\` is not a file handle (\`${HANDLE_PREFIX}NAME\`)`);
    }
    if (this.#folder !== undefined) return readTestFile(this.#folder, handle);
    const link = this.#links.get(handle);
    if (link === undefined) throw new DownloadError('no_link', handle, `the call carries no link for \`${handle}\``);
    return fetchLink(handle, link, signal);
  }
}
