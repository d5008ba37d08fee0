/**
 * The kernel-opt playground view (application/vnd.lazynb.playground+json, made by lazynb/notebook/playground.py):
 * the current opts, time and GFLOPS against the machine's peak, whether the result still equals the reference, the
 * loops with each axis' kind and colour, what each opt did, the index math, the source diff against the previous
 * state, the legal next opts and BEAM's rounds. The payload is untrusted: it is read field by field into typed data
 * and inserted as text only.
 */
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';
import { fmtSeconds, h, setChildren, plural } from './dom';
import { axisClass } from './stview';

export const PLAYGROUND_MIME = 'application/vnd.lazynb.playground+json';

type Obj = Record<string, unknown>;
const obj = (x: unknown): Obj =>
  x && typeof x === 'object' && !Array.isArray(x) ? (x as Obj) : {};
const arr = (x: unknown): unknown[] => (Array.isArray(x) ? x : []);
const str = (x: unknown): string =>
  typeof x === 'string' ? x : x === null || x === undefined ? '' : String(x);
const num = (x: unknown): number | null =>
  typeof x === 'number' && Number.isFinite(x) ? x : null;
const strs = (x: unknown): string[] => arr(x).map(str);

export interface ICandidate {
  opts: string[];
  seconds: number | null;
  runs: number;
}
export interface IBeamRound {
  round: number;
  candidates: ICandidate[];
  best: string[];
  bestS: number | null;
  improved: boolean;
}
export interface IPlaygroundDoc {
  kernel: string;
  device: string;
  opts: string[];
  timeS: number | null;
  runs: number;
  gflops: number;
  correct: boolean;
  maxError: number | null;
  reference: string;
  axes: { name: string; size: string; type: string; role: string }[];
  views: { access: string; buf: string; index: string; valid: string }[];
  source: string;
  diff: string[];
  previous: string[] | null;
  steps: { opt: string; explain: string }[];
  legal: { opt: string; explain: string }[];
  heuristic: { opts: string[]; timeS: number | null };
  peak: {
    numpyGflops: number | null;
    numpyWhat: string;
    cpuGflops: number | null;
    cpuWhat: string;
  };
  beam: {
    width: number;
    rounds: number;
    tried: number;
    seconds: number | null;
    start: ICandidate;
    path: string[][];
    winner: string[];
    detail: IBeamRound[];
  } | null;
  notes: string[];
}

function candidate(x: unknown): ICandidate {
  const c = obj(x);
  return {
    opts: strs(c.opts),
    seconds: num(c.seconds),
    runs: num(c.runs) ?? 1
  };
}

export function readPlayground(data: unknown): IPlaygroundDoc {
  const d = obj(data);
  const s = obj(d.state);
  const names = strs(s.axis_names);
  const sizes = arr(s.full_shape).map(str);
  const types = strs(s.axis_types);
  const roles = strs(s.roles);
  const b = d.beam === null || d.beam === undefined ? null : obj(d.beam);
  const pk = obj(d.peak);
  return {
    kernel: str(s.name),
    device: str(d.device),
    opts: strs(s.opts),
    timeS: num(s.time_s),
    runs: num(s.runs) ?? 0,
    gflops: num(s.gflops) ?? 0,
    correct: s.correct === true,
    maxError: num(s.max_error),
    reference: str(d.reference),
    axes: names.map((name, i) => ({
      name,
      size: sizes[i] ?? '',
      type: types[i] ?? '',
      role: roles[i] ?? ''
    })),
    views: arr(s.views)
      .map(obj)
      .filter(v => v.buf !== null && v.buf !== undefined)
      .map(v => ({
        access: str(v.access),
        buf: str(v.buf),
        index: str(v.index),
        valid: str(v.valid)
      })),
    source: str(s.source),
    diff: strs(d.diff).slice(0, 2000),
    previous: d.previous ? strs(obj(d.previous).opts) : null,
    steps: arr(d.steps)
      .map(obj)
      .map(x => ({ opt: str(x.opt), explain: str(x.explain) })),
    legal: arr(d.legal)
      .map(obj)
      .map(x => ({ opt: str(x.opt), explain: str(x.explain) })),
    heuristic: {
      opts: strs(obj(d.heuristic).opts),
      timeS: num(obj(d.heuristic).time_s)
    },
    peak: {
      numpyGflops: num(pk.numpy_gflops),
      numpyWhat: str(pk.numpy_what),
      cpuGflops: num(obj(pk.cpu).gflops),
      cpuWhat: str(pk.cpu_what)
    },
    beam: b && {
      width: num(b.width) ?? 0,
      rounds: num(b.rounds) ?? 0,
      tried: num(b.tried) ?? 0,
      seconds: num(b.seconds),
      start: candidate(b.start),
      path: arr(b.path).map(strs),
      winner: strs(b.winner),
      detail: arr(b.rounds_detail)
        .map(obj)
        .map(r => ({
          round: num(r.round) ?? 0,
          candidates: arr(r.candidates).map(candidate),
          best: strs(r.best),
          bestS: num(r.best_s),
          improved: r.improved === true
        }))
    },
    notes: strs(d.notes)
  };
}

const optList = (xs: string[]): string =>
  xs.length ? xs.join(', ') : 'none (NOOPT)';
const after = (text: string): string => text.slice(text.indexOf(': ') + 2);
const secs = (x: number | null): string =>
  x === null ? 'failed' : fmtSeconds(x);

function beamView(b: NonNullable<IPlaygroundDoc['beam']>): HTMLElement {
  const rounds = b.detail.map(r => {
    const ranked = [...r.candidates].sort(
      (x, y) => (x.seconds ?? Infinity) - (y.seconds ?? Infinity)
    );
    const best = r.best.join('|');
    const rows = ranked.map(c =>
      h(
        'tr',
        { cls: c.opts.join('|') === best ? 'lz-pg-best' : '' },
        h('td', {}, h('code', {}, c.opts.join(', '))),
        h('td', { cls: 'lz-num' }, secs(c.seconds)),
        h('td', { cls: 'lz-num' }, String(c.runs))
      )
    );
    return h(
      'details',
      { cls: 'lz-pg-round' },
      h(
        'summary',
        {},
        `round ${r.round}: ${plural(r.candidates.length, 'candidate')}, best ${secs(r.bestS)} ${r.improved ? '(faster: kept)' : '(not faster: search stops)'}`
      ),
      h(
        'table',
        { cls: 'lz-table' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            h('th', {}, 'opts'),
            h('th', {}, 'time'),
            h('th', {}, 'runs')
          )
        ),
        h('tbody', {}, ...rows)
      )
    );
  });
  return h(
    'div',
    { cls: 'lz-pg-beam' },
    h(
      'div',
      { cls: 'lz-pane-title' },
      `BEAM ${b.width}: ${plural(b.rounds, 'round')}, ${plural(b.tried, 'kernel')} timed`
    ),
    h(
      'div',
      { cls: 'lz-small' },
      'start (heuristic): ',
      h('code', {}, b.start.opts.join(', ')),
      ` ${secs(b.start.seconds)} \u00b7 winner: `,
      h('code', {}, b.winner.join(', '))
    ),
    h(
      'div',
      { cls: 'lz-small lz-pg-path' },
      'path: ',
      b.path.map(p => `[${p.join(', ')}]`).join(' \u2192 ')
    ),
    ...rounds
  );
}

export function playgroundNode(d: IPlaygroundDoc): HTMLElement {
  const pct = d.peak.numpyGflops
    ? ` \u00b7 ${((d.gflops / d.peak.numpyGflops) * 100).toFixed(0)}% of ${d.peak.numpyGflops.toFixed(1)} GFLOPS, ${d.peak.numpyWhat}`
    : '';
  const axes = h(
    'table',
    { cls: 'lz-table lz-pg-axes' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ...['axis', 'size', 'kind', 'what it does'].map(t => h('th', {}, t))
      )
    ),
    h(
      'tbody',
      {},
      ...d.axes.map(a =>
        h(
          'tr',
          {},
          h('td', { cls: axisClass(a.type) }, a.name),
          h('td', { cls: 'lz-num' }, a.size),
          h('td', { cls: axisClass(a.type) }, a.type.toLowerCase()),
          h('td', { cls: 'lz-dim' }, a.role)
        )
      )
    )
  );
  const diff = d.diff.length
    ? h(
        'pre',
        { cls: 'lz-pg-diff' },
        ...d.diff.map(ln =>
          h(
            'span',
            {
              cls:
                ln.startsWith('+') && !ln.startsWith('+++')
                  ? 'lz-pg-add'
                  : ln.startsWith('-') && !ln.startsWith('---')
                    ? 'lz-pg-del'
                    : ''
            },
            ln + '\n'
          )
        )
      )
    : null;
  return h(
    'div',
    { cls: 'lz-pg-body' },
    h(
      'div',
      { cls: 'lz-summary' },
      h('b', {}, 'kernel-opt playground'),
      ` \u00b7 ${d.kernel} \u00b7 ${d.device}`
    ),
    h('div', { cls: 'lz-pg-opts' }, 'opts: ', h('code', {}, optList(d.opts))),
    h(
      'div',
      { cls: 'lz-pg-time' },
      `${secs(d.timeS)} (median of ${plural(d.runs, 'run')}) \u00b7 ${d.gflops.toFixed(2)} GFLOPS${pct}`
    ),
    d.peak.cpuGflops !== null
      ? h(
          'div',
          { cls: 'lz-small lz-dim' },
          `peak ${d.peak.cpuGflops.toFixed(0)} GFLOPS, ${d.peak.cpuWhat}`
        )
      : null,
    h(
      'div',
      { cls: 'lz-small' },
      'heuristic: ',
      h('code', {}, d.heuristic.opts.join(', ')),
      ` ${secs(d.heuristic.timeS)}`
    ),
    d.correct
      ? h('div', { cls: 'lz-pg-ok' }, `result equal to ${d.reference} \u2713`)
      : h(
          'div',
          { cls: 'lz-error lz-pg-wrong' },
          `WRONG RESULT: these opts changed the answer (largest error ${d.maxError ?? '?'} against ${d.reference}). An opt must never do that: this is a bug.`
        ),
    ...d.notes.slice(-5).map(n => h('div', { cls: 'lz-pg-note' }, n)),
    h('div', { cls: 'lz-pane-title' }, 'Loops'),
    axes,
    d.steps.length
      ? h('div', { cls: 'lz-pane-title' }, 'What each opt did')
      : null,
    d.steps.length
      ? h(
          'ol',
          { cls: 'lz-pg-steps' },
          ...d.steps.map(s =>
            h('li', {}, h('code', {}, s.opt), ': ', after(s.explain))
          )
        )
      : null,
    h('div', { cls: 'lz-pane-title' }, 'Index math'),
    h(
      'table',
      { cls: 'lz-table lz-pg-index' },
      h(
        'tbody',
        {},
        ...d.views.map(v =>
          h(
            'tr',
            {},
            h('td', {}, `${v.access} data${v.buf}`),
            h('td', {}, h('code', {}, v.index)),
            h('td', {}, h('code', {}, v.valid === 'True' ? '' : v.valid))
          )
        )
      )
    ),
    diff
      ? h(
          'div',
          { cls: 'lz-pane-title' },
          `Source diff against the previous state (${optList(d.previous ?? [])})`
        )
      : null,
    diff,
    h(
      'details',
      { cls: 'lz-pg-source', attrs: diff ? {} : { open: 'open' } },
      h('summary', {}, 'Source'),
      h('pre', { cls: 'lz-pg-src' }, d.source)
    ),
    d.beam ? beamView(d.beam) : null,
    h(
      'details',
      { cls: 'lz-pg-legal' },
      h('summary', {}, `${d.legal.length} legal next opts`),
      h(
        'ul',
        {},
        ...d.legal.map(o =>
          h(
            'li',
            {},
            h('code', {}, o.opt),
            ' ',
            h('span', { cls: 'lz-dim' }, after(o.explain))
          )
        )
      )
    )
  );
}

export class PlaygroundView extends Widget implements IRenderMime.IRenderer {
  constructor(private options: IRenderMime.IRendererOptions) {
    super();
    this.addClass('jp-RenderedLazynbPlayground');
    this.addClass('lz-trace');
    this.addClass('lz-pg');
  }
  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    setChildren(
      this.node,
      playgroundNode(
        readPlayground(model.data[this.options.mimeType ?? PLAYGROUND_MIME])
      )
    );
  }
}

export const playgroundExtension: IRenderMime.IExtension = {
  id: 'lazynb:playground-renderer',
  description:
    'Renders the lazynb kernel-opt playground: opts, loops, index math, source diff, timing and BEAM rounds.',
  rendererFactory: {
    safe: true,
    mimeTypes: [PLAYGROUND_MIME],
    defaultRank: 0,
    createRenderer: options => new PlaygroundView(options)
  },
  rank: 0,
  dataType: 'json'
};
