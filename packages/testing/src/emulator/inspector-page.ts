/**
 * The delivery inspector: one page of plain HTML, CSS and a small script (no build step). It reads
 * `/inspector/state`, re-reads it whenever `/inspector/stream` says something changed, and posts to
 * `/inspector/trigger` and `/inspector/replay`. Every value is written with textContent, never as
 * HTML: answer bodies come from the receiver under test and may contain markup.
 */
export const INSPECTOR_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>hookline emulator · deliveries</title>
<link rel="icon" href="data:,">
<style>
  :root { color-scheme: light dark; --ok: #1a7f37; --bad: #cf222e; --warn: #9a6700; --muted: #6e7781; --line: #d0d7de; }
  body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1100px; padding: 1rem 1.5rem 3rem; }
  h1 { font-size: 1.25rem; margin: 0 0 .25rem; } h2 { font-size: 1rem; margin: 1.5rem 0 .5rem; }
  code, td.mono { font-family: ui-monospace, monospace; font-size: 12.5px; }
  table { border-collapse: collapse; width: 100%; } th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
  th { font-weight: 600; color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .03em; }
  .muted { color: var(--muted); } .ok { color: var(--ok); } .bad { color: var(--bad); } .warn { color: var(--warn); }
  .bar { display: flex; gap: .5rem; align-items: center; flex-wrap: wrap; }
  .delivery { border: 1px solid var(--line); border-radius: 6px; padding: .5rem .75rem; margin: .5rem 0; }
  .delivery header { display: flex; gap: 1rem; align-items: baseline; flex-wrap: wrap; }
  .answer { max-width: 420px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
  button, select { font: inherit; padding: .2rem .6rem; }
  #live { font-size: 12px; }
</style>
</head>
<body>
<h1>hookline service emulator</h1>
<div class="bar muted"><span id="live">connecting…</span><span id="base"></span></div>

<h2>Trigger an event</h2>
<div class="bar">
  <select id="trigger-event" aria-label="event"></select>
  <button id="trigger-button" type="button">Trigger</button>
  <span id="trigger-result" class="muted"></span>
</div>

<h2>Webhooks</h2>
<table id="webhooks"><thead><tr><th>id</th><th>url</th><th>events</th><th>active</th></tr></thead><tbody></tbody></table>
<p id="no-webhooks" class="muted" hidden>No webhook yet: create one with <code>hookline webhooks create --url … --events …</code> or POST /v1/webhooks.</p>

<h2>Recent deliveries</h2>
<div id="deliveries"></div>
<p id="no-deliveries" class="muted" hidden>No delivery yet: trigger an event.</p>

<script>
(() => {
  const $ = (selector) => document.querySelector(selector);
  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    Object.assign(node, props || {});
    for (const child of children) node.append(child instanceof Node ? child : String(child ?? ''));
    return node;
  }
  const statusClass = (status) => (status === 'succeeded' ? 'ok' : status === 'failed' ? 'warn' : 'bad');
  // ISO 8601 in UTC, to the second, as the CLI prints times: a date and a zone, whatever the browser's locale.
  const time = (iso) => (iso ? new Date(iso).toISOString().slice(0, 19) + 'Z' : '');
  $('#base').textContent = 'API at ' + location.origin + '/v1';

  async function post(path, body) {
    const response = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const answer = await response.json();
    if (!response.ok) throw new Error(answer.error ? answer.error.message : response.statusText);
    return answer;
  }

  function renderWebhooks(webhooks) {
    const body = $('#webhooks tbody');
    body.replaceChildren(...webhooks.map((w) => {
      const row = el('tr', {}, el('td', { className: 'mono' }, w.id), el('td', { className: 'mono' }, w.url),
        el('td', { className: 'mono' }, w.events.join(', ')), el('td', { className: w.isActive ? 'ok' : 'muted' }, w.isActive ? 'active' : 'inactive'));
      row.dataset.webhookId = w.id;
      return row;
    }));
    $('#no-webhooks').hidden = webhooks.length > 0;
  }

  function renderDeliveries(deliveries) {
    const list = $('#deliveries');
    list.replaceChildren(...deliveries.map((d) => {
      const replay = el('button', { type: 'button', className: 'replay', textContent: 'Replay' });
      replay.addEventListener('click', async () => {
        replay.disabled = true;
        try { await post('/inspector/replay', { webhookId: d.webhookId, deliveryId: d.deliveryId }); }
        catch (error) { alert('Replay failed: ' + error.message); }
        finally { replay.disabled = false; }
      });
      const next = d.nextAttemptAt ? 'next retry ' + time(d.nextAttemptAt) : '';
      const state = d.inFlight ? 'sending…' : d.outcome;
      const rows = d.attempts.map((a) => {
        const row = el('tr', { className: 'attempt' },
          el('td', {}, a.attempt), el('td', { className: 'muted' }, a.trigger),
          el('td', { className: 'status ' + statusClass(a.status) }, a.status),
          el('td', { className: 'code mono' }, a.responseCode === null ? '–' : a.responseCode),
          el('td', { className: 'latency mono' }, a.latencyMs.toFixed(1) + ' ms'),
          el('td', { className: 'muted' }, time(a.attemptedAt)),
          el('td', { className: 'answer mono', title: a.responseBody }, a.responseBody));
        return row;
      });
      const table = el('table', {}, el('thead', {}, el('tr', {}, ...['#', 'trigger', 'status', 'code', 'latency', 'at', 'answer'].map((t) => el('th', {}, t)))), el('tbody', {}, ...rows));
      const card = el('section', { className: 'delivery' },
        el('header', {}, el('strong', {}, d.event), el('code', { className: 'delivery-id' }, d.deliveryId),
          el('span', { className: 'outcome ' + (d.outcome === 'succeeded' ? 'ok' : d.outcome === 'pending' ? 'warn' : 'bad') }, state),
          el('span', { className: 'next muted' }, next), el('span', { className: 'muted' }, 'to ' + d.webhookId), replay),
        table);
      card.dataset.deliveryId = d.deliveryId;
      return card;
    }));
    $('#no-deliveries').hidden = deliveries.length > 0;
  }

  let loading = false, again = false;
  async function refresh() {
    if (loading) { again = true; return; }
    loading = true;
    try {
      const state = await (await fetch('/inspector/state', { cache: 'no-store' })).json();
      const select = $('#trigger-event');
      if (select.options.length === 0) {
        select.replaceChildren(...state.events.map((name) => el('option', { value: name, textContent: name })));
        select.value = 'message.delivered'; // the one event whose payload the service documents
      }
      renderWebhooks(state.webhooks);
      renderDeliveries(state.deliveries);
    } finally {
      loading = false;
      if (again) { again = false; refresh(); }
    }
  }

  $('#trigger-button').addEventListener('click', async () => {
    const event = $('#trigger-event').value;
    try {
      const answer = await post('/inspector/trigger', { event });
      $('#trigger-result').textContent = answer.deliveries.length === 0
        ? 'no active webhook is subscribed to ' + event
        : event + ' sent to ' + answer.deliveries.length + ' webhook' + (answer.deliveries.length === 1 ? '' : 's');
    } catch (error) { $('#trigger-result').textContent = error.message; }
    refresh();
  });

  // Server-sent events say when something changed; polling every 5 s covers a proxy that buffers them.
  const stream = new EventSource('/inspector/stream');
  stream.onopen = () => { $('#live').textContent = '● live'; $('#live').className = 'ok'; refresh(); };
  stream.onmessage = () => refresh();
  stream.onerror = () => { $('#live').textContent = 'reconnecting…'; $('#live').className = 'warn'; };
  setInterval(refresh, 5000);
  refresh();
})();
</script>
</body>
</html>
`;
