import { INSPECTOR_SCRIPT } from './inspector-script';

/**
 * The delivery inspector: one page of plain HTML, CSS and a small script (no build step). What the
 * script does is in `inspector-script.ts`; every value it shows is written with textContent, never as
 * HTML, since payloads and answer bodies may contain markup.
 */
export const INSPECTOR_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>hookline emulator · deliveries</title>
<link rel="icon" href="data:,">
<style>
  :root { color-scheme: light dark; --ok: #1a7f37; --bad: #cf222e; --warn: #9a6700; --muted: #6e7781; --line: #d0d7de; --code: rgba(127,127,127,.1); }
  body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1100px; padding: 1rem 1.5rem 3rem; }
  h1 { font-size: 1.25rem; margin: 0 0 .25rem; } h2 { font-size: 1rem; margin: 1.5rem 0 .5rem; } h3 { font-size: .85rem; margin: .75rem 0 .25rem; color: var(--muted); }
  code, pre, .mono { font-family: ui-monospace, monospace; font-size: 12.5px; }
  pre { background: var(--code); padding: .5rem .75rem; border-radius: 4px; overflow: auto; max-height: 24rem; margin: .25rem 0; white-space: pre-wrap; word-break: break-all; }
  table { border-collapse: collapse; width: 100%; } th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
  th { font-weight: 600; color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .03em; }
  table.headers td { border: 0; padding: .1rem .5rem; } table.headers td:first-child { color: var(--muted); white-space: nowrap; width: 1%; }
  .muted { color: var(--muted); } .ok { color: var(--ok); } .bad { color: var(--bad); } .warn { color: var(--warn); }
  .bar { display: flex; gap: .5rem; align-items: center; flex-wrap: wrap; }
  .delivery { border: 1px solid var(--line); border-radius: 6px; padding: .5rem .75rem; margin: .5rem 0; }
  .delivery > header { display: flex; gap: .75rem; align-items: baseline; flex-wrap: wrap; }
  .delivery > header .actions { margin-left: auto; display: flex; gap: .4rem; }
  .badge { font-size: 12px; font-weight: 600; padding: 0 .4rem; border-radius: 999px; border: 1px solid currentColor; }
  .answer { max-width: 420px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
  tr.answer-detail > td { padding-top: 0; }
  details > summary { cursor: pointer; color: var(--muted); font-size: 12.5px; }
  button, select { font: inherit; padding: .2rem .6rem; }
  #live { font-size: 12px; }
</style>
</head>
<body>
<h1>hookline service emulator</h1>
<div class="bar muted"><span id="live">connecting…</span><span id="base"></span></div>

<h2>Trigger an event</h2>
<div class="bar">
  <select id="trigger-event" aria-label="event to trigger"></select>
  <button id="trigger-button" type="button">Trigger</button>
  <span id="trigger-result" class="muted"></span>
</div>

<h2>Webhooks</h2>
<table id="webhooks"><thead><tr><th>id</th><th>url</th><th>events</th><th>active</th></tr></thead><tbody></tbody></table>
<p id="no-webhooks" class="muted" hidden>No webhook yet: create one with <code>hookline webhooks create --url … --events …</code> or POST /v1/webhooks.</p>

<h2>Deliveries</h2>
<div class="bar">
  <select id="filter-event" aria-label="filter by event"><option value="">every event</option></select>
  <select id="filter-status" aria-label="filter by status"><option value="">every status</option></select>
  <span id="shown" class="muted"></span>
</div>
<div id="deliveries"></div>
<p id="no-deliveries" class="muted" hidden>No delivery yet: trigger an event.</p>

<script>${INSPECTOR_SCRIPT}</script>
</body>
</html>
`;
