/**
 * Where an output keeps its trace document (see lazynb/notebook/viz.py): a %%tinygrad output stores it once, packed (gzip, then
 * base64) inside its text/html, and its application/vnd.lazynb.trace+json entry is a stub that says so and lists only
 * the kernels and timings. Older outputs hold the whole document in the MIME entry, or plain JSON in the text/html.
 */

/** The packed form lazynb writes. */
export const PACKED = 'gzip+base64';

const PAYLOAD_RE =
  /<script type="[^"]*" class="lazynb-trace"(?: data-encoding="([^"]*)")?>([\s\S]*?)<\/script>/;

/** The document's text in a text/html output, and its encoding ('' for plain JSON); null if there is none. */
export function payloadOf(
  html: unknown
): { encoding: string; text: string } | null {
  const page = Array.isArray(html) ? html.join('') : html;
  if (typeof page !== 'string') {
    return null;
  }
  const m = PAYLOAD_RE.exec(page);
  return m ? { encoding: m[1] ?? '', text: m[2] } : null;
}

/** Parse a document's text: plain JSON, or gzipped JSON in base64. */
export async function decodePayload(
  text: string,
  encoding: string
): Promise<unknown> {
  if (encoding === '') {
    return JSON.parse(text);
  }
  if (encoding !== PACKED) {
    throw new Error(`unknown trace encoding "${encoding}"`);
  }
  const bin = atob(text.trim());
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) {
    bytes[i] = bin.charCodeAt(i);
  }
  const stream = new Blob([bytes])
    .stream()
    .pipeThrough(new DecompressionStream('gzip'));
  return JSON.parse(await new Response(stream).text());
}

/** True if this MIME entry is a stub whose document is in the output's text/html. */
export function isStub(entry: unknown): boolean {
  return (
    typeof entry === 'object' &&
    entry !== null &&
    (entry as Record<string, unknown>).payload === 'text/html'
  );
}

/** The trace document of an output's MIME data: the entry itself, or the one its text/html holds. */
export async function documentOf(
  data: Record<string, unknown>,
  mime: string
): Promise<unknown> {
  const entry = data[mime];
  if (!isStub(entry)) {
    return entry;
  }
  const p = payloadOf(data['text/html']);
  if (p === null) {
    throw new Error('this output has no trace document: its text/html lost it');
  }
  return decodePayload(p.text, p.encoding);
}
