// Foya web: the open session. Opening it (the last page of history, the
// tail painted first), its event subscription, the live reply, phase,
// queue, and the usage meters.
import { gql, showError, ws } from './api.js';
import { releaseAttachments } from './attachments.js';
import { approvalCard, fallbackNotice, guardianLine, questionAnswered, questionCard } from './cards.js';
import { renderAttachments, renderModelPicker } from './composer.js';
import { $, afterPaint, el, esc, fmtCost, fmtTokens, titleOf } from './dom.js';
import { markdown } from './markdown.js';
import { FIRST_SHOWN, appendMessage, earlierButton, linkTools, liveBubble, renderMessage, scrollLog, timeTool, toolDurations, toolTimes } from './messages.js';
import { HISTORY_PAGE, MSG_FIELDS, SESSION_Q, state, takePrefetched } from './state.js';
import { renderSessions } from './sidebar.js';
import { loadTerminals, onTerminalEvent } from './terminals.js';

// ---- context and token usage
let usageTimer = null;
export function refreshUsage() {
  clearTimeout(usageTimer);
  usageTimer = setTimeout(async () => {
    const id = state.session; if (!id) return;
    try {
      const d = await gql('query($id: ID!) { session(id: $id) { usage { inputTokens outputTokens totalTokens cachedTokens estimated cost unpricedTokens } contextUsage { tokens limit estimated } } }', { id });
      if (state.session === id && d.session) renderUsage(d.session);
    } catch (e) { /* offline: the next event retries */ }
  }, 150);
}
function renderUsage(s) {
  const c = s.contextUsage, u = s.usage;
  $('usage').hidden = false;
  $('ctx').max = Math.max(1, c.limit); $('ctx').value = Math.min(c.tokens, c.limit);
  const pct = Math.round(100 * c.tokens / Math.max(1, c.limit));
  $('ctxtext').textContent = (c.estimated ? '~' : '') + fmtTokens(c.tokens) + ' / ' + fmtTokens(c.limit) + ' (' + pct + '%)';
  $('ctx').setAttribute('aria-valuetext', $('ctxtext').textContent);
  $('tokens').textContent = 'Spent: ' + (u.estimated ? '~' : '') + fmtTokens(u.totalTokens) + ' tokens (in ' + fmtTokens(u.inputTokens) +
    (u.cachedTokens ? ', ' + fmtTokens(u.cachedTokens) + ' cached' : '') + ', out ' + fmtTokens(u.outputTokens) + ')';
  $('cost').textContent = 'Cost: ' + fmtCost(u.cost) + (u.cost == null ? (u.totalTokens ? ' (unpriced: set prices on the model)' : '') :
    u.unpricedTokens ? ' + ' + fmtTokens(u.unpricedTokens) + ' tokens unpriced' : '');
}
// fmtCost: null (no price known) is "—", never $0.
export function setPhase(p) {
  state.phase = p || 'IDLE';
  $('phase').textContent = state.phase.toLowerCase().replace(/_/g, ' ');
  $('stop').disabled = !state.session || state.phase === 'IDLE';
  if (state.phase === 'IDLE') linkTools();
}
export function renderQueue(q) {
  // Empty before and after (a session opening, mostly): nothing to redraw,
  // and no layout to force by measuring the log.
  if (!state.queue.length && !(q && q.length)) { state.queue = []; state.editing = null; return; }
  state.queue = q || [];
  const log = $('log');
  const atBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 40;
  const list = $('queuelist'); list.innerHTML = '';
  const sid = state.session;
  const mut = (query, vars) => gql(query, Object.assign({ s: sid }, vars)).catch(showError);
  const btn = (label, aria, fn) => { const b = el('button'); b.type = 'button'; b.textContent = label; b.setAttribute('aria-label', aria); b.onclick = fn; return b; };
  state.queue.forEach((it, i) => {
    const li = el('li'); li.dataset.id = it.id;
    if (state.editing && state.editing.id === it.id) {
      const ta = el('textarea'); ta.rows = 2; ta.value = state.editing.text; ta.setAttribute('aria-label', 'Edit queued message');
      ta.oninput = () => { state.editing.text = ta.value; };
      const save = async () => {
        const text = ta.value; state.editing = null;
        await mut('mutation($s: ID!, $i: ID!, $t: String) { editQueuedMessage(sessionId: $s, itemId: $i, input: {text: $t}) { id } }', { i: it.id, t: text });
      };
      ta.addEventListener('keydown', (e) => {
        if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); save(); }
        if (e.key === 'Escape') { state.editing = null; renderQueue(state.queue); }
      });
      li.append(ta, btn('Save', 'Save queued message', save), btn('Cancel', 'Cancel editing', () => { state.editing = null; renderQueue(state.queue); }));
      list.appendChild(li);
      setTimeout(() => ta.focus(), 0);
      return;
    }
    const span = el('span', 'qtext'); span.textContent = it.text + (it.truncated ? '…' : '');
    li.append(span, ' ');
    if ((it.attachments || []).length) li.append(el('small', null, esc(' +' + it.attachments.length + ' attachment(s) ')));
    li.append(btn('Edit', 'Edit queued message', async () => {
      let text = it.text;
      if (it.truncated) {
        const d = await gql('query($id: ID!) { session(id: $id) { queue { id text } } }', { id: sid });
        const full = d.session.queue.find((x) => x.id === it.id); if (full) text = full.text;
      }
      state.editing = { id: it.id, text }; renderQueue(state.queue);
    }));
    const up = btn('↑', 'Move queued message up', () => mut('mutation($s: ID!, $i: ID!, $x: Int!) { moveQueuedMessage(sessionId: $s, itemId: $i, index: $x) { id } }', { i: it.id, x: i - 1 }));
    const down = btn('↓', 'Move queued message down', () => mut('mutation($s: ID!, $i: ID!, $x: Int!) { moveQueuedMessage(sessionId: $s, itemId: $i, index: $x) { id } }', { i: it.id, x: i + 1 }));
    up.disabled = i === 0; down.disabled = i === state.queue.length - 1;
    li.append(up, down, btn('Remove', 'Remove queued message', () => mut('mutation($s: ID!, $i: ID!) { deleteQueuedMessage(sessionId: $s, itemId: $i) { id } }', { i: it.id })));
    list.appendChild(li);
  });
  if (state.editing && !state.queue.some((it) => it.id === state.editing.id)) state.editing = null; // it started or was removed
  $('queue').hidden = !state.queue.length;
  if (atBottom) scrollLog(); // the queue takes room from the log: keep the newest text in view
}

function onSessionEvent(ev) {
  if (ev.seq != null) {
    if (ev.seq <= state.lastSeq) return; // already shown (resumed subscription)
    state.lastSeq = ev.seq;
  }
  switch (ev.type) {
    case 'message_delta': {
      const b = liveBubble(); b.dataset.text += ev.delta || '';
      b.querySelector('.text').innerHTML = markdown(b.dataset.text); scrollLog(); break;
    }
    case 'reasoning_delta': {
      const b = liveBubble(); b.dataset.reasoning += ev.delta || '';
      const d = b.querySelector('details'); d.hidden = false; d.querySelector('.r').innerHTML = markdown(b.dataset.reasoning); break;
    }
    case 'message_end': case 'message_imported':
      if (ev.message) timeTool(ev.message.toolCallId, 'end', ev.at);
      if (ev.message) appendMessage(ev.message); break;
    case 'tool_started': {
      const id = ev.payload && ev.payload.toolCallId;
      if (id && ev.at) toolTimes.set(id, { start: Date.parse(ev.at) });
      break;
    }
    case 'approval_requested':
      if (ev.approval) approvalCard(ev.approval); break;
    case 'guardian_verdict': if (ev.guardianVerdict) timeTool(ev.guardianVerdict.toolCallId, 'run', ev.at); guardianLine(ev.guardianVerdict); break;
    case 'question_requested': questionCard(ev.payload); break;
    case 'route_fallback': fallbackNotice(ev.payload); break;
    case 'terminal_started': case 'terminal_output': case 'terminal_exited': onTerminalEvent(ev); break;
    case 'question_answered': questionAnswered(ev.payload); break;
    case 'usage': refreshUsage(); break;
    case 'approval_resolved': {
      if (ev.approval) timeTool(ev.approval.toolCallId, 'run', ev.at);
      const c = ev.approval && document.querySelector('.approval[data-request="' + ev.approval.requestId + '"]');
      if (c) { c.querySelector('.buttons').textContent = 'Decision: ' + String(ev.approval.decision || '').toLowerCase().replace(/_/g, ' '); c.classList.add('resolved'); }
      break;
    }
    case 'phase_changed': setPhase(ev.phase); break;
    case 'queue_snapshot': renderQueue(ev.queue); break;
    case 'turn_finished': if (state.live) { state.live.classList.remove('streaming'); } refreshUsage(); break;
    case 'session_deleted': openSession(null); break;
    case 'history_rewound': case 'compaction_checkpoint': case 'resync_required': openSession(state.session, true); break;
  }
}


export async function openSession(id, keepInput) {
  if (state.sub) { state.sub(); state.sub = null; }
  if (!keepInput && id !== state.session) { state.attachments = []; renderAttachments(); }
  state.editing = null;
  state.session = id; state.lastSeq = 0; state.live = null;
  $('log').innerHTML = '';
  releaseAttachments();
  let drawn = !id, left = false;
  for (const b of document.querySelectorAll('#sessions button.s')) {
    b.setAttribute('aria-current', String(b.dataset.id === id));
    drawn ||= b.dataset.id === id;
    left ||= b.classList.contains('beyond') && b.dataset.id !== id;
  }
  // The sidebar draws the open session even beyond its group's window:
  // draw again when that changes.
  if ((!drawn && state.sessions.has(id)) || left) renderSessions();
  const on = !!id;
  for (const x of ['input', 'send', 'pin', 'rename', 'delete', 'compact', 'export', 'file']) $(x).disabled = !on;
  $('usage').hidden = true;
  $('pin').setAttribute('aria-pressed', String(!!(on && state.sessions.get(id) && state.sessions.get(id).pinned)));
  if (!id) { $('title').textContent = 'No session'; renderModelPicker(); setPhase('IDLE'); renderQueue([]); loadTerminals(null); history.replaceState(null, '', '/'); return; }
  history.replaceState(null, '', '#' + id);
  const gen = ++state.gen;
  let d;
  const pre = takePrefetched(id);
  if (pre) d = await pre.then((b) => b.data && !(b.errors && b.errors.length) ? b.data : gql(SESSION_Q, { id }), () => gql(SESSION_Q, { id }));
  else d = await gql(SESSION_Q, { id });
  if (state.session !== id || state.gen !== gen) return;
  performance.mark('foya:session-data');
  toolTimes.clear();
  const s = d.session;
  if (!s) { openSession(null); return; }
  $('title').textContent = titleOf(s);
  state.sessions.set(id, Object.assign({}, state.sessions.get(id), { title: s.title, connectionId: s.connectionId, model: s.model, approvalMode: s.approvalMode, phase: s.phase })); renderModelPicker();
  // The last FIRST_SHOWN messages (a screenful and more) are rendered at
  // once; the rest of the page goes in above them after that first paint.
  const msgs = s.messages, cut = Math.max(0, msgs.length - FIRST_SHOWN);
  const frag = document.createDocumentFragment();
  for (const m of msgs.slice(cut)) frag.appendChild(renderMessage(m));
  $('log').appendChild(frag);
  state.lastSeq = s.headSeq;
  setPhase(s.phase); linkTools(); renderQueue(s.queue);
  scrollLog();
  performance.mark('foya:session-rendered');
  afterPaint(() => {
    if (state.session !== id || state.gen !== gen) return;
    const log = $('log');
    if (cut) {
      const fromBottom = log.scrollHeight - log.scrollTop;
      const rest = document.createDocumentFragment();
      for (const m of msgs.slice(0, cut)) rest.appendChild(renderMessage(m));
      log.insertBefore(rest, log.querySelector('.msg'));
      linkTools();
      log.scrollTop = log.scrollHeight - fromBottom;
    }
    // The button goes in once the log is at its end, so it is not in view at once.
    if (msgs.length === HISTORY_PAGE) log.insertBefore(earlierButton(id, msgs[0].seq), log.firstChild);
    refreshUsage();
    loadTerminals(id);
    toolDurations(id, msgs).catch(() => { /* durations are optional */ });
  });
  if (s.phase !== 'IDLE') await showPending(id, s.headSeq);
  const EV = 'subscription($s: ID!, $a: Int) { sessionEvents(sessionId: $s, afterSeq: $a) { seq type at delta phase payload messageTruncated message { ' + MSG_FIELDS + ' } approval { requestId toolCallId tool action summary decision } guardianVerdict { toolCallId verdict reason cause model } terminal { id command cwd status exitCode outputBytes droppedBytes } terminalOutput { terminalId offset text } queue { id text truncated attachments { id } } } }';
  // variables are recomputed on every (re)subscribe: a reconnect resumes after the last seq shown.
  state.sub = ws.subscribe(EV, () => ({ s: id, a: state.lastSeq }), (data) => onSessionEvent(data.sessionEvents));
  $('input').focus();
}

// showPending puts back the approval and question cards still open in a
// running turn (their requests are in the log before headSeq).
async function showPending(id, head) {
  const d = await gql('query($s: ID!, $a: Int) { events(sessionId: $s, afterSeq: $a, limit: 500) { type payload approval { requestId tool action summary decision } } }', { s: id, a: Math.max(0, head - 500) });
  if (state.session !== id) return;
  const open = new Map();
  for (const e of d.events) {
    const r = e.approval ? e.approval.requestId : e.payload && e.payload.requestId;
    if (e.type === 'approval_requested' || e.type === 'question_requested') open.set(r, e);
    else if (e.type === 'approval_resolved' || e.type === 'question_answered') open.delete(r);
  }
  for (const e of open.values()) if (e.type === 'approval_requested') approvalCard(e.approval); else questionCard(e.payload);
}

