"use strict";(self.rspackChunklazynb=self.rspackChunklazynb||[]).push([[232],{475(o,r,l){var e=l(601),a=l.n(e),t=l(314),n=(l.n(t))()(a());n.push([o.id,`/*
 * lazynb trace renderer and tinygrad panel. Colours come from JupyterLab's theme variables, mixed
 * with the layout colour so the same rules work in light and dark themes.
 */

.lz-trace {
  --lz-alu: #4f8fd6;
  --lz-reduce: #d9534f;
  --lz-movement: #c9962b;
  --lz-memory: #3f9d62;
  --lz-buffer: #8b62c9;
  --lz-loop: #c06aa8;
  --lz-const: #8a8a8a;
  --lz-sink: #6b7b8c;
  --lz-other: #3fa3a3;
  --lz-hl: color-mix(in srgb, var(--jp-warn-color1, #f2a600) 32%, transparent);
  --lz-hl-strong: color-mix(
    in srgb,
    var(--jp-warn-color1, #f2a600) 55%,
    transparent
  );

  display: flex;
  flex-direction: column;
  height: 580px;
  min-height: 260px;
  resize: vertical;
  overflow: hidden;
  border: var(--jp-border-width, 1px) solid var(--jp-border-color2);
  border-radius: 3px;
  background: var(--jp-layout-color0);
  color: var(--jp-ui-font-color1);
  font-family: var(--jp-ui-font-family);
  font-size: var(--jp-ui-font-size1);
  line-height: 1.35;
  box-sizing: border-box;
}

.lz-trace *,
.lz-panel * {
  box-sizing: border-box;
}

.lz-trace code,
.lz-panel code {
  font-family: var(--jp-code-font-family);
  font-size: var(--jp-code-font-size);
}

.lz-summary {
  padding: 4px 8px;
  border-bottom: 1px solid var(--jp-border-color2);
  background: var(--jp-layout-color1);
}

.lz-chip {
  display: inline-block;
  margin-left: 6px;
  padding: 0 5px;
  border-radius: 8px;
  background: var(--jp-layout-color2);
  color: var(--jp-ui-font-color1);
  font-family: var(--jp-code-font-family);
  font-size: var(--jp-ui-font-size0);
}

.lz-error {
  margin-top: 3px;
  color: var(--jp-error-color1);
  white-space: pre-wrap;
}

.lz-warn {
  color: var(--jp-warn-color1);
}

.lz-dim {
  color: var(--jp-ui-font-color2);
}

.lz-small {
  font-size: var(--jp-ui-font-size0);
}

.lz-empty {
  padding: 8px;
  color: var(--jp-ui-font-color2);
  font-style: italic;
}

/* tabs */
.lz-tabs {
  display: flex;
  gap: 2px;
  padding: 3px 6px 0;
  border-bottom: 1px solid var(--jp-border-color2);
  background: var(--jp-layout-color1);
}

.lz-tab {
  padding: 3px 10px;
  border: 1px solid transparent;
  border-bottom: none;
  border-radius: 3px 3px 0 0;
  background: transparent;
  color: var(--jp-ui-font-color1);
  font: inherit;
  cursor: pointer;
}

.lz-tab:hover {
  background: var(--jp-layout-color2);
}

.lz-tab.lz-on {
  border-color: var(--jp-border-color2);
  background: var(--jp-layout-color0);
  color: var(--jp-ui-font-color0);
  font-weight: 600;
  margin-bottom: -1px;
}

.lz-body {
  flex: 1;
  min-height: 0;
  position: relative;
}

.lz-body > * {
  height: 100%;
}

.lz-body > [hidden] {
  display: none;
}

/* buttons and controls */
.lz-button,
.lz-seg {
  padding: 1px 7px;
  border: 1px solid var(--jp-border-color1);
  border-radius: 2px;
  background: var(--jp-layout-color1);
  color: var(--jp-ui-font-color1);
  font: inherit;
  cursor: pointer;
}

.lz-button:hover,
.lz-seg:hover {
  background: var(--jp-layout-color2);
}

.lz-seg {
  border-radius: 0;
  margin-right: -1px;
}

.lz-seg.lz-on {
  background: var(--jp-brand-color1);
  border-color: var(--jp-brand-color1);
  color: var(--jp-ui-inverse-font-color0, #fff);
}

.lz-seg:disabled {
  opacity: 0.45;
  cursor: default;
}

.lz-select {
  background: var(--jp-layout-color1);
  color: var(--jp-ui-font-color1);
  border: 1px solid var(--jp-border-color1);
  font: inherit;
}

.lz-link {
  padding: 0;
  border: none;
  background: none;
  color: inherit;
  font: inherit;
  text-align: left;
  cursor: pointer;
}

.lz-link:hover {
  text-decoration: underline;
}

.lz-toolbar {
  display: flex;
  flex-wrap: wrap;
  align-items: center;
  gap: 6px;
  padding: 3px 6px;
  min-height: 26px;
  border-bottom: 1px solid var(--jp-border-color2);
  background: var(--jp-layout-color1);
}

.lz-pane-title {
  font-weight: 600;
  color: var(--jp-ui-font-color0);
}

.lz-check {
  display: inline-flex;
  align-items: center;
  gap: 3px;
  cursor: pointer;
}

.lz-hint,
.lz-graph-info {
  color: var(--jp-ui-font-color2);
  font-size: var(--jp-ui-font-size0);
}

/* kernels tab: schedule list | kernel */
.lz-tab-kernels {
  display: grid;
  grid-template-columns: minmax(150px, 210px) minmax(0, 1fr);
}

.lz-schedule {
  overflow: auto;
  border-right: 1px solid var(--jp-border-color2);
  background: var(--jp-layout-color1);
}

.lz-sched-row {
  padding: 4px 6px;
  border-bottom: 1px solid var(--jp-border-color3, var(--jp-border-color2));
  cursor: pointer;
}

.lz-sched-row:hover {
  background: var(--jp-layout-color2);
}

.lz-sched-row.lz-selected {
  background: color-mix(
    in srgb,
    var(--jp-brand-color1) 18%,
    var(--jp-layout-color1)
  );
  box-shadow: inset 3px 0 0 var(--jp-brand-color1);
}

.lz-sched-head {
  font-family: var(--jp-code-font-family);
  overflow: hidden;
  text-overflow: ellipsis;
  white-space: nowrap;
}

.lz-sched-meta {
  font-size: var(--jp-ui-font-size0);
  color: var(--jp-ui-font-color2);
}

.lz-reason {
  padding: 0 4px;
  border-radius: 3px;
  color: var(--jp-ui-font-color1);
  background: var(--jp-layout-color3);
}

.lz-reason-realize {
  background: color-mix(in srgb, #4caf50 35%, var(--jp-layout-color1));
}

.lz-reason-reduce {
  background: color-mix(in srgb, #e57373 40%, var(--jp-layout-color1));
}

.lz-reason-copy {
  background: color-mix(in srgb, #64b5f6 40%, var(--jp-layout-color1));
}

.lz-reason-pad {
  background: color-mix(in srgb, #ffd54f 45%, var(--jp-layout-color1));
}

.lz-kname {
  font-family: var(--jp-code-font-family);
}

.lz-axis-global {
  color: color-mix(in srgb, #2f7fd8 85%, var(--jp-ui-font-color1));
}

.lz-axis-thread {
  color: color-mix(in srgb, #5aa9f0 85%, var(--jp-ui-font-color1));
}

.lz-axis-local {
  color: color-mix(in srgb, #1aa3a3 85%, var(--jp-ui-font-color1));
}

.lz-axis-group {
  color: color-mix(in srgb, #3c9a3c 85%, var(--jp-ui-font-color1));
}

.lz-axis-reduce {
  color: color-mix(in srgb, #d33c3c 85%, var(--jp-ui-font-color1));
}

.lz-axis-unroll {
  color: color-mix(in srgb, #b43cb4 85%, var(--jp-ui-font-color1));
}

.lz-axis-upcast {
  color: color-mix(in srgb, #c08a00 85%, var(--jp-ui-font-color1));
}

.lz-kernel {
  display: flex;
  flex-direction: column;
  min-width: 0;
  min-height: 0;
}

.lz-kernel-head {
  padding: 4px 8px;
  border-bottom: 1px solid var(--jp-border-color2);
}

.lz-panes {
  flex: 1;
  min-height: 0;
  display: grid;
  grid-template-columns: minmax(0, 1.25fr) minmax(0, 0.85fr) minmax(0, 1.3fr);
}

.lz-panes > * {
  min-width: 0;
  min-height: 0;
  border-right: 1px solid var(--jp-border-color2);
}

.lz-panes > *:last-child {
  border-right: none;
}

/* graph */
.lz-graph {
  display: flex;
  flex-direction: column;
  min-height: 0;
  height: 100%;
}

.lz-graph-canvas {
  flex: 1;
  min-height: 80px;
  position: relative;
  overflow: hidden;
  background: var(--jp-layout-color0);
}

.lz-graph-svg {
  position: absolute;
  inset: 0;
  width: 100%;
  height: 100%;
  cursor: grab;
  user-select: none;
  touch-action: none;
}

.lz-graph-svg.lz-panning {
  cursor: grabbing;
}

.lz-graph-detail {
  padding: 3px 6px;
  min-height: 22px;
  border-top: 1px solid var(--jp-border-color2);
  font-size: var(--jp-ui-font-size0);
  color: var(--jp-ui-font-color1);
  overflow: hidden;
  text-overflow: ellipsis;
  white-space: nowrap;
}

.lz-detail-arg {
  margin-left: 6px;
}

.lz-edge {
  fill: none;
  stroke: var(--jp-ui-font-color3, #999);
  stroke-width: 1.1px;
  vector-effect: non-scaling-stroke;
}

.lz-edge.lz-edge-on {
  stroke: var(--jp-brand-color1);
  stroke-width: 2.2px;
}

.lz-arrow {
  fill: var(--jp-ui-font-color3, #999);
}

.lz-node {
  cursor: pointer;
  --lz-c: var(--lz-other);
}

.lz-node rect {
  fill: color-mix(in srgb, var(--lz-c) 24%, var(--jp-layout-color0));
  stroke: var(--lz-c);
  stroke-width: 1.2px;
}

.lz-node text {
  fill: var(--jp-ui-font-color0);
  text-anchor: middle;
  font-family: var(--jp-code-font-family);
  pointer-events: none;
}

.lz-node-op {
  font-size: 11px;
  font-weight: 600;
}

.lz-node-arg {
  font-size: 9.5px;
  fill: var(--jp-ui-font-color1) !important;
}

.lz-node:hover rect {
  stroke-width: 2.4px;
}

.lz-node.lz-selected rect {
  stroke: var(--jp-brand-color1);
  stroke-width: 3px;
}

.lz-node.lz-linked rect {
  stroke-width: 2.4px;
}

.lz-kind-alu {
  --lz-c: var(--lz-alu);
}

.lz-kind-reduce {
  --lz-c: var(--lz-reduce);
}

.lz-kind-movement {
  --lz-c: var(--lz-movement);
}

.lz-kind-memory {
  --lz-c: var(--lz-memory);
}

.lz-kind-buffer {
  --lz-c: var(--lz-buffer);
}

.lz-kind-loop {
  --lz-c: var(--lz-loop);
}

.lz-kind-const {
  --lz-c: var(--lz-const);
}

.lz-kind-sink {
  --lz-c: var(--lz-sink);
}

/* ShapeTracker views */
.lz-st {
  display: flex;
  flex-direction: column;
}

.lz-st-body {
  flex: 1;
  overflow: auto;
  padding: 4px 6px;
}

.lz-axes {
  margin-bottom: 3px;
}

.lz-axis {
  display: inline-block;
  min-width: 18px;
  margin-right: 3px;
  padding: 0 3px;
  border: 1px solid currentcolor;
  border-radius: 3px;
  text-align: center;
  font-family: var(--jp-code-font-family);
}

.lz-access {
  margin-top: 6px;
  padding: 4px 6px;
  border: 1px solid var(--jp-border-color2);
  border-left: 3px solid var(--lz-memory);
  border-radius: 3px;
  background: var(--jp-layout-color1);
}

.lz-access-store {
  border-left-color: var(--lz-reduce);
}

.lz-access-const {
  border-left-color: var(--lz-const);
}

.lz-access-title {
  font-weight: 600;
}

.lz-expr code {
  word-break: break-all;
}

.lz-movement {
  font-family: var(--jp-code-font-family);
  font-size: var(--jp-ui-font-size0);
  word-break: break-all;
}

.lz-table {
  border-collapse: collapse;
  margin: 3px 0;
  font-size: var(--jp-ui-font-size0);
}

.lz-table th,
.lz-table td {
  padding: 1px 6px;
  border: 1px solid var(--jp-border-color2);
  text-align: left;
  font-family: var(--jp-code-font-family);
}

.lz-table th {
  background: var(--jp-layout-color2);
  font-weight: 600;
}

.lz-num {
  text-align: right !important;
  white-space: nowrap;
}

/* source and UOps */
.lz-code {
  display: flex;
  flex-direction: column;
}

.lz-source,
.lz-uops {
  position: relative;
  overflow: auto;
  font-family: var(--jp-code-font-family);
  font-size: var(--jp-code-font-size);
  background: var(--jp-cell-editor-background, var(--jp-layout-color1));
}

.lz-source {
  flex: 3;
  min-height: 60px;
}

.lz-uops {
  flex: 2;
  min-height: 60px;
}

.lz-line,
.lz-uop {
  white-space: pre;
  padding-right: 8px;
  line-height: 1.4;
}

/* a long C line wraps in a narrow pane, its continuation under the text (not the line number), instead of running out
   of sight */
.lz-source .lz-line {
  display: flex;
}

.lz-source .lz-lineno {
  flex: none;
}

.lz-source .lz-linetext {
  flex: 1;
  min-width: 0;
  white-space: pre-wrap;
  overflow-wrap: anywhere;
}

.lz-line.lz-mapped,
.lz-uop.lz-mapped {
  cursor: pointer;
}

.lz-line:hover,
.lz-uop:hover {
  background: var(--jp-layout-color2);
}

.lz-line.lz-lit,
.lz-uop.lz-lit {
  background: var(--lz-hl);
}

.lz-line.lz-lit:hover,
.lz-uop.lz-lit:hover {
  background: var(--lz-hl-strong);
}

.lz-lineno {
  display: inline-block;
  padding: 0 6px 0 4px;
  margin-right: 6px;
  color: var(--jp-ui-font-color3, var(--jp-ui-font-color2));
  border-right: 1px solid var(--jp-border-color2);
  user-select: none;
}

.lz-uop > span {
  margin-right: 8px;
}

.lz-uop-id {
  display: inline-block;
  min-width: 3.5em;
  padding-left: 4px;
  color: var(--jp-ui-font-color2);
}

.lz-uop-op {
  font-weight: 600;
  color: var(--jp-mirror-editor-keyword-color, var(--jp-ui-font-color0));
}

.lz-uop-dtype {
  color: var(--jp-mirror-editor-variable-2-color, var(--jp-ui-font-color2));
}

.lz-uop-src {
  color: var(--jp-ui-font-color2);
}

/* rewrites */
.lz-rewrites {
  display: flex;
  flex-direction: column;
}

.lz-step {
  padding: 4px 8px;
  border-bottom: 1px solid var(--jp-border-color2);
  min-height: 44px;
}

.lz-pattern {
  word-break: break-all;
}

.lz-before {
  color: var(--jp-error-color1);
}

.lz-after {
  color: var(--jp-success-color1);
}

.lz-step-label {
  min-width: 90px;
  text-align: center;
}

.lz-rewrite-panes {
  flex: 1;
  min-height: 0;
  display: grid;
  grid-template-columns: minmax(0, 0.8fr) minmax(0, 1.1fr) minmax(0, 1.1fr);
}

.lz-rewrite-panes > * {
  min-width: 0;
  border-right: 1px solid var(--jp-border-color2);
}

.lz-step-list {
  overflow: auto;
}

.lz-steps {
  margin: 0;
  padding: 4px 4px 4px 32px;
  font-family: var(--jp-code-font-family);
  font-size: var(--jp-ui-font-size0);
}

.lz-step-row {
  cursor: pointer;
  padding: 1px 2px;
}

.lz-step-row:hover {
  background: var(--jp-layout-color2);
}

.lz-step-row.lz-selected {
  background: var(--lz-hl);
}

/* tensor graph and timing tabs */
.lz-tab-graph {
  display: flex;
  flex-direction: column;
}

.lz-tab-graph > .lz-graph {
  flex: 1;
}

.lz-timing {
  overflow: auto;
  padding: 6px 8px;
}

.lz-bar-cell {
  width: 30%;
  min-width: 120px;
}

.lz-bar {
  height: 10px;
  min-width: 1px;
  border-radius: 2px;
  background: var(--jp-brand-color1);
}

/* the tinygrad side panel */
.lz-panel {
  padding: 8px 10px;
  overflow: auto;
  background: var(--jp-layout-color1);
  color: var(--jp-ui-font-color1);
  font-size: var(--jp-ui-font-size1);
  font-family: var(--jp-ui-font-family);
}

.lz-panel-title {
  margin: 0 0 4px;
  font-size: var(--jp-ui-font-size3, 16px);
  font-weight: 600;
  color: var(--jp-ui-font-color0);
}

.lz-panel-sub {
  margin: 12px 0 4px;
  font-size: var(--jp-ui-font-size2, 14px);
  font-weight: 600;
  color: var(--jp-ui-font-color0);
}

.lz-panel-target,
.lz-panel-note {
  font-size: var(--jp-ui-font-size0);
  color: var(--jp-ui-font-color2);
  word-break: break-all;
}

.lz-panel-form {
  margin-top: 8px;
  display: flex;
  flex-direction: column;
  gap: 6px;
}

.lz-panel-row {
  display: flex;
  align-items: center;
  gap: 6px;
}

.lz-panel-label {
  width: 52px;
  font-family: var(--jp-code-font-family);
  font-size: var(--jp-code-font-size);
}

.lz-range {
  flex: 1;
  accent-color: var(--jp-brand-color1);
}

.lz-range-value {
  width: 1.4em;
  text-align: right;
  font-family: var(--jp-code-font-family);
}

.lz-panel-row .lz-select {
  flex: 1;
}

.lz-panel-status {
  margin-top: 6px;
  min-height: 1.4em;
  font-size: var(--jp-ui-font-size0);
  word-break: break-word;
}

.lz-status-ok {
  color: var(--jp-success-color1);
}

.lz-status-warn {
  color: var(--jp-warn-color1);
}

.lz-status-error {
  color: var(--jp-error-color1);
}

.lz-run {
  margin: 4px 0;
  padding: 3px 0 4px 6px;
  border-left: 2px solid var(--jp-border-color2);
}

.lz-run-cell {
  display: block;
  font-weight: 600;
}

.lz-run-kernel {
  display: block;
  width: 100%;
  padding-left: 8px;
  overflow: hidden;
  text-overflow: ellipsis;
  white-space: nowrap;
}

/* zoomed far out: no labels (unreadable anyway, and thousands of them are slow to paint) */
.lz-graph-svg.lz-lod-low text {
  display: none;
}

/* big graphs: many edges cross, so each is drawn faint and the bundles read as grey */
.lz-graph-svg.lz-big .lz-edge {
  stroke-opacity: 0.35;
}

.lz-graph-svg.lz-big .lz-edge.lz-edge-on {
  stroke-opacity: 1;
}

/* the kernel-opt playground (optview.ts) */
.lz-pg-body {
  display: flex;
  flex-direction: column;
  gap: 4px;
}

.lz-pg-ok {
  color: color-mix(in srgb, #2e9e4a 85%, var(--jp-ui-font-color1));
}

.lz-pg-wrong {
  font-weight: 600;
}

.lz-pg-diff,
.lz-pg-src {
  max-height: 360px;
  overflow: auto;
  margin: 0;
  font-family: var(--jp-code-font-family);
  font-size: 12px;
  border: 1px solid var(--jp-border-color2);
}

.lz-pg-add {
  background: rgba(46, 160, 67, 0.18);
}

.lz-pg-del {
  background: rgba(248, 81, 73, 0.18);
}

.lz-pg-best td {
  font-weight: 600;
  background: rgba(46, 160, 67, 0.12);
}

/* ---- ShapeTracker picture (stpicture.ts) */
.lz-trace.lz-trace-pictures {
  height: auto;
  min-height: 0;
  overflow: auto;
  padding: 4px 10px;
}
.lz-stp {
  margin: 6px 0 12px;
}
.lz-stp-title {
  font-weight: 600;
}
.lz-stp-view,
.lz-stp-expr,
.lz-stp-movement {
  font-family: var(--jp-code-font-family);
  font-size: var(--jp-code-font-size);
}
.lz-stp-row {
  display: flex;
  flex-wrap: wrap;
  gap: 4px 12px;
  align-items: flex-start;
}
.lz-stp-scroll {
  max-width: 100%;
  overflow-x: auto;
}
.lz-stp table {
  border-collapse: collapse;
  margin: 4px 0;
}
.lz-stp td,
.lz-stp th {
  min-width: 26px;
  height: 22px;
  padding: 1px 4px;
  text-align: center;
  font-family: var(--jp-code-font-family);
  font-size: var(--jp-code-font-size);
}
.lz-stp td {
  border: 1px solid var(--jp-border-color1);
  cursor: default;
}
.lz-stp th {
  color: var(--jp-ui-font-color2);
  font-weight: normal;
}
.lz-stp-masked {
  background: repeating-linear-gradient(
    45deg,
    var(--jp-layout-color2),
    var(--jp-layout-color2) 3px,
    var(--jp-layout-color3) 3px,
    var(--jp-layout-color3) 6px
  );
  color: var(--jp-ui-font-color2);
}
.lz-stp-unread {
  color: var(--jp-ui-font-color3);
}
.lz-stp-read {
  font-weight: 700;
}
.lz-stp td.lz-stp-on {
  outline: 3px solid var(--jp-error-color1, #d32f2f);
  outline-offset: -2px;
}
.lz-stp-readout {
  margin: 4px 0;
  padding: 4px 8px;
  min-width: 240px;
  border-left: 3px solid var(--jp-brand-color1);
  background: var(--jp-layout-color1);
  font-family: var(--jp-code-font-family);
  font-size: var(--jp-code-font-size);
  white-space: pre;
}
.lz-stp-h0 {
  background: hsl(210, 70%, 80%);
  color: #111;
}
.lz-stp-h1 {
  background: hsl(30, 70%, 80%);
  color: #111;
}
.lz-stp-h2 {
  background: hsl(120, 70%, 80%);
  color: #111;
}
.lz-stp-h3 {
  background: hsl(280, 70%, 80%);
  color: #111;
}
.lz-stp-h4 {
  background: hsl(0, 70%, 80%);
  color: #111;
}
.lz-stp-h5 {
  background: hsl(170, 70%, 80%);
  color: #111;
}
.lz-stp-h6 {
  background: hsl(55, 70%, 80%);
  color: #111;
}
.lz-stp-h7 {
  background: hsl(320, 70%, 80%);
  color: #111;
}
.lz-stp-h8 {
  background: hsl(90, 70%, 80%);
  color: #111;
}
.lz-stp-h9 {
  background: hsl(250, 70%, 80%);
  color: #111;
}

/* a learner's stages (lazynb.pipeline.use) next to lazynb's: where theirs first differs */
.lz-trace {
  --lz-diff: color-mix(
    in srgb,
    var(--jp-error-color1, #d32f2f) 20%,
    transparent
  );
}

.lz-trace [hidden] {
  display: none !important;
}

.lz-chip.lz-yours,
.lz-yours-badge {
  background: color-mix(in srgb, var(--jp-brand-color1) 20%, transparent);
  color: var(--jp-ui-font-color0);
  font-weight: 600;
}

.lz-yours-badge {
  margin-left: 4px;
  padding: 0 4px;
  border-radius: 6px;
  font-size: var(--jp-ui-font-size0);
}

.lz-yours-line {
  color: var(--jp-ui-font-color1);
}

.lz-diff-note {
  color: var(--jp-ui-font-color2);
  font-size: var(--jp-ui-font-size0);
}

.lz-diff-note.lz-differs {
  color: var(--jp-error-color1, #d32f2f);
  font-weight: 600;
}

.lz-line.lz-diff,
.lz-uop.lz-diff {
  background: var(--lz-diff);
  box-shadow: inset 3px 0 0 var(--jp-error-color1, #d32f2f);
}

.lz-line.lz-diff .lz-lineno,
.lz-uop.lz-diff .lz-uop-id {
  color: var(--jp-error-color1, #d32f2f);
  font-weight: 600;
}

.lz-node.lz-diff rect {
  stroke: var(--jp-error-color1, #d32f2f);
  stroke-width: 3px;
  stroke-dasharray: 5 2;
}
`,""]),l.d(r,{},{A:n})},314(o){o.exports=function(o){var r=[];return r.toString=function(){return this.map(function(r){var l="",e=void 0!==r[5];return r[4]&&(l+="@supports (".concat(r[4],") {")),r[2]&&(l+="@media ".concat(r[2]," {")),e&&(l+="@layer".concat(r[5].length>0?" ".concat(r[5]):""," {")),l+=o(r),e&&(l+="}"),r[2]&&(l+="}"),r[4]&&(l+="}"),l}).join("")},r.i=function(o,l,e,a,t){"string"==typeof o&&(o=[[null,o,void 0]]);var n={};if(e)for(var i=0;i<this.length;i++){var p=this[i][0];null!=p&&(n[p]=!0)}for(var c=0;c<o.length;c++){var d=[].concat(o[c]);e&&n[d[0]]||(void 0!==t&&(void 0===d[5]||(d[1]="@layer".concat(d[5].length>0?" ".concat(d[5]):""," {").concat(d[1],"}")),d[5]=t),l&&(d[2]&&(d[1]="@media ".concat(d[2]," {").concat(d[1],"}")),d[2]=l),a&&(d[4]?(d[1]="@supports (".concat(d[4],") {").concat(d[1],"}"),d[4]=a):d[4]="".concat(a)),r.push(d))}},r}},601(o){o.exports=function(o){return o[1]}},72(o){var r=[];function l(o){for(var l=-1,e=0;e<r.length;e++)if(r[e].identifier===o){l=e;break}return l}function e(o,e){for(var a={},t=[],n=0;n<o.length;n++){var i=o[n],p=e.base?i[0]+e.base:i[0],c=a[p]||0,d="".concat(p," ").concat(c);a[p]=c+1;var s=l(d),f={css:i[1],media:i[2],sourceMap:i[3],supports:i[4],layer:i[5]};if(-1!==s)r[s].references++,r[s].updater(f);else{var u=function(o,r){var l=r.domAPI(r);return l.update(o),function(r){r?(r.css!==o.css||r.media!==o.media||r.sourceMap!==o.sourceMap||r.supports!==o.supports||r.layer!==o.layer)&&l.update(o=r):l.remove()}}(f,e);e.byIndex=n,r.splice(n,0,{identifier:d,updater:u,references:1})}t.push(d)}return t}o.exports=function(o,a){var t=e(o=o||[],a=a||{});return function(o){o=o||[];for(var n=0;n<t.length;n++){var i=l(t[n]);r[i].references--}for(var p=e(o,a),c=0;c<t.length;c++){var d=l(t[c]);0===r[d].references&&(r[d].updater(),r.splice(d,1))}t=p}}},659(o){var r={};o.exports=function(o,l){var e=function(o){if(void 0===r[o]){var l=document.querySelector(o);if(window.HTMLIFrameElement&&l instanceof window.HTMLIFrameElement)try{l=l.contentDocument.head}catch(o){l=null}r[o]=l}return r[o]}(o);if(!e)throw Error("Couldn't find a style target. This probably means that the value for the 'insert' parameter is invalid.");e.appendChild(l)}},540(o){o.exports=function(o){var r=document.createElement("style");return o.setAttributes(r,o.attributes),o.insert(r,o.options),r}},56(o,r,l){o.exports=function(o){var r=l.nc;r&&o.setAttribute("nonce",r)}},825(o){o.exports=function(o){if("u"<typeof document)return{update:function(){},remove:function(){}};var r=o.insertStyleElement(o);return{update:function(l){var e,a,t;e="",l.supports&&(e+="@supports (".concat(l.supports,") {")),l.media&&(e+="@media ".concat(l.media," {")),(a=void 0!==l.layer)&&(e+="@layer".concat(l.layer.length>0?" ".concat(l.layer):""," {")),e+=l.css,a&&(e+="}"),l.media&&(e+="}"),l.supports&&(e+="}"),(t=l.sourceMap)&&"u">typeof btoa&&(e+="\n/*# sourceMappingURL=data:application/json;base64,".concat(btoa(unescape(encodeURIComponent(JSON.stringify(t))))," */")),o.styleTagTransform(e,r,o.options)},remove:function(){var o;null===(o=r).parentNode||o.parentNode.removeChild(o)}}}},113(o){o.exports=function(o,r){if(r.styleSheet)r.styleSheet.cssText=o;else{for(;r.firstChild;)r.removeChild(r.firstChild);r.appendChild(document.createTextNode(o))}}},579(o,r,l){var e=l(72),a=l.n(e),t=l(825),n=l.n(t),i=l(659),p=l.n(i),c=l(56),d=l.n(c),s=l(540),f=l.n(s),u=l(113),z=l.n(u),g=l(475),v={};v.styleTagTransform=z(),v.setAttributes=d(),v.insert=p().bind(null,"head"),v.domAPI=n(),v.insertStyleElement=f(),a()(g.A,v),g.A&&g.A.locals&&g.A.locals}}]);