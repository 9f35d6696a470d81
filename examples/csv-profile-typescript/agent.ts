// The CSV profile agent in TypeScript: takes a CSV file as a `holon://files/` handle and returns
// its row count, its columns and the missing values in each. `node agent.ts` serves it (the
// `holon-kit` package); `holon-test` runs every example of holon.yaml through it, the files
// from `files/`.

import { DownloadError, serve } from 'holon-kit';

import type { Ctx, Input, Output } from './holon.types.ts';

/** The agent function. */
export async function run(input: Input, ctx: Ctx): Promise<Output> {
  let bytes: Uint8Array;
  try {
    bytes = await ctx.download(input.file);
  } catch (e) {
    // An expired link, a wrong size or checksum: the caller may upload the file again.
    if (e instanceof DownloadError) throw ctx.fail('file_unreadable', e.message);
    throw e;
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw ctx.fail('not_csv', 'the file is not UTF-8');
  }
  if (text.trim() === '') throw ctx.fail('empty_csv', 'the file is empty');
  const [header = [], ...records] = parse(text, input.delimiter ?? ',');
  const columns = header.map((name) => ({ name, missing: 0 }));
  for (const [at, record] of records.entries()) {
    if (record.length !== header.length) {
      throw ctx.fail('not_csv', `record ${at + 2} has ${record.length} fields, the header ${header.length}`);
    }
    record.forEach((cell, i) => {
      const column = columns[i];
      if (column !== undefined && cell.trim() === '') column.missing += 1;
    });
  }
  return { rows: records.length, columns };
}

/** The records of CSV text (RFC 4180: quoted fields, `""` for a quote), blank lines skipped. */
function parse(text: string, delimiter: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i += 1;
      } else if (c === '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c === '"') {
      quoted = true;
    } else if (c === delimiter) {
      record.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i += 1;
      record.push(field);
      if (record.length > 1 || record[0] !== '') records.push(record);
      record = [];
      field = '';
    } else {
      field += c;
    }
  }
  record.push(field);
  if (record.length > 1 || record[0] !== '') records.push(record);
  return records;
}

serve(run);
