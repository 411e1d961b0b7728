// Tephra dashboard: draws the pages from the JSON endpoints (docs/dashboard.md).
//
// Every string from the cluster (names, labels, messages, reasons) goes into the page as text:
// elements are built with createElement and filled with text nodes, never with innerHTML, so
// markup in a job name or an event message is shown, not run. No framework, nothing fetched from
// elsewhere; plots are drawn as SVG by plot() below.
'use strict';

const REFRESH_MS = 10000;
const SVG = 'http://www.w3.org/2000/svg';

// el('td', {class: 'num'}, 'text', child, ...): an element with attributes and children; strings
// become text nodes.
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    e.appendChild(typeof c === 'object' ? c : document.createTextNode(String(c)));
  }
  return e;
}

function svg(tag, attrs, ...children) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null) continue;
    e.appendChild(typeof c === 'object' ? c : document.createTextNode(String(c)));
  }
  return e;
}

// Links inside the app: hash routes built from encoded parts.
function jobHref(ns, name) {
  return '#/job/' + encodeURIComponent(ns) + '/' + encodeURIComponent(name);
}

async function getJson(path) {
  const r = await fetch(path, {headers: {Accept: 'application/json'}, cache: 'no-store'});
  const body = await r.json().catch(() => ({error: 'not JSON (HTTP ' + r.status + ')'}));
  if (!r.ok) throw new Error(body.error || ('HTTP ' + r.status));
  return body;
}

// ---------------------------------------------------------------- formatting

const BYTES = ['memory', 'ephemeral-storage'];
function isBytes(dim) { return BYTES.includes(dim) || dim.startsWith('hugepages-'); }

function fmtNumber(v) {
  if (v === undefined || v === null || Number.isNaN(v)) return '–';
  if (Math.abs(v) >= 100 || Number.isInteger(v)) return Math.round(v).toLocaleString('en');
  return (Math.round(v * 100) / 100).toString();
}

function fmtBytes(v) {
  const units = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi'];
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return fmtNumber(Math.round(v * 10) / 10) + units[i];
}

function fmtQty(dim, v) { return isBytes(dim) ? fmtBytes(v || 0) : fmtNumber(v || 0); }

function fmtAge(seconds) {
  if (!seconds || seconds < 0) return '–';
  if (seconds < 120) return Math.round(seconds) + 's';
  if (seconds < 7200) return Math.round(seconds / 60) + 'm';
  if (seconds < 172800) return Math.round(seconds / 3600) + 'h';
  return Math.round(seconds / 86400) + 'd';
}

function fmtTime(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleTimeString('en-GB');
}

function pill(text) { return el('span', {class: 'pill ' + text}, text); }

function table(headers, rows, attrs) {
  return el('table', attrs || {},
    el('thead', {}, el('tr', {}, headers.map(h =>
      el('th', {class: h.endsWith('#') ? 'num' : null}, h.replace(/#$/, ''))))),
    el('tbody', {}, rows));
}

// ---------------------------------------------------------------- overview strip

async function drawOverview() {
  const o = await getJson('/api/v1/overview');
  const box = document.getElementById('overview');
  box.replaceChildren(
    el('span', {}, 'scheduler ', el('b', {}, (o.scheduler_names || []).join(', ')), ' ', o.version),
    el('span', {}, el('b', {}, fmtNumber(o.nodes)), ' nodes'),
    el('span', {}, el('b', {}, fmtNumber(o.queues)), ' queues'),
    el('span', {}, el('b', {}, fmtNumber(o.jobs)), ' jobs (',
       el('b', {}, fmtNumber(o.pending_jobs)), ' not admitted)'),
    el('span', {}, el('b', {id: 'overview-pending'}, fmtNumber(o.pending_pods)), ' pending pods, ',
       el('b', {}, fmtNumber(o.running_pods)), ' placed'),
    el('span', {}, 'last session ', el('b', {}, o.session.id || 'none yet'), ' ',
       fmtTime(o.session.time)));
}

// ---------------------------------------------------------------- queues

// The resource dimensions worth a bar: cpu and memory always, extended resources the cluster or
// a queue has.
function queueDims(doc) {
  const dims = ['cpu', 'memory'];
  const add = r => Object.keys(r || {}).forEach(k => { if (!dims.includes(k)) dims.push(k); });
  add(doc.cluster);
  doc.queues.forEach(q => { add(q.capability); add(q.deserved); add(q.allocated); });
  return dims;
}

function queueBar(q, dim, scale) {
  const pct = v => Math.max(0, Math.min(100, (v / scale) * 100)) + '%';
  const alloc = (q.allocated || {})[dim] || 0;
  const deserved = (q.deserved || {})[dim];
  const guarantee = (q.guarantee || {})[dim];
  const cap = (q.capability || {})[dim];
  const track = el('div', {class: 'track'});
  const capEl = el('div', {class: 'cap'});
  capEl.style.width = pct(cap !== undefined ? cap : scale);
  track.appendChild(capEl);
  const over = deserved !== undefined && alloc > deserved * 1.0001;
  const a = el('div', {class: 'alloc bar-allocated' + (over ? ' over' : '')});
  a.style.width = pct(alloc);
  track.appendChild(a);
  if (guarantee !== undefined && guarantee > 0) {
    const g = el('div', {class: 'mark guarantee', title: 'guarantee ' + fmtQty(dim, guarantee)});
    g.style.left = pct(guarantee);
    track.appendChild(g);
  }
  if (deserved !== undefined) {
    const d = el('div', {class: 'mark deserved', title: 'deserved ' + fmtQty(dim, deserved)});
    d.style.left = pct(deserved);
    track.appendChild(d);
  }
  const label = ['allocated ' + fmtQty(dim, alloc)];
  if (deserved !== undefined) label.push('deserved ' + fmtQty(dim, deserved));
  if (guarantee !== undefined && guarantee > 0) label.push('guarantee ' + fmtQty(dim, guarantee));
  label.push(cap !== undefined ? 'capability ' + fmtQty(dim, cap) : 'no capability');
  return [el('span', {class: 'muted'}, dim), track,
          el('span', {class: 'muted bar-label', 'data-dim': dim}, label.join(' · '))];
}

async function drawQueues(main) {
  const doc = await getJson('/api/v1/queues');
  const dims = queueDims(doc);
  const byParent = new Map();
  const names = new Set(doc.queues.map(q => q.name));
  for (const q of doc.queues) {
    const parent = q.name === 'root' ? '' : (names.has(q.parent) ? q.parent : (names.has('root') ? 'root' : ''));
    if (!byParent.has(parent)) byParent.set(parent, []);
    byParent.get(parent).push(q);
  }
  // Walk the tree with an explicit stack (no recursion whose depth the cluster controls).
  const ordered = [];
  const stack = (byParent.get('') || []).slice().reverse().map(q => [q, 0]);
  const seen = new Set();
  while (stack.length) {
    const [q, depth] = stack.pop();
    if (seen.has(q.name)) continue;
    seen.add(q.name);
    ordered.push([q, depth]);
    (byParent.get(q.name) || []).slice().reverse().forEach(c => stack.push([c, depth + 1]));
  }
  doc.queues.forEach(q => { if (!seen.has(q.name)) ordered.push([q, 0]); });
  // A parent's allocation includes its children's (as hierarchical queues count it): children
  // come after their parent in `ordered`, so a backwards pass adds each into its parent.
  const byName = new Map(doc.queues.map(q => [q.name, q]));
  const parentOf = new Map();
  byParent.forEach((children, parent) => children.forEach(c => parentOf.set(c.name, parent)));
  const total = new Map(doc.queues.map(q => [q.name, Object.assign({}, q.allocated || {})]));
  for (let i = ordered.length - 1; i >= 0; i--) {
    const name = ordered[i][0].name, parent = parentOf.get(name);
    if (!parent || !byName.has(parent)) continue;
    const into = total.get(parent);
    for (const [d, v] of Object.entries(total.get(name))) into[d] = (into[d] || 0) + v;
  }
  doc.queues.forEach(q => { q.allocated = total.get(q.name); });

  const cards = ordered.map(([q, depth]) => {
    const pending = (q.pending || {});
    const hasPending = Object.values(pending).some(v => v > 0) || q.pending_jobs > 0;
    let overShare = false, underShare = false;
    for (const d of dims) {
      const a = (q.allocated || {})[d] || 0, s = (q.deserved || {})[d];
      if (s === undefined) continue;
      if (a > s * 1.0001) overShare = true;
      else if (a < s * 0.9999 && hasPending) underShare = true;
    }
    const running = Math.max(0, q.jobs - q.pending_jobs);
    const card = el('div', {class: 'card queue-row', 'data-queue': q.name},
      el('div', {class: 'queue-head'},
        el('span', {class: 'name'}, q.name),
        pill(q.state),
        el('span', {class: 'muted'}, 'weight ' + q.weight),
        el('span', {class: 'muted queue-jobs'}, running + ' jobs admitted, ' + q.pending_jobs + ' not admitted yet'),
        overShare ? el('span', {class: 'flag over'}, 'over its share') : null,
        underShare ? el('span', {class: 'flag under'}, 'under its share, with work waiting') : null,
        q.share_plugin ? el('span', {class: 'muted'}, q.share_plugin + ' share ' + fmtNumber(q.share)) : null),
      el('div', {class: 'bars'}, dims.filter(d =>
        d === 'cpu' || d === 'memory' || [q.allocated, q.deserved, q.capability, q.guarantee]
          .some(r => r && r[d] !== undefined)).map(d => queueBar(q, d, (doc.cluster || {})[d] || 1))));
    card.style.marginLeft = (depth * 24) + 'px';
    return card;
  });
  main.replaceChildren(
    el('h1', {id: 'page-title'}, 'Queues'),
    el('div', {class: 'legend'},
      el('span', {}, el('i', {class: 'lg-alloc'}), 'allocated'),
      el('span', {}, el('i', {class: 'lg-over'}), 'allocated beyond deserved'),
      el('span', {}, el('i', {class: 'lg-deserved'}), 'deserved'),
      el('span', {}, el('i', {class: 'lg-guarantee'}), 'guarantee'),
      el('span', {}, el('i', {class: 'lg-cap'}), 'capability (track: the whole cluster)')),
    ...(cards.length ? cards : [el('p', {class: 'muted'}, 'No queues.')]));
  for (const [cls, color] of [['lg-alloc', '--alloc'], ['lg-over', '--over'], ['lg-deserved', '--deserved'],
                              ['lg-guarantee', '--guarantee'], ['lg-cap', '--cap']]) {
    main.querySelectorAll('i.' + cls).forEach(i => { i.style.background = 'var(' + color + ')'; });
  }
}

// ---------------------------------------------------------------- jobs

const PHASES = ['', 'Pending', 'Inqueue', 'Running', 'Unknown', 'Completed'];

async function drawJobs(main, params) {
  const q = new URLSearchParams();
  for (const k of ['namespace', 'queue', 'phase', 'name']) if (params.get(k)) q.set(k, params.get(k));
  const doc = await getJson('/api/v1/jobs?' + q.toString());
  // A filter box showing the current value; a change moves to the filtered page.
  const filterInput = (name, placeholder) => {
    const box = el('input', {name, placeholder, value: params.get(name) || ''});
    box.addEventListener('change', () => applyFilters(main));
    return box;
  };
  const phase = el('select', {name: 'phase'}, PHASES.map(p =>
    el('option', {value: p, selected: (params.get('phase') || '') === p}, p || 'any phase')));
  phase.addEventListener('change', () => applyFilters(main));
  const rows = doc.jobs.map(j => el('tr', {class: 'job-row', 'data-job': j.namespace + '/' + j.name,
                                           'data-priority': j.priority, 'data-age': j.age_seconds},
    el('td', {}, j.namespace),
    el('td', {}, el('a', {href: jobHref(j.namespace, j.name)}, j.job || j.name),
       j.job ? el('div', {class: 'muted'}, j.name) : null),
    el('td', {}, j.queue),
    el('td', {}, pill(j.phase)),
    el('td', {class: 'num'}, j.priority),
    el('td', {class: 'num'}, fmtAge(j.age_seconds)),
    el('td', {class: 'num'}, j.running + '/' + j.tasks + (j.pending ? ' (' + j.pending + ' pending)' : '')),
    el('td', {class: 'why'}, j.summary)));
  main.replaceChildren(
    el('h1', {id: 'page-title'}, 'Jobs'),
    el('div', {class: 'filters'}, filterInput('namespace', 'namespace'), filterInput('queue', 'queue'),
       phase, filterInput('name', 'name contains')),
    el('p', {class: 'muted'}, doc.truncated ? 'Showing the newest ' + doc.shown + ' of ' + doc.total + ' jobs.'
                                             : doc.total + ' jobs.'),
    sortable(table(['namespace', 'job', 'queue', 'phase', 'priority#', 'age#', 'pods placed#', 'why it waits'],
                   rows, {id: 'jobs-table'}), {priority: 4, age: 5}));
}

// Clicking the named columns' headings sorts the rows by their data-<name> number (again:
// the other way).
function sortable(tbl, columns) {
  const heads = tbl.querySelectorAll('thead th');
  for (const [key, index] of Object.entries(columns)) {
    const th = heads[index];
    th.classList.add('sortable');
    th.title = 'sort by ' + key;
    let descending = true;
    th.addEventListener('click', () => {
      const body = tbl.querySelector('tbody');
      const sorted = [...body.children].sort((a, b) =>
        (Number(a.dataset[key]) - Number(b.dataset[key])) * (descending ? -1 : 1));
      descending = !descending;
      body.replaceChildren(...sorted);
    });
  }
  return tbl;
}

function applyFilters(main) {
  const q = new URLSearchParams();
  main.querySelectorAll('.filters input, .filters select').forEach(i => { if (i.value) q.set(i.name, i.value); });
  location.hash = '#/jobs' + (q.toString() ? '?' + q.toString() : '');
}

async function drawJob(main, ns, name) {
  const j = await getJson('/api/v1/job?namespace=' + encodeURIComponent(ns) + '&name=' + encodeURIComponent(name));
  const e = j.explanation || {};
  const parts = [
    el('h1', {id: 'page-title'}, 'Job ', j.job || j.name, ' ', pill(j.phase)),
    el('p', {class: 'muted'}, 'namespace ' + j.namespace + ' · PodGroup ' + j.name + ' · queue ' +
       j.queue + ' · priority ' + j.priority + ' · minAvailable ' + j.min_available + ' · age ' +
       fmtAge(j.age_seconds)),
    el('div', {id: 'job-summary', class: 'summary' + (e.scheduled ? ' scheduled' : '')}, e.summary || ''),
  ];
  if (e.considered) {
    const g = e.gang || {};
    parts.push(el('p', {id: 'job-gang'}, 'Gang: ' + g.fit + ' of ' + g.tasks + ' tasks fit, ' + g.ready +
      ' ready, minAvailable ' + g.min_available + (g.unplaced ? ', ' + g.unplaced + ' unplaced' : '') +
      (g.not_tried ? ', ' + g.not_tried + ' not tried' : '') + '. Session ' + e.session + ' at ' +
      fmtTime(e.time) + '.'));
    if (e.expected_start) parts.push(el('p', {id: 'job-expected-start'}, 'Expected start: ' + e.expected_start));
    if ((e.unplaced || []).length) {
      parts.push(el('h2', {}, 'What does not fit'));
      parts.push(table(['tasks#', 'role', 'each needs', 'nodes examined#', 'fit errors (nodes)'],
        e.unplaced.map(u => el('tr', {class: 'unplaced-group'},
          el('td', {class: 'num'}, u.tasks), el('td', {}, u.role || '–'), el('td', {}, u.request),
          el('td', {class: 'num'}, u.nodes_examined),
          el('td', {}, el('ul', {class: 'plain'},
            u.reasons.map(r => el('li', {class: 'reason'}, el('b', {class: 'nodes'}, fmtNumber(r.nodes)),
                                   ' nodes: ', el('span', {class: 'reason-text'}, r.reason))),
            u.other ? el('li', {class: 'reason'}, u.other) : null)))), {id: 'job-reasons'}));
    }
  }
  if ((e.hints || []).length) {
    parts.push(el('h2', {}, 'What would have to change'));
    parts.push(el('ul', {id: 'job-hints'}, e.hints.map(h => el('li', {}, h))));
  }
  if ((e.notes || []).length) {
    parts.push(el('h2', {}, 'Notes'));
    parts.push(el('ul', {id: 'job-notes'}, e.notes.map(n => el('li', {}, n))));
  }
  parts.push(el('h2', {}, 'PodGroup conditions'));
  parts.push(j.conditions.length ? table(['type', 'status', 'reason', 'message', 'since'],
    j.conditions.map(c => el('tr', {}, el('td', {}, c.type), el('td', {}, c.status), el('td', {}, c.reason),
      el('td', {}, c.message), el('td', {}, fmtTime(c.last_transition)))), {id: 'job-conditions'})
    : el('p', {class: 'muted'}, 'None.'));
  parts.push(el('h2', {}, 'Recent events'));
  parts.push(j.events.length ? table(['last seen', 'type', 'object', 'reason', 'message', 'count#'],
    j.events.map(ev => el('tr', {class: 'event-row'}, el('td', {}, fmtTime(ev.last_seen)),
      el('td', {class: ev.type === 'Warning' ? 'warn' : null}, ev.type), el('td', {}, ev.object),
      el('td', {}, ev.reason), el('td', {class: 'event-message'}, ev.message),
      el('td', {class: 'num'}, ev.count))), {id: 'job-events'})
    : el('p', {class: 'muted'}, 'None.'));
  parts.push(el('h2', {}, 'Pods (' + j.pods_total + ')'));
  parts.push(table(['pod', 'role', 'status', 'node', 'priority#'],
    j.pods.map(p => el('tr', {class: 'pod-row'}, el('td', {}, p.name), el('td', {}, p.role), el('td', {}, p.status),
      el('td', {}, p.node || '–'), el('td', {class: 'num'}, p.priority))), {id: 'job-pods'}));
  parts.push(el('h2', {}, 'Nodes'));
  parts.push(el('p', {id: 'job-nodes'}, j.nodes.length ? j.nodes.join(', ') : 'none yet'));
  main.replaceChildren(...parts);
}

// ---------------------------------------------------------------- cluster

// Idle light blue, through blue, to orange when full (interpolated in RGB, so no stray hues).
const HEAT = [[0, [232, 240, 252]], [0.6, [59, 130, 246]], [1, [220, 95, 25]]];
function heatColor(f) {
  const x = Math.max(0, Math.min(1, f));
  let i = 0;
  while (i < HEAT.length - 2 && x > HEAT[i + 1][0]) i++;
  const [x0, c0] = HEAT[i], [x1, c1] = HEAT[i + 1];
  const k = (x - x0) / (x1 - x0);
  return 'rgb(' + c0.map((c, j) => Math.round(c + (c1[j] - c) * k)).join(',') + ')';
}

async function drawCluster(main, params) {
  const doc = await getJson('/api/v1/cluster');
  const dims = ['cpu', 'memory'];
  Object.keys(doc.cluster || {}).forEach(d => { if (!dims.includes(d)) dims.push(d); });
  const dim = dims.includes(params.get('dim')) ? params.get('dim') : 'cpu';
  const select = el('select', {id: 'heat-dim'}, dims.map(d => el('option', {value: d, selected: d === dim}, d)));
  select.addEventListener('change', () => { location.hash = '#/cluster?dim=' + encodeURIComponent(select.value); });
  let sumUsed = 0, sumAlloc = 0;
  // Cells as large as the cluster allows: a few nodes get a labelled tile each.
  const size = doc.nodes.length <= 64 ? 'large' : (doc.nodes.length <= 1000 ? 'medium' : 'small');
  const cells = doc.nodes.map(n => {
    const alloc = (n.allocatable || {})[dim] || 0, used = (n.used || {})[dim] || 0;
    sumUsed += used; sumAlloc += alloc;
    const f = alloc > 0 ? used / alloc : 0;
    const c = el('div', {class: 'cell ' + size + (n.ready ? '' : ' notready'), 'data-node': n.name,
      title: n.name + ': ' + dim + ' ' + fmtQty(dim, used) + ' of ' + fmtQty(dim, alloc) + ' (' +
             Math.round(f * 100) + '%), ' + n.pods + ' pods' + (n.unschedulable ? ', cordoned' : '') +
             (n.ready ? '' : ', not ready')});
    c.style.background = alloc > 0 ? heatColor(f) : '#f3f4f6';
    if (size === 'large') {
      c.appendChild(el('span', {class: 'cell-name'}, n.name));
      c.appendChild(el('span', {class: 'cell-pct'}, alloc > 0 ? Math.round(f * 100) + '%' : '–'));
    }
    return c;
  });
  const reasons = doc.pending_by_reason.map(r => el('tr', {class: 'pending-reason'},
    el('td', {class: 'reason-text'}, r.reason), el('td', {class: 'num pods'}, fmtNumber(r.pods)),
    el('td', {class: 'num'}, fmtNumber(r.jobs)),
    el('td', {}, r.example_jobs.map((id, i) => {
      const slash = id.indexOf('/');
      return [i ? ', ' : '', el('a', {href: jobHref(id.slice(0, slash), id.slice(slash + 1))}, id)];
    }))));
  main.replaceChildren(
    el('h1', {id: 'page-title'}, 'Cluster'),
    el('h2', {}, 'Node utilisation'),
    el('p', {}, 'Resource ', select, ' · ', fmtNumber(doc.total_nodes), ' nodes, ',
       fmtQty(dim, sumUsed), ' of ', fmtQty(dim, sumAlloc), ' in use (',
       sumAlloc > 0 ? Math.round(sumUsed / sumAlloc * 100) : 0, '%) · idle ', el('span', {class: 'scale'}), ' full',
       doc.shown_nodes < doc.total_nodes ? ' · first ' + doc.shown_nodes + ' nodes shown' : ''),
    el('div', {class: 'heatmap', id: 'heatmap'}, cells),
    el('h2', {}, 'Pending pods by reason'),
    reasons.length ? table(['reason (from the last session that tried)', 'pods#', 'jobs#', 'for example'],
                           reasons, {id: 'pending-reasons'})
                   : el('p', {class: 'muted', id: 'pending-reasons'}, 'No pending pods.'));
}

// ---------------------------------------------------------------- plots

const COLORS = ['#2563eb', '#dc6b19', '#16a34a', '#9333ea', '#db2777', '#0891b2', '#ca8a04', '#4b5563'];

// A line plot of series [{name, points: [[timeMs, value]], dashed, color}] into a new <svg>.
function plot(id, title, unit, series) {
  const W = 520, H = 220, L = 52, R = 10, T = 24, B = 28;
  const all = series.flatMap(s => s.points);
  const box = svg('svg', {class: 'plot', id, viewBox: '0 0 ' + W + ' ' + H, role: 'img'});
  box.appendChild(svg('title', {}, title));
  box.appendChild(svg('text', {x: L, y: 14, 'font-weight': 600}, title + (unit ? ' (' + unit + ')' : '')));
  if (!all.length) {
    box.appendChild(svg('text', {x: W / 2, y: H / 2, 'text-anchor': 'middle'}, 'no sessions in the last hour yet'));
    return box;
  }
  const t0 = Math.min(...all.map(p => p[0])), t1 = Math.max(...all.map(p => p[0]), t0 + 60000);
  const vmax = Math.max(...all.map(p => p[1]), 1e-9) * 1.1;
  const x = t => L + (t - t0) / (t1 - t0) * (W - L - R);
  const y = v => H - B - v / vmax * (H - T - B);
  box.appendChild(svg('line', {class: 'axis', x1: L, y1: H - B, x2: W - R, y2: H - B}));
  box.appendChild(svg('line', {class: 'axis', x1: L, y1: T, x2: L, y2: H - B}));
  for (let i = 0; i <= 4; i++) {
    const v = vmax * i / 4;
    box.appendChild(svg('line', {class: 'axis', x1: L, y1: y(v), x2: W - R, y2: y(v), 'stroke-opacity': 0.4}));
    box.appendChild(svg('text', {x: L - 4, y: y(v) + 3, 'text-anchor': 'end'},
                        unit === 'bytes' ? fmtBytes(v) : fmtNumber(v)));
  }
  const clock = t1 - t0 < 15 * 60000 ? {hour: '2-digit', minute: '2-digit', second: '2-digit'}
                                      : {hour: '2-digit', minute: '2-digit'};
  for (let i = 0; i <= 4; i++) {
    const t = t0 + (t1 - t0) * i / 4;
    box.appendChild(svg('text', {x: x(t), y: H - B + 14, 'text-anchor': 'middle'},
                        new Date(t).toLocaleTimeString('en-GB', clock)));
  }
  series.forEach((s, i) => {
    if (!s.points.length) return;
    const d = s.points.map((p, k) => (k ? 'L' : 'M') + x(p[0]).toFixed(1) + ' ' + y(p[1]).toFixed(1)).join(' ');
    box.appendChild(svg('path', {class: 'series' + (s.dashed ? ' dashed' : ''), d,
                                 stroke: s.color || COLORS[i % COLORS.length], 'data-series': s.name}));
  });
  let lx = L + 4;
  series.forEach((s, i) => {
    const label = svg('text', {x: lx, y: T + 10, class: 'legend-label'}, s.name);
    label.style.fill = s.color || COLORS[i % COLORS.length];  // over the stylesheet's text colour
    box.appendChild(label);
    lx += 8 + 6 * s.name.length;
  });
  return box;
}

async function drawHistory(main, params) {
  const doc = await getJson('/api/v1/history');
  const dims = doc.dimensions;
  const dim = dims.includes(params.get('dim')) ? params.get('dim') : 'cpu';
  const k = dims.indexOf(dim);
  const t = b => new Date(b.time).getTime();
  const bs = doc.buckets;
  const queues = [...new Set(bs.flatMap(b => Object.keys(b.queues)))].filter(q => q !== 'root').slice(0, 8);
  const queueSeries = [];
  queues.forEach((q, i) => {
    const color = COLORS[i % COLORS.length];
    queueSeries.push({name: q + ' allocated', color,
                      points: bs.filter(b => b.queues[q]).map(b => [t(b), b.queues[q].allocated[k]])});
    const des = bs.filter(b => b.queues[q] && b.queues[q].deserved);
    if (des.length) queueSeries.push({name: q + ' deserved', color, dashed: true,
                                      points: des.map(b => [t(b), b.queues[q].deserved[k]])});
  });
  const select = el('select', {id: 'history-dim'}, dims.map(d => el('option', {value: d, selected: d === dim}, d)));
  select.addEventListener('change', () => { location.hash = '#/history?dim=' + encodeURIComponent(select.value); });
  main.replaceChildren(
    el('h1', {id: 'page-title'}, 'Over time'),
    el('p', {class: 'muted'}, 'The last hour in ' + doc.bucket_seconds + ' s buckets, kept in the scheduler\'s memory (',
       bs.length + ' buckets with sessions). Queue allocation in ', select, '.'),
    el('div', {class: 'plots'},
      plot('plot-bind-rate', 'Bind rate', 'pods/s', [{name: 'pods sent to bind per second', points: bs.map(b => [t(b), b.bind_rate])}]),
      plot('plot-pending', 'Pending pods', 'pods', [{name: 'pending at the last session', points: bs.map(b => [t(b), b.pending_pods])}]),
      plot('plot-queues', 'Queue allocation vs deserved', dim === 'memory' ? 'bytes' : (dim === 'cpu' ? 'cores' : dim), queueSeries),
      plot('plot-session', 'Session duration', 'ms', [
        {name: 'mean', points: bs.map(b => [t(b), b.session_ms_mean])},
        {name: 'max', dashed: true, points: bs.map(b => [t(b), b.session_ms_max])}])));
}

// ---------------------------------------------------------------- routing

let timer = null;

async function route() {
  const main = document.getElementById('main');
  const hash = location.hash || '#/queues';
  const [path, query] = hash.slice(1).split('?');
  const params = new URLSearchParams(query || '');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  document.querySelectorAll('header nav a').forEach(a =>
    a.classList.toggle('active', a.id === 'nav-' + (parts[0] === 'job' ? 'jobs' : parts[0])));
  const status = document.getElementById('status');
  try {
    await drawOverview();
    if (parts[0] === 'jobs') await drawJobs(main, params);
    else if (parts[0] === 'job' && parts.length === 3) await drawJob(main, parts[1], parts[2]);
    else if (parts[0] === 'cluster') await drawCluster(main, params);
    else if (parts[0] === 'history') await drawHistory(main, params);
    else await drawQueues(main);
    status.textContent = 'updated ' + new Date().toLocaleTimeString('en-GB');
    document.body.setAttribute('data-loaded', 'true');
  } catch (err) {
    status.textContent = 'error';
    main.replaceChildren(el('h1', {id: 'page-title'}, 'Cannot load this page'),
                         el('p', {class: 'warn', id: 'error'}, String(err.message || err)));
    document.body.setAttribute('data-loaded', 'error');
  }
  clearTimeout(timer);
  // Refresh unless somebody is typing a filter.
  timer = setTimeout(() => {
    if (!document.activeElement || document.activeElement.tagName !== 'INPUT') route();
    else timer = setTimeout(route, REFRESH_MS);
  }, REFRESH_MS);
}

window.addEventListener('hashchange', route);
window.addEventListener('DOMContentLoaded', route);
