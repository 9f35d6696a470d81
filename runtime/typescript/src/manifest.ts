// The manifest a server runs on, read as the kit's checks read it (YAML 1.2's core schema, merge
// keys), and its identity: the name, the version, the SHA-256 of the document as canonical JSON
// (RFC 8785) and `source.commit`, which the server announces under `_meta["holon/manifest"]`.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

export const MANIFEST_META_KEY = 'holon/manifest';

/** What the runtime reads of a checked manifest (`holon-test check` holds the rest). */
export interface Manifest {
  name: string;
  version: string;
  description: string;
  interface: {
    input: Record<string, unknown> & { type: 'object' };
    output: Record<string, unknown>;
    errors?: { code: string }[];
  };
  runtime: { tool: string; limits?: { timeout_s?: number; max_input_bytes?: number } };
  source?: { commit?: string };
}

/** The value announced under `holon/manifest`. */
export interface Identity {
  name: string;
  version: string;
  sha256: string;
  commit?: string;
}

/** The document as canonical JSON (RFC 8785): keys in UTF-16 order, ECMAScript's numbers. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

export function identity(document: Manifest): Identity {
  const sha256 = createHash('sha256').update(canonical(document)).digest('hex');
  const announced: Identity = { name: String(document.name), version: String(document.version), sha256 };
  if (typeof document.source?.commit === 'string') announced.commit = document.source.commit;
  return announced;
}

/** The manifest at `path`, read. */
export function load(path: string | URL): Manifest {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    console.error(`error: cannot read the manifest \`${String(path)}\`: ${(e as Error).message}`);
    process.exit(1);
  }
  return parse(text, { merge: true }) as Manifest;
}
