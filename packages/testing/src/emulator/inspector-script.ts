/**
 * The inspector page's script, as the page embeds it. It reads `/inspector/state` (with the page's
 * filters), re-reads it whenever `/inspector/stream` says something changed, fetches a delivery's exact
 * bytes when asked, and posts to `/inspector/trigger`, `/inspector/replay` and `/inspector/resend`.
 *
 * Every value is written with textContent (`el()` appends strings as text nodes), never as HTML:
 * payloads come from whoever triggered them and answers from the endpoint under test, and either may
 * contain markup. The page is re-drawn on every change, so the sections a user opened and the raw
 * bytes fetched are remembered here and kept open across re-draws.
 *
 * Plain ES2020 in a string (no build step, nothing the browser must not see): no template literals
 * and no backslashes inside, since this file's own template literal would take them.
 */
export const INSPECTOR_SCRIPT = `
(() => {
  const $ = (selector) => document.querySelector(selector);
  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    Object.assign(node, props || {});
    for (const child of children) node.append(child instanceof Node ? child : String(child ?? ''));
    return node;
  }
  // ISO 8601 in UTC, to the second, as the CLI prints times: a date and a zone, whatever the browser's locale.
  const time = (iso) => (iso ? new Date(iso).toISOString().slice(0, 19) + 'Z' : '');
  const STATUS_CLASS = { succeeded: 'ok', sending: 'warn', retrying: 'warn', 'gave-up': 'bad', cancelled: 'muted' };
  const attemptClass = (status) => (status === 'succeeded' ? 'ok' : status === 'failed' ? 'warn' : 'bad');
  const opened = new Set(); // the keys of the sections a user opened
  const rawBodies = new Map(); // deliveryId: its exact body, once fetched
  $('#base').textContent = 'API at ' + location.origin + '/v1';

  async function post(path, body) {
    const response = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const answer = await response.json();
    if (!response.ok) throw new Error(answer.error ? answer.error.message : response.statusText);
    return answer;
  }

  function section(key, summary, ...content) {
    const node = el('details', { open: opened.has(key) }, el('summary', {}, summary), ...content);
    node.dataset.key = key;
    node.addEventListener('toggle', () => (node.open ? opened.add(key) : opened.delete(key)));
    return node;
  }
  function pretty(text) {
    try { return JSON.stringify(JSON.parse(text), null, 2); } catch { return text; }
  }
  function headerTable(headers) {
    const rows = Object.keys(headers).sort().map((name) => el('tr', {}, el('td', {}, name), el('td', {}, headers[name])));
    return el('table', { className: 'headers mono' }, el('tbody', {}, ...rows));
  }

  function requestSection(d) {
    const id = d.deliveryId;
    const raw = el('pre', { className: 'raw', hidden: !rawBodies.has(id) }, rawBodies.get(id) ?? '');
    const toggle = el('button', { type: 'button', className: 'show-raw', textContent: rawBodies.has(id) ? 'Hide raw bytes' : 'Show raw bytes' });
    toggle.addEventListener('click', async () => {
      if (rawBodies.has(id)) {
        rawBodies.delete(id);
        raw.hidden = true;
        toggle.textContent = 'Show raw bytes';
        return;
      }
      const response = await fetch('/inspector/deliveries/' + encodeURIComponent(id) + '/body', { cache: 'no-store' });
      const text = await response.text();
      rawBodies.set(id, text);
      raw.textContent = text;
      raw.hidden = false;
      toggle.textContent = 'Hide raw bytes';
    });
    const payload = typeof d.payload === 'string' ? d.payload : JSON.stringify(d.payload, null, 2);
    return section(id + ':request', 'Request: POST ' + d.url + ' · ' + d.request.bodyBytes + ' bytes',
      el('h3', {}, 'Headers'), headerTable(d.request.headers),
      el('h3', {}, 'Payload'), el('pre', { className: 'payload' }, payload),
      el('div', { className: 'bar' }, toggle, el('span', { className: 'muted' }, 'the exact bytes signed and sent')), raw);
  }

  function answerSection(d, a) {
    const key = d.deliveryId + ':answer:' + a.attempt;
    if (a.responseCode === null) {
      return section(key, 'No answer: ' + (a.error ? a.error.code : a.status), el('pre', { className: 'answer-body bad' }, a.responseBody));
    }
    const cut = a.responseTruncated ? el('p', { className: 'muted' }, 'The answer went on; the emulator kept the part above and hung up.') : '';
    return section(key, 'Answer: ' + a.responseCode + ' · ' + Object.keys(a.responseHeaders).length + ' headers',
      el('h3', {}, 'Headers'), headerTable(a.responseHeaders),
      el('h3', {}, 'Body'), el('pre', { className: 'answer-body' }, pretty(a.responseBody)), cut);
  }

  function attemptRows(d) {
    return d.attempts.flatMap((a) => [
      el('tr', { className: 'attempt' },
        el('td', {}, a.attempt), el('td', { className: 'trigger muted' }, a.trigger),
        el('td', { className: 'status ' + attemptClass(a.status) }, a.status),
        el('td', { className: 'code mono' }, a.responseCode === null ? (a.error ? a.error.code : '–') : a.responseCode),
        el('td', { className: 'latency mono' }, a.latencyMs.toFixed(1) + ' ms'),
        el('td', { className: 'muted' }, time(a.attemptedAt)),
        el('td', { className: 'answer mono', title: a.responseBody }, a.responseBody)),
      el('tr', { className: 'answer-detail' }, el('td', {}), el('td', { colSpan: 6 }, answerSection(d, a))),
    ]);
  }

  function actionButton(label, className, path, d, message) {
    const button = el('button', { type: 'button', className, textContent: label });
    button.addEventListener('click', async () => {
      button.disabled = true;
      message.textContent = '';
      try {
        const answer = await post(path, { webhookId: d.webhookId, deliveryId: d.deliveryId });
        if (answer.delivery) message.textContent = 'sent again as ' + answer.delivery.deliveryId;
      } catch (error) { message.textContent = label + ' failed: ' + error.message; }
      finally { button.disabled = false; }
    });
    return button;
  }

  function card(d) {
    const message = el('span', { className: 'message muted' });
    const replay = actionButton('Replay', 'replay', '/inspector/replay', d, message);
    replay.title = 'The same delivery again: same deliveryId and bytes (a receiver that completed it answers duplicate)';
    const resend = actionButton('Resend', 'resend', '/inspector/resend', d, message);
    resend.title = 'The same event and data as a new delivery: a new deliveryId and timestamp, so the handlers run again';
    const table = el('table', {},
      el('thead', {}, el('tr', {}, ...['#', 'trigger', 'status', 'code', 'latency', 'at (UTC)', 'answer'].map((t) => el('th', {}, t)))),
      el('tbody', {}, ...attemptRows(d)));
    const node = el('section', { className: 'delivery' },
      el('header', {},
        el('strong', { className: 'event' }, d.event), el('code', { className: 'delivery-id' }, d.deliveryId),
        el('span', { className: 'badge delivery-status ' + (STATUS_CLASS[d.status] || '') }, d.inFlight ? d.status + ' · sending…' : d.status),
        el('span', { className: 'muted' }, time(d.createdAt)),
        el('span', { className: 'next muted' }, d.nextAttemptAt ? 'next retry ' + time(d.nextAttemptAt) : ''),
        el('span', { className: 'actions' }, message, replay, resend)),
      el('div', { className: 'muted mono' }, 'to ' + d.webhookId + ' ' + d.url),
      requestSection(d), table);
    node.dataset.deliveryId = d.deliveryId;
    return node;
  }

  function renderWebhooks(webhooks) {
    $('#webhooks tbody').replaceChildren(...webhooks.map((w) => {
      const row = el('tr', {}, el('td', { className: 'mono' }, w.id), el('td', { className: 'mono' }, w.url),
        el('td', { className: 'mono' }, w.events.join(', ')), el('td', { className: w.isActive ? 'ok' : 'muted' }, w.isActive ? 'active' : 'inactive'));
      row.dataset.webhookId = w.id;
      return row;
    }));
    $('#no-webhooks').hidden = webhooks.length > 0;
  }

  function fillOnce(select, values) {
    if (select.options.length > 1) return;
    const chosen = select.dataset.initial || '';
    select.append(...values.map((value) => el('option', { value, textContent: value })));
    select.value = chosen;
  }

  const query = new URLSearchParams(location.search);
  $('#filter-event').dataset.initial = query.get('event') || '';
  $('#filter-status').dataset.initial = query.get('status') || '';
  function filters() {
    const params = new URLSearchParams();
    const event = $('#filter-event').value || $('#filter-event').dataset.initial;
    const status = $('#filter-status').value || $('#filter-status').dataset.initial;
    if (event) params.set('event', event);
    if (status) params.set('status', status);
    return params;
  }
  for (const select of [$('#filter-event'), $('#filter-status')]) {
    select.addEventListener('change', () => {
      select.dataset.initial = '';
      const params = filters().toString();
      history.replaceState(null, '', params ? '?' + params : location.pathname);
      refresh();
    });
  }

  let loading = false, again = false;
  async function refresh() {
    if (loading) { again = true; return; }
    loading = true;
    try {
      const params = filters().toString();
      const state = await (await fetch('/inspector/state' + (params ? '?' + params : ''), { cache: 'no-store' })).json();
      const trigger = $('#trigger-event');
      if (trigger.options.length === 0) {
        trigger.replaceChildren(...state.events.map((name) => el('option', { value: name, textContent: name })));
        trigger.value = 'message.delivered'; // the one event whose payload the service documents
      }
      fillOnce($('#filter-event'), state.events);
      fillOnce($('#filter-status'), state.statuses);
      renderWebhooks(state.webhooks);
      $('#deliveries').replaceChildren(...state.deliveries.map(card));
      const filtered = state.filter.event || state.filter.status;
      $('#shown').textContent = filtered
        ? state.matching + ' of ' + state.total + ' deliveries match' + (state.matching > state.deliveries.length ? ', the latest ' + state.deliveries.length + ' shown' : '')
        : state.total + (state.total === 1 ? ' delivery' : ' deliveries') + (state.total > state.deliveries.length ? ', the latest ' + state.deliveries.length + ' shown' : '');
      $('#no-deliveries').hidden = state.total > 0;
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
`;
