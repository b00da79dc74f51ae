// Foya web: the sidebar. Sessions grouped by project, the catalog (projects,
// connections, default models), the kernel's events that change them, the
// session header's buttons, and export and import.
import { GraphQLError, gql, multipart, showError, token, ws } from './api.js';
import { languageModels, renderModelPicker } from './composer.js';
import { editConnection, loadMcp } from './connections.js';
import { $, el, titleOf } from './dom.js';
import { setDrawer } from './layout.js';
import { openSession } from './session.js';
import { showSetup } from './setup.js';
import { S_FIELDS, state } from './state.js';

// ---- sidebar
// Sessions grouped by project (one collapsible <details> per project, "No
// project" last); what is collapsed survives re-renders and reloads of this tab.
//
// A group draws its SHOW newest sessions and SHOW more at each "Show more"
// (how far each group was opened lasts until the page is reloaded); its
// summary counts them all, and the open session is drawn even where the
// window does not reach it. Drawing every session took the page 1.2–2.6 s
// of main-thread CPU at load with 10,000 of them, and again at every kernel
// event (BenchmarkWebSidebarMany). Draws asked for in a burst (kernel events
// come in bursts) are made once, at the next frame.
const collapsed = new Set(JSON.parse(sessionStorage.getItem('foya-collapsed') || '[]'));
const SHOW = 100;
const shown = new Map(); // group key → sessions drawn beyond SHOW
let drawPending = false;
export function renderSessions() {
  if (drawPending) return;
  drawPending = true;
  // A hidden tab runs no frames: the timer draws it then.
  let raf = 0, timer = 0;
  const run = () => { cancelAnimationFrame(raf); clearTimeout(timer); if (drawPending) { drawPending = false; drawSessions(); } };
  raf = requestAnimationFrame(run); timer = setTimeout(run, 100);
}
// updatedMs is a session's last change in ms, parsed once per session
// object (the kernel's times have from 0 to 9 fraction digits, so their text
// does not sort).
const parsed = new WeakMap();
const updatedMs = (s) => {
  let t = parsed.get(s);
  if (t === undefined) { t = Date.parse(s.updatedAt) || 0; parsed.set(s, t); }
  return t;
};
const newestFirst = (a, b) => (b.pinned - a.pinned) || (updatedMs(b) - updatedMs(a)) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
// sessionItem returns the sidebar's <li> of session s: made once per
// session object (the kernel's events replace the object of a session that
// changed), so a draw moves the items of the others rather than making them
// again.
const items = new WeakMap();
function sessionItem(s, beyond) {
  let li = items.get(s);
  if (!li) {
    li = el('li'); const b = el('button', 's'); b.type = 'button'; b.dataset.id = s.id;
    const t = el('span'); t.textContent = titleOf(s); b.appendChild(t);
    if (s.worktree) { const w = el('span', 'wt'); w.title = s.worktree.path; w.textContent = s.worktree.branch; b.appendChild(w); }
    const ph = el('span', 'ph'); ph.textContent = String(s.phase).toLowerCase(); b.appendChild(ph);
    b.onclick = () => openSession(s.id).catch(showError);
    li.appendChild(b); items.set(s, li);
  }
  const b = li.firstChild;
  b.setAttribute('aria-current', String(s.id === state.session));
  b.classList.toggle('beyond', beyond); // openSession draws again when it is left
  return li;
}
// The filter above the groups keeps the sessions whose title contains its
// text (any case); the groups then count what matches.
let filter = '', filterText = '';
$('sessionfilter').addEventListener('input', (e) => { filterText = e.target.value.trim(); filter = filterText.toLowerCase(); renderSessions(); });
function drawSessions() {
  const root = $('sessions');
  const groups = new Map();
  for (const s of state.sessions.values()) {
    if (s.parentId) continue;
    if (filter && !titleOf(s).toLowerCase().includes(filter)) continue;
    const k = s.project ? s.project.id : '';
    if (!groups.has(k)) groups.set(k, { name: s.project ? (s.project.name || s.project.path) : 'No project', items: [] });
    groups.get(k).items.push(s);
  }
  const keys = [...groups.keys()].sort((a, b) => (a === '') - (b === '') || groups.get(a).name.localeCompare(groups.get(b).name));
  const frag = document.createDocumentFragment();
  for (const k of keys) {
    const g = groups.get(k);
    g.items.sort(newestFirst);
    const det = el('details', 'group'); det.open = !collapsed.has(k); det.dataset.project = k;
    const sum = el('summary'); sum.textContent = g.name + ' (' + g.items.length + ')'; det.appendChild(sum);
    det.addEventListener('toggle', () => {
      if (det.open) collapsed.delete(k); else collapsed.add(k);
      sessionStorage.setItem('foya-collapsed', JSON.stringify([...collapsed]));
    });
    const ul = el('ul');
    const limit = SHOW + (shown.get(k) || 0);
    const drawn = g.items.slice(0, limit);
    const cur = g.items.findIndex((s) => s.id === state.session);
    if (cur >= limit) drawn.push(g.items[cur]);
    drawn.forEach((s, i) => ul.appendChild(sessionItem(s, i >= limit)));
    det.appendChild(ul);
    if (g.items.length > limit) {
      const rest = g.items.length - limit;
      const more = el('button', 'more'); more.type = 'button';
      more.textContent = 'Show ' + Math.min(SHOW, rest) + ' more (' + rest + ' not shown)';
      more.onclick = () => {
        shown.set(k, (shown.get(k) || 0) + SHOW);
        drawSessions();
        // The keyboard goes on from the first session just drawn.
        const next = root.querySelectorAll('details.group')[keys.indexOf(k)]?.querySelectorAll('button.s')[limit];
        if (next) next.focus();
      };
      det.appendChild(more);
    }
    frag.appendChild(det);
  }
  if (filter && !keys.length) {
    const none = el('p', 'help'); none.textContent = 'No session\u2019s title contains \u201c' + filterText + '\u201d.';
    frag.appendChild(none);
  }
  root.replaceChildren(frag);
}
const CAPS = 'contextWindow maxInputTokens maxOutputTokens imageInput toolCalling reasoningEfforts webSearch generation { image video audio } ' +
  'prices { inputPerMillion cachedInputPerMillion cacheWritePerMillion outputPerMillion }';
const DEFAULTS = [['deflang', 'LANGUAGE', 'language'], ['deffast', 'FAST', 'fast'], ['defimage', 'IMAGE', 'image'], ['defvideo', 'VIDEO', 'video']];
// The session list is read a page at a time (sessions(first:, after:)), so
// no response has to carry every session (one response is 16 MiB at most:
// about 50,000 sessions); the first page comes with the catalog and is
// drawn at once, the others when the last has arrived (drawing at every
// page of 500 made a load with 10,000 sessions take 2.4 times the CPU). A
// walk runs beside the kernel's events: a session an event changed or
// deleted meanwhile keeps what the event said, and at the end the sessions
// the walk did not see (deleted before it) go.
const SESSIONS_PAGE = 1000;
const walks = new Set(); // of the walks under way: the ids events touched
// fitPage runs query(n) for pages of n sessions from SESSIONS_PAGE down:
// a page larger than the kernel's response limit (serve --max-response) is
// asked for again a quarter as long. It returns [the answer, n].
async function fitPage(query, n = SESSIONS_PAGE) {
  for (;;) {
    try { return [await query(n), n]; }
    catch (e) { if (n > 4 && e.code === 'BAD_INPUT' && /the response size limit/.test(e.message)) n = Math.floor(n / 4); else throw e; }
  }
}
// loadSessions walks the list from its first page, read by loadSidebar
// after it added touched to walks: an event that comes while that page is
// on its way may tell of a session the page is too old to hold.
async function loadSessions(first, n, touched) {
  try {
    const seen = new Set();
    let page = first;
    for (;;) {
      for (const s of page) { seen.add(s.id); if (!touched.has(s.id)) state.sessions.set(s.id, s); }
      if (page === first) renderSessions(); // the first page at once, the others at the end
      if (page.length < n) break;
      let after = page[page.length - 1].id;
      for (let restarts = 0; ; restarts++) {
        try {
          [page, n] = await fitPage((m) => gql('query($n: Int, $a: ID) { sessions(first: $n, after: $a) { ' + S_FIELDS + ' } }', { n: m, a: after }).then((d) => d.sessions), n);
          break;
        } catch (e) {
          // The page's last session was deleted since: walk again from the
          // start (what was seen stays seen).
          if (restarts < 3 && after !== null && e.code === 'NOT_FOUND') after = null; else throw e;
        }
      }
    }
    for (const id of [...state.sessions.keys()]) if (!seen.has(id) && !touched.has(id)) state.sessions.delete(id);
    renderSessions();
  } finally {
    walks.delete(touched);
  }
}

// loadSidebar reads the catalog (projects, connections, default models) and,
// unless sessions is false, the session list. A catalog change
// (catalog_updated) reads the catalog only: what it does to sessions (a
// deleted connection's sessions unbound) comes as their own events.
export async function loadSidebar({ sessions: withSessions = true } = {}) {
  const catalog = 'projects { id name path } connections { id name baseUrl type apiKeyConfigured models { id capabilities { ' + CAPS + ' } } } ' +
    'defaultModels { language { connectionId model } fast { connectionId model } image { connectionId model } video { connectionId model } }';
  // The walk's events count from before its first page is asked for.
  const touched = withSessions ? new Set() : null;
  if (touched) walks.add(touched);
  let d, n;
  try { [d, n] = withSessions ? await fitPage((m) => gql('query($n: Int) { sessions(first: $n) { ' + S_FIELDS + ' } ' + catalog + ' }', { n: m })) : [await gql('{ ' + catalog + ' }'), 0]; }
  catch (e) { walks.delete(touched); throw e; }
  const sessions = withSessions ? loadSessions(d.sessions, n, touched) : null;
  const ps = $('project'); const keepP = ps.value; ps.length = 1;
  for (const p of d.projects) { const o = el('option'); o.value = p.id; o.textContent = p.name || p.path; ps.appendChild(o); }
  ps.value = keepP;
  state.connections = d.connections; state.defaults = d.defaultModels;
  renderModelPicker();
  const cl = $('connlist'); cl.innerHTML = '';
  for (const c of d.connections) {
    const li = el('li'); li.dataset.id = c.id;
    li.append(c.name + (c.type && c.type !== 'LANGUAGE' ? ' [' + c.type.toLowerCase() + ']' : '') + ' (' + (c.models.map((m) => m.id).join(', ') || 'no models') + ') ');
    const b = el('button'); b.type = 'button'; b.textContent = 'Refresh models'; b.setAttribute('aria-label', 'Refresh models of ' + c.name);
    b.onclick = async () => {
      b.disabled = true;
      try { await gql('mutation($c: ID!) { refreshModels(connectionId: $c) { id } }', { c: c.id }); await loadSidebar({ sessions: false }); $('status').textContent = 'Models of ' + c.name + ' refreshed.'; }
      catch (e) { showError(e); b.disabled = false; }
    };
    const ed = el('button'); ed.type = 'button'; ed.textContent = 'Edit'; ed.setAttribute('aria-label', 'Edit connection ' + c.name);
    ed.onclick = () => editConnection(c);
    const del = el('button'); del.type = 'button'; del.textContent = 'Delete'; del.setAttribute('aria-label', 'Delete connection ' + c.name);
    del.onclick = async () => {
      if (!window.confirm('Delete the connection "' + c.name + '"? Defaults that use it are cleared and its sessions are unbound (their history stays).')) return;
      try { await gql('mutation($c: ID!) { deleteConnection(id: $c) }', { c: c.id }); await loadSidebar({ sessions: false }); $('status').textContent = 'Connection ' + c.name + ' deleted.'; }
      catch (e) { showError(e); }
    };
    li.append(b, ' ', ed, ' ', del); cl.appendChild(li);
  }
  // Default selects: LANGUAGE and FAST take language connections' models, IMAGE and VIDEO their own kind.
  for (const [sel, purpose, key] of DEFAULTS) {
    const want = purpose === 'FAST' ? 'LANGUAGE' : purpose;
    const s = $(sel); s.length = 1;
    for (const c of d.connections) {
      if ((c.type || 'LANGUAGE') !== want) continue;
      for (const m of c.models) { const o = el('option'); o.value = c.id + '|' + m.id; o.textContent = c.name + '/' + m.id; s.appendChild(o); }
    }
    const ref = d.defaultModels[key];
    s.value = ref ? ref.connectionId + '|' + ref.model : '';
  }
  await sessions;
}

// watchKernel follows kernelEvents(ready: true) and resolves at its first
// subscribed event (the list read after it misses no change), or after
// wait ms without one (the kernel slow to answer, a token asked for). A
// subscribed event after that wait, or after a reconnect, reads the
// catalog and the session list again: the changes made before it (while
// the WebSocket was down, or since the list was read) were not sent.
export function watchKernel(wait) {
  let first = true, settled = false, resolve;
  const subscribed = new Promise((r) => { resolve = r; });
  const timer = setTimeout(() => { settled = true; resolve(); }, wait);
  ws.subscribe('subscription { kernelEvents(ready: true) { type sessionId session { ' + S_FIELDS + ' } } }', {}, (data) => {
    const e = data.kernelEvents;
    if (e.type === 'subscribed') {
      const reread = !first || settled; // a reconnect's, or the list was read without the events
      first = false;
      if (!settled) { settled = true; clearTimeout(timer); resolve(); }
      if (reread) { loadSidebar().catch(showError); loadMcp().catch(showError); }
      return;
    }
    for (const touched of walks) touched.add(e.sessionId || (e.session && e.session.id));
    if (e.type === 'session_deleted') { state.sessions.delete(e.sessionId); if (e.sessionId === state.session) openSession(null); }
    else if (e.session) {
      state.sessions.set(e.session.id, e.session);
      if (e.session.id === state.session) {
        $('title').textContent = titleOf(e.session);
        renderModelPicker();
        $('pin').setAttribute('aria-pressed', String(!!e.session.pinned));
      }
    }
    if (e.type === 'catalog_updated') { loadSidebar({ sessions: false }).catch(showError); loadMcp().catch(showError); }
    else if (e.type === 'mcp_needs_auth') loadMcp().catch(showError);
    else renderSessions();
  });
  return subscribed;
}

for (const [sel, purpose] of DEFAULTS) {
  $(sel).addEventListener('change', async (e) => {
    const [c, m] = e.target.value ? e.target.value.split('|') : [null, null];
    try { await gql('mutation($p: ModelPurpose!, $c: ID, $m: String) { setDefaultModel(purpose: $p, connectionId: $c, model: $m) { language { model } } }', { p: purpose, c, m }); $('status').textContent = 'Default saved.'; }
    catch (err) { showError(err); loadSidebar().catch(showError); }
  });
}

$('new').onclick = async () => {
  if (!languageModels().length) { showSetup(true); setDrawer(false); $('preset').focus(); return; }
  try {
    const input = { approvalMode: state.newMode };
    if ($('newtitle').value.trim()) input.title = $('newtitle').value.trim();
    $('newtitle').value = '';
    if ($('project').value) input.projectId = $('project').value;
    if (state.newModel) { const [c, m] = state.newModel.split('|'); input.connectionId = c; input.model = m; }
    if ($('newworktree').checked) {
      // A git worktree of its own (docs/worktrees.md); empty fields: the kernel's defaults.
      input.worktree = {};
      if ($('newbranch').value.trim()) input.worktree.branch = $('newbranch').value.trim();
      if ($('newbaseref').value.trim()) input.worktree.baseRef = $('newbaseref').value.trim();
    }
    const d = await gql('mutation($i: CreateSessionInput!) { createSession(input: $i) { ' + S_FIELDS + ' } }', { i: input });
    $('newbranch').value = '';
    state.sessions.set(d.createSession.id, d.createSession); renderSessions();
    await openSession(d.createSession.id);
  } catch (e) { showError(e); }
};
$('pin').onclick = () => gql('mutation($s: ID!, $p: Boolean) { updateSession(id: $s, input: {pinned: $p}) { id } }',
  { s: state.session, p: $('pin').getAttribute('aria-pressed') !== 'true' }).catch(showError);
$('rename').onclick = async () => {
  const t = window.prompt('New title', (state.sessions.get(state.session) || {}).title || '');
  if (t != null) gql('mutation($s: ID!, $t: String) { updateSession(id: $s, input: {title: $t}) { id } }', { s: state.session, t }).catch(showError);
};
$('newworktree').addEventListener('change', (e) => { $('worktreeopts').hidden = !e.target.checked; });
$('delete').onclick = async () => {
  const id = state.session, s = state.sessions.get(id) || {};
  const wt = s.worktree && !s.parentId;
  if (!window.confirm(wt ? 'Delete this session, its history and its git worktree ' + s.worktree.path + '? (The branch ' + s.worktree.branch + ' stays.)' : 'Delete this session and its history?')) return;
  const del = (force) => gql('mutation($s: ID!, $f: Boolean) { deleteSession(id: $s, force: $f) }', { s: id, f: force });
  try { await del(false); } catch (e) {
    // A worktree with uncommitted changes needs force: ask before discarding them.
    if (!(wt && e instanceof GraphQLError && e.code === 'BAD_INPUT' && /force/.test(e.message))) { showError(e); return; }
    if (window.confirm('The worktree has uncommitted changes or untracked files. Delete it anyway and discard them?')) del(true).catch(showError);
  }
};
$('compact').onclick = () => gql('mutation($s: ID!) { compactSession(sessionId: $s) { id } }', { s: state.session }).catch(showError);
// ---- export and import (foya.session JSON Lines, docs/export.md)
$('export').onclick = async () => {
  const id = state.session; if (!id) return;
  try {
    // The export route streams the document, with no size bound.
    const headers = {}; if (token()) headers.Authorization = 'Bearer ' + token();
    const resp = await fetch('/sessions/' + encodeURIComponent(id) + '/export', { headers });
    if (!resp.ok) {
      let body = null; try { body = await resp.json(); } catch (e) { /* not JSON */ }
      throw body && body.errors ? new GraphQLError(body.errors) : new Error('kernel answered HTTP ' + resp.status);
    }
    const doc = await resp.blob();
    const title = titleOf(state.sessions.get(id));
    const a = el('a'); a.href = URL.createObjectURL(new Blob([doc], { type: 'application/jsonl' }));
    a.download = (title.replace(/[^\w.-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60) || 'session') + '.foya.jsonl';
    document.body.appendChild(a); a.click(); a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 60000);
    $('status').textContent = 'Exported.';
  } catch (e) { showError(e); }
};
// Import binds the new session to the project chosen in the New session
// form (none by default); the file goes up as a multipart request.
$('importfile').addEventListener('change', async (e) => {
  const f = e.target.files[0]; e.target.value = '';
  if (!f) return;
  $('status').textContent = 'Importing ' + f.name + '…';
  try {
    const d = await multipart('mutation($f: Upload!, $p: ID) { importSessionFile(file: $f, projectId: $p) { ' + S_FIELDS + ' } }', { p: $('project').value || null }, f);
    const s = d.importSessionFile;
    state.sessions.set(s.id, s); renderSessions();
    $('status').textContent = 'Imported ' + f.name + '.';
    await openSession(s.id);
  } catch (err) { showError(err); }
});

