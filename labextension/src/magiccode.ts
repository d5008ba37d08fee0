/**
 * What the session panel sends to the kernel: `%tinygrad` lines that set the defaults for later
 * `%%tinygrad` cells, and the expression that reads those defaults (and the devices) back through
 * lazynb.notebook.labext. Pure.
 */

export interface ISessionSettings {
  debug: number;
  noopt: boolean;
  beam: number;
  /** null: keep the kernel's current device */
  device: string | null;
}

export interface IDeviceInfo {
  name: string;
  ok: boolean;
  why: string;
}

export interface IKernelState {
  session: ISessionSettings;
  devices: IDeviceInfo[];
  defaultDevice: string;
}

const DEVICE_RE = /^[A-Za-z][A-Za-z0-9_:]{0,31}$/;

function clampInt(v: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, Math.round(Number.isFinite(v) ? v : lo)));
}

/** `%tinygrad --debug N --noopt|--opt --beam N [--device NAME]`, with every value checked. */
export function magicLine(s: ISessionSettings): string {
  const parts = [
    '%tinygrad',
    '--debug',
    String(clampInt(s.debug, 0, 7)),
    s.noopt ? '--noopt' : '--opt',
    '--beam',
    String(clampInt(s.beam, 0, 8))
  ];
  if (s.device !== null && s.device !== '') {
    if (!DEVICE_RE.test(s.device)) {
      throw new Error(`not a device name: ${JSON.stringify(s.device)}`);
    }
    parts.push('--device', s.device);
  }
  return parts.join(' ');
}

/** The code the panel runs (silently): load the extension if needed, then set the defaults. */
export function panelCode(s: ISessionSettings): string {
  return `%load_ext lazynb\n${magicLine(s)}`;
}

/** A user expression whose value is the kernel's lazynb state as JSON. */
export const STATE_EXPRESSION =
  "__import__('lazynb.notebook.labext', fromlist=['state']).state()";

/** Read the state from a user_expressions result ({status, data: {'application/json' | 'text/plain'}}). */
export function parseState(result: unknown): IKernelState | null {
  const r = (result ?? {}) as {
    status?: string;
    data?: Record<string, unknown>;
  };
  if (r.status !== 'ok' || !r.data) {
    return null;
  }
  let v: unknown = r.data['application/json'];
  if (v === undefined && typeof r.data['text/plain'] === 'string') {
    try {
      v = JSON.parse(r.data['text/plain'] as string);
    } catch {
      return null;
    }
  }
  const o = (v ?? {}) as Record<string, unknown>;
  const sess = (o.session ?? {}) as Record<string, unknown>;
  const devices = Array.isArray(o.devices) ? o.devices : [];
  return {
    session: {
      debug: clampInt(Number(sess.debug ?? 0), 0, 7),
      noopt: sess.noopt === true,
      beam: clampInt(Number(sess.beam ?? 0), 0, 8),
      device: typeof sess.device === 'string' ? sess.device : null
    },
    devices: devices
      .map(d => (d ?? {}) as Record<string, unknown>)
      .filter(
        d => typeof d.name === 'string' && DEVICE_RE.test(d.name as string)
      )
      .map(d => ({
        name: d.name as string,
        ok: d.ok === true,
        why: typeof d.why === 'string' ? d.why : ''
      })),
    defaultDevice: typeof o.default_device === 'string' ? o.default_device : ''
  };
}
