/**
 * The only way the views put anything on the page.
 *
 * Payload strings become Text nodes (createTextNode / textContent), never markup: nothing here or
 * anywhere else in the extension assigns innerHTML. Attributes go through `setSafeAttr`, which refuses
 * event handlers and script URLs, so even a mistake that passes payload into an attribute cannot run
 * code.
 */

export type Child = Node | string | number | null | undefined | false;

export interface IProps {
  /** space-separated class names */
  cls?: string;
  title?: string;
  /** other attributes: names are checked, values are set as plain strings */
  attrs?: Record<string, string | number | boolean>;
  /** data-* attributes */
  data?: Record<string, string | number>;
}

const SVG_NS = 'http://www.w3.org/2000/svg';
const URL_ATTRS = new Set([
  'href',
  'src',
  'xlink:href',
  'action',
  'formaction',
  'data',
  'srcdoc'
]);

/** True if an attribute may be set from code that handles payload values. */
export function isSafeAttr(name: string, value: string): boolean {
  const n = name.toLowerCase();
  if (
    !/^[a-z][a-z0-9_:.-]*$/.test(n) ||
    n.startsWith('on') ||
    n === 'style' ||
    n === 'srcdoc'
  ) {
    return false;
  }
  if (URL_ATTRS.has(n)) {
    // only same-document fragments: no javascript:, data: or remote URLs
    return /^#[\w-]*$/.test(value.trim());
  }
  return true;
}

export function setSafeAttr(
  node: Element,
  name: string,
  value: string | number | boolean
): void {
  const v = String(value);
  if (!isSafeAttr(name, v)) {
    throw new Error(`lazynb: refusing to set attribute ${name}`);
  }
  node.setAttribute(name, v);
}

function applyProps(node: Element, props: IProps | undefined): void {
  if (!props) {
    return;
  }
  if (props.cls) {
    node.setAttribute('class', props.cls);
  }
  if (props.title !== undefined) {
    if (node.namespaceURI === SVG_NS) {
      const t = node.ownerDocument.createElementNS(SVG_NS, 'title');
      t.textContent = props.title;
      node.appendChild(t);
    } else {
      (node as HTMLElement).title = props.title;
    }
  }
  for (const [k, v] of Object.entries(props.attrs ?? {})) {
    setSafeAttr(node, k, v);
  }
  for (const [k, v] of Object.entries(props.data ?? {})) {
    setSafeAttr(node, `data-${k}`, v);
  }
}

/** Append children: strings and numbers as Text nodes. */
export function append(node: Node, ...children: Child[]): void {
  const doc = node.ownerDocument ?? document;
  for (const c of children) {
    if (c === null || c === undefined || c === false) {
      continue;
    }
    node.appendChild(
      typeof c === 'string' || typeof c === 'number'
        ? doc.createTextNode(String(c))
        : c
    );
  }
}

/** An HTML element with text children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props?: IProps,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  applyProps(node, props);
  append(node, ...children);
  return node;
}

/** An SVG element. */
export function s<K extends keyof SVGElementTagNameMap>(
  tag: K,
  props?: IProps,
  ...children: Child[]
): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG_NS, tag);
  applyProps(node, props);
  append(node, ...children);
  return node;
}

/** Replace all children of `node`. */
export function setChildren(node: Node, ...children: Child[]): void {
  while (node.firstChild) {
    node.removeChild(node.firstChild);
  }
  append(node, ...children);
}

/** A string shortened to `max` characters with an ellipsis. */
export function clip(text: string, max: number): string {
  return text.length <= max
    ? text
    : text.slice(0, Math.max(0, max - 1)) + '\u2026';
}

/** Seconds as a short human string: 12.3 µs, 4.56 ms, 1.20 s. */
export function fmtSeconds(sec: number): string {
  if (!Number.isFinite(sec)) {
    return '-';
  }
  const a = Math.abs(sec);
  if (a === 0) {
    return '0 s';
  }
  if (a < 1e-3) {
    return `${(sec * 1e6).toFixed(1)} \u00b5s`;
  }
  if (a < 1) {
    return `${(sec * 1e3).toFixed(2)} ms`;
  }
  return `${sec.toFixed(2)} s`;
}

/** A count and its noun, the noun singular for 1: plural(1, 'kernel') is '1 kernel', plural(3, 'copy', 'copies'). */
export function plural(n: number, word: string, many = `${word}s`): string {
  return `${n} ${n === 1 ? word : many}`;
}

/** A Python-style tuple: (2,) or (2, 3). */
export function fmtTuple(xs: (number | string)[]): string {
  return xs.length === 1 ? `(${xs[0]},)` : `(${xs.join(', ')})`;
}
