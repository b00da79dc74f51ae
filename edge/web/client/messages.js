// Foya web: the conversation log. A message as HTML (text, reasoning, tool
// cards, actions), tool results folded into their calls' cards with their
// durations, long texts read on request, paging back through history, and
// keeping the log at its end.
import { gql, showError } from './api.js';
import { attachmentsHTML, hydrateAttachments } from './attachments.js';
import { $, copyText, el, esc, fmtBytes, fmtDuration, utf8Len } from './dom.js';
import { editMessage, rewind } from './edit.js';
import { diffHTML, markdown } from './markdown.js';
import { openSession } from './session.js';
import { renderSessions } from './sidebar.js';
import { HISTORY_PAGE, MSG_FIELDS, S_FIELDS, state } from './state.js';

// ---- conversation rendering
export function renderMessage(m) {
  const role = String(m.role).toLowerCase();
  // An assistant message that only calls tools is its cards, without a bubble.
  const callsOnly = role === 'assistant' && !m.text && !m.reasoning && (m.toolCalls || []).length;
  const div = el('div', 'msg ' + role + (m.isError ? ' error' : '') + (callsOnly ? ' calls' : ''));
  div.dataset.seq = m.seq;
  let html = '<div class="role">' + esc(role === 'tool' ? 'tool result' + (m.toolName ? ': ' + m.toolName : '') : role === 'system' ? 'system context' : role) + '</div>';
  if (m.reasoning) html += '<details class="reasoning"><summary>Reasoning</summary>' + markdown(m.reasoning) + '</details>';
  const shown = utf8Len(m.text || '');
  const more = m.seq && m.textBytes > shown ? '<button type="button" class="moretext">Show the whole text (' + fmtBytes(m.textBytes) + '; ' + fmtBytes(shown) + ' shown)</button>' : '';
  if (role === 'tool') {
    // A tool result goes into its call's card in the assistant message
    // (linkTools); until that message is shown it is a card of its own.
    const st = toolStatus(m);
    div.dataset.call = m.toolCallId || '';
    // Its attachments (a generated image or video) go with it into the card.
    const result = '<div class="result" data-status="' + st + '">' + (m.diff ? diffHTML(m.diff) : '') + '<div class="tlabel">Output</div><pre class="out"><code>' + esc(m.text) + '</code></pre>' + more + attachmentsHTML(m.attachments) + '</div>';
    html += '<details class="toolcall orphan" data-status="' + st + '"><summary>' + toolSummary(m.toolName || 'tool', '', st) + '</summary><div class="tbody">' + result + '</div></details>';
  } else {
    if (!callsOnly) html += '<div class="text">' + markdown(m.text) + '</div>' + more;
  }
  for (const tc of m.toolCalls || []) {
    html += '<details class="toolcall" data-call="' + esc(tc.id) + '" data-status="running"><summary>' + toolSummary(tc.name, argSummary(tc.input), 'running') + '</summary>' +
      '<div class="tbody"><div class="tin"><div class="tlabel">Input</div><pre><code>' + esc(JSON.stringify(tc.input, null, 2)) + '</code></pre></div></div></details>';
  }
  if (role !== 'tool') html += attachmentsHTML(m.attachments);
  // Actions show on hover and keyboard focus (CSS), not as permanent buttons.
  let acts = '';
  if (m.seq && m.text && role !== 'tool') acts += '<button type="button" class="copymsg" aria-label="Copy message">Copy</button>';
  if (role === 'assistant' && m.seq && !m.interrupted && !(m.toolCalls || []).length) acts += '<button type="button" class="fork">Fork from here</button>';
  if (role === 'user' && m.seq) acts += '<button type="button" class="edit" aria-label="Edit this message" title="Edit and resend">Edit</button><button type="button" class="rewind">Rewind to here</button>';
  if (acts) html += '<div class="actions">' + acts + '</div>';
  if (m.interrupted) html += '<div class="interrupted">Interrupted</div>';
  if (m.finishReason === 'refusal') html += '<div class="refusal">Refused' + (m.refusal ? ': ' + esc(m.refusal) : ' (the model gave no explanation)') + '</div>';
  else if (m.finishReason === 'content_filter') html += '<div class="refusal">Stopped by the provider\'s content filter</div>';
  if (m.turnStatus && m.turnStatus !== 'COMPLETED' && m.turnReason) html += '<div class="interrupted">' + esc(m.turnStatus + ': ' + m.turnReason) + '</div>';
  div.innerHTML = html;
  hydrateAttachments(div);
  const moreBtn = div.querySelector('button.moretext');
  if (moreBtn) moreBtn.onclick = async () => {
    moreBtn.disabled = true;
    try {
      const text = await wholeText(state.session, m.seq, m.textBytes);
      const t = role === 'tool' ? moreBtn.parentElement.querySelector('pre.out code') : div.querySelector('.text');
      if (role === 'tool') t.textContent = text; else t.innerHTML = markdown(text);
      moreBtn.remove();
    } catch (e) { moreBtn.disabled = false; showError(e); }
  };
  const cp = div.querySelector('button.copymsg');
  if (cp) cp.onclick = () => copyText(m.text, cp);
  const rw = div.querySelector('button.rewind');
  if (rw) rw.onclick = () => rewind(m.seq).catch(showError);
  const ed = div.querySelector('button.edit');
  if (ed) ed.onclick = () => editMessage(div, m).catch(showError);
  const fork = div.querySelector('button.fork');
  if (fork) fork.onclick = async () => {
    try {
      const d = await gql('mutation($s: ID!, $a: Int!) { forkSession(sessionId: $s, afterSeq: $a) { ' + S_FIELDS + ' } }', { s: state.session, a: m.seq });
      state.sessions.set(d.forkSession.id, d.forkSession); renderSessions();
      await openSession(d.forkSession.id);
    } catch (e) { showError(e); }
  };
  return div;
}
// argSummary: the first string arguments of a tool call, short.
function argSummary(input) {
  if (!input || typeof input !== 'object') return String(input == null ? '' : input).slice(0, 80);
  const parts = [];
  for (const [k, v] of Object.entries(input)) {
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') parts.push(k + ': ' + String(v).split('\n')[0].slice(0, 60));
    if (parts.length === 2) break;
  }
  return parts.join(', ');
}
// ---- tool cards: name, argument summary, status and duration; the body
// holds the input, the diff (unified, coloured) and the output.
const STATUS_LABEL = { running: 'running', ok: 'ok', error: 'error', denied: 'denied', stopped: 'stopped', none: 'no result' };
// toolStatus reads a tool message: a refusal by the person or the
// approval mode is "denied", a call the stop cut short "stopped".
function toolStatus(m) {
  if (!m.isError) return 'ok';
  const t = String(m.text || '');
  if (/^(denied|refused|blocked by)\b/.test(t)) return 'denied';
  if (/^not run\b/.test(t)) return 'stopped';
  return 'error';
}
function toolSummary(name, args, st) {
  return '<span class="tname">' + esc(name) + '</span>' + (args ? ' <span class="args">' + esc(args) + '</span>' : '') +
    ' <span class="tstate">' + STATUS_LABEL[st] + '</span> <span class="tdur"></span>';
}
function setCardStatus(card, st) {
  card.dataset.status = st;
  card.querySelector('.tstate').textContent = STATUS_LABEL[st];
}
// toolTimes: call id → {start, run, end} in ms since the epoch: start from
// the tool_started event, run from the decision that let it run (the
// approval_resolved or guardian_verdict event of the call, when it waited
// for one), end from the event of the call's tool message.
export const toolTimes = new Map();
// timeTool records one of a call's times.
export function timeTool(id, key, at) {
  if (!id || !at) return;
  toolTimes.set(id, Object.assign(toolTimes.get(id) || {}, { [key]: Date.parse(at) }));
}
// showDuration shows how long the call ran: from its start, or from the
// decision when it waited for an approval (or the guardian's review), which
// is not counted (the title says how long it waited).
export function showDuration(card) {
  const owner = card.closest('.msg.tool');
  const t = toolTimes.get(card.dataset.call || (owner ? owner.dataset.call : ''));
  const d = card.querySelector('.tdur');
  if (!t || t.start == null || t.end == null || !d) return;
  const from = t.run != null && t.run > t.start && t.run <= t.end ? t.run : t.start;
  d.textContent = fmtDuration(t.end - from);
  d.dataset.ms = String(t.end - from);
  if (from > t.start) {
    d.dataset.waitMs = String(from - t.start);
    d.title = 'From the decision to run it to its result (it waited ' + fmtDuration(from - t.start) + ' for the decision before, not counted)';
  } else {
    delete d.dataset.waitMs;
    d.title = 'From the start of the call to its result';
  }
}
// linkTools moves each tool result shown on its own into its call's card,
// once the assistant message with the call is in the log. With the
// session idle, a call still without a result says so.
export function linkTools() {
  const log = $('log');
  for (const tm of log.querySelectorAll('.msg.tool:not(.linked)')) {
    const card = tm.dataset.call && log.querySelector('.msg.assistant details.toolcall[data-call="' + CSS.escape(tm.dataset.call) + '"]');
    if (!card) continue;
    const result = tm.querySelector('.result');
    card.querySelector('.tbody').appendChild(result);
    tm.querySelector('details.toolcall').remove(); // the card of its own, now empty
    setCardStatus(card, result.dataset.status);
    card.dataset.seq = tm.dataset.seq;
    tm.classList.add('linked');
    showDuration(card);
  }
  if (state.phase === 'IDLE') for (const c of log.querySelectorAll('.msg.assistant details.toolcall[data-status=running]')) setCardStatus(c, 'none');
}
// toolDurations reads, for the tool rounds in msgs (history), the times of
// their tool_started events and of their tool messages: one query, after
// the messages are on screen.
export async function toolDurations(sid, msgs) {
  const rounds = [];
  for (let i = 0; i < msgs.length; i++) {
    const a = msgs[i];
    if (!(a.toolCalls || []).length) continue;
    const ids = new Set(a.toolCalls.map((c) => c.id));
    let last = a.seq;
    for (let j = i + 1; j < msgs.length && ids.size; j++) if (ids.has(msgs[j].toolCallId)) { last = msgs[j].seq; ids.delete(msgs[j].toolCallId); }
    if (last > a.seq && !a.toolCalls.every((c) => toolTimes.has(c.id) && toolTimes.get(c.id).end != null)) rounds.push({ a, limit: Math.min(5000, last - a.seq) });
  }
  if (!rounds.length) return;
  const q = 'query($s: ID!) { ' + rounds.map((r, i) => 'r' + i + ': events(sessionId: $s, afterSeq: ' + r.a.seq + ', limit: ' + r.limit + ') { seq type at approval { toolCallId } guardianVerdict { toolCallId } }').join(' ') + ' }';
  const d = await gql(q, { s: sid });
  const bySeq = new Map(msgs.map((m) => [m.seq, m]));
  rounds.forEach((r, i) => {
    let k = 0;
    for (const e of d['r' + i] || []) {
      if (e.type === 'tool_started' && k < r.a.toolCalls.length) timeTool(r.a.toolCalls[k++].id, 'start', e.at);
      else if (e.type === 'message_end' && bySeq.has(e.seq) && bySeq.get(e.seq).toolCallId) timeTool(bySeq.get(e.seq).toolCallId, 'end', e.at);
      else if (e.type === 'approval_resolved' && e.approval) timeTool(e.approval.toolCallId, 'run', e.at);
      else if (e.type === 'guardian_verdict' && e.guardianVerdict) timeTool(e.guardianVerdict.toolCallId, 'run', e.at);
    }
  });
  if (state.session !== sid) return;
  for (const c of $('log').querySelectorAll('details.toolcall')) showDuration(c);
}
$('log').addEventListener('click', (e) => {
  const b = e.target.closest('button.copy');
  if (b) copyText(b.parentElement.querySelector('code').textContent, b);
});
// wholeText reads a long message text page by page (pages end on character
// boundaries, so each starts where the previous one ended).
export async function wholeText(sid, seq, total) {
  const parts = []; let got = 0;
  while (got < total) {
    const d = await gql('query($s: ID!, $a: Int!, $o: Int!, $l: Int!) { session(id: $s) { messages(first: 1, afterSeq: $a, includeInactive: true) { text(offset: $o, limit: $l) } } }', { s: sid, a: seq - 1, o: got, l: 1048576 });
    const page = d.session && d.session.messages[0] ? d.session.messages[0].text : '';
    if (!page) break;
    parts.push(page); got += utf8Len(page);
  }
  return parts.join('');
}
// earlierButton offers the page of history before the first message shown.
export function earlierButton(id, beforeSeq) {
  const b = el('button', 'earlier'); b.type = 'button'; b.textContent = 'Show earlier messages';
  b.onclick = async () => {
    b.disabled = true;
    try {
      const d = await gql('query($id: ID!, $b: Int!, $n: Int!) { session(id: $id) { messages(last: $n, beforeSeq: $b) { ' + MSG_FIELDS + ' } } }', { id, b: beforeSeq, n: HISTORY_PAGE });
      if (state.session !== id) return;
      const msgs = d.session ? d.session.messages : [];
      const log = $('log'); const anchor = b.nextSibling;
      // Keep what is on screen where it is: the page goes in above it.
      const fromBottom = log.scrollHeight - log.scrollTop;
      b.remove();
      const frag = document.createDocumentFragment();
      for (const m of msgs) if (!log.querySelector('.msg[data-seq="' + m.seq + '"]')) frag.appendChild(renderMessage(m));
      log.insertBefore(frag, anchor);
      linkTools();
      if (msgs.length === HISTORY_PAGE) log.insertBefore(earlierButton(id, msgs[0].seq), log.firstChild);
      log.scrollTop = log.scrollHeight - fromBottom;
      toolDurations(id, msgs).catch(() => { /* durations are optional */ });
    } catch (e) { b.disabled = false; showError(e); }
  };
  // Scrolling back to the top loads the page before it by itself.
  if ('IntersectionObserver' in window) {
    const io = new IntersectionObserver((es) => { if (es.some((x) => x.isIntersecting) && !b.disabled && b.isConnected) b.click(); }, { root: $('log'), rootMargin: '200px 0px 0px 0px' });
    io.observe(b);
    b.addEventListener('click', () => io.disconnect(), { once: true });
  }
  return b;
}
export const FIRST_SHOWN = 12;
export function scrollLog() { const log = $('log'); log.scrollTop = log.scrollHeight; }
// A log read at its end stays at its end when its box changes size (the
// composer or the usage bar growing, a narrower window).
let atEnd = true;
$('log').addEventListener('scroll', () => { const l = $('log'); atEnd = l.scrollHeight - l.scrollTop - l.clientHeight < 40; }, { passive: true });
if ('ResizeObserver' in window) new ResizeObserver(() => { if (atEnd) scrollLog(); }).observe($('log'));
export function appendMessage(m) {
  const log = $('log');
  if (log.querySelector('.msg[data-seq="' + m.seq + '"]')) return;
  if (state.live) { state.live.remove(); state.live = null; }
  log.appendChild(renderMessage(m));
  linkTools();
  scrollLog();
}
export function liveBubble() {
  if (!state.live) {
    state.live = el('div', 'msg assistant streaming');
    state.live.innerHTML = '<div class="role">assistant</div><details class="reasoning" hidden><summary>Reasoning</summary><div class="r"></div></details><div class="text"></div>';
    state.live.dataset.text = ''; state.live.dataset.reasoning = '';
    $('log').appendChild(state.live);
  }
  return state.live;
}
