// Foya web: the cards in the log that ask the person something (approvals,
// the model's questions, MCP elicitations) and the notices about a call
// (fallback model, guardian verdict).
import { gql, showError } from './api.js';
import { $, el, esc } from './dom.js';
import { markdown } from './markdown.js';
import { scrollLog } from './messages.js';
import { state } from './state.js';

// ---- questions from the model's question tool
// fallbackNotice shows, in the transcript, that a model call went to a
// fallback model (a route_fallback event): which model failed, why, and
// which model answers instead (docs/fallback.md).
export function fallbackNotice(p) {
  if (!p || !p.to) return;
  const n = el('div', 'msg system fallback');
  n.textContent = 'Model ' + ((p.from && p.from.model) || '?') + ' failed (' + String(p.reason || '').replace(/_/g, ' ') + '); answering with fallback ' + p.to.model + '.';
  $('log').appendChild(n); scrollLog();
}

export function questionCard(q) {
  if (!q || !q.requestId || document.querySelector('.question[data-request="' + q.requestId + '"]')) return;
  if (q.elicitation) { elicitationCard(q); return; }
  const card = el('div', 'approval question');
  card.dataset.request = q.requestId;
  card.setAttribute('role', 'group');
  card.setAttribute('aria-label', 'Question');
  card.innerHTML = '<div><strong>Question</strong>' + (q.childSessionId ? ' <small>(from a sub-agent)</small>' : '') + '</div><div class="text">' + markdown(q.question) +
    '</div><div class="buttons"><textarea rows="2" aria-label="Answer"></textarea><button type="button">Answer</button></div>';
  const sid = state.session;
  const ta = card.querySelector('textarea'); const b = card.querySelector('button');
  const answer = async () => {
    if (!ta.value.trim()) { ta.focus(); return; }
    b.disabled = ta.disabled = true;
    try { await gql('mutation($s: ID!, $r: ID!, $a: String!) { answerQuestion(sessionId: $s, requestId: $r, answer: $a) }', { s: sid, r: q.requestId, a: ta.value }); }
    catch (e) { showError(e); b.disabled = ta.disabled = false; }
  };
  b.onclick = answer;
  ta.addEventListener('keydown', (e) => { if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); answer(); } });
  $('log').appendChild(card);
  ta.focus({ preventScroll: true });
  scrollLog();
}
// elicitationCard is a question an MCP server asked during a tool call
// (elicitation/create): a form of its fields, or a link to open (URL
// mode), with Submit, Decline and Cancel; the kernel checks the fields
// and the server receives the action.
function elicitationCard(q) {
  const el0 = q.elicitation;
  const card = el('div', 'approval question elicitation');
  card.dataset.request = q.requestId;
  card.setAttribute('role', 'group');
  card.setAttribute('aria-label', 'Question from MCP server ' + el0.server);
  const head = el('div'); const strong = el('strong'); strong.textContent = 'MCP server ' + el0.server + ' asks'; head.append(strong);
  const text = el('div', 'text', markdown(el0.message || q.question || ''));
  const form = el('form', 'fields');
  const inputs = [];
  if (el0.mode === 'url' && el0.url) {
    const a = el('a'); a.href = el0.url; a.target = '_blank'; a.rel = 'noopener noreferrer'; a.textContent = 'Open ' + el0.url;
    form.append(a);
  }
  for (const f of el0.fields || []) {
    const lab = el('label'); lab.append((f.title || f.name) + (f.required ? ' *' : '') + ' ');
    let inp;
    if (f.type === 'boolean') { inp = el('input'); inp.type = 'checkbox'; inp.checked = f.default === true; }
    else if (f.type === 'array') {
      inp = el('select'); inp.multiple = true;
      for (const o of f.options || []) { const op = el('option'); op.value = o.value; op.textContent = o.title || o.value; op.selected = Array.isArray(f.default) && f.default.includes(o.value); inp.append(op); }
    } else if (f.options && f.options.length) {
      inp = el('select');
      if (!f.required) { const none = el('option'); none.value = ''; none.textContent = '—'; inp.append(none); }
      for (const o of f.options) { const op = el('option'); op.value = o.value; op.textContent = o.title || o.value; inp.append(op); }
      if (f.default != null) inp.value = String(f.default);
    } else {
      inp = el('input');
      inp.type = f.type === 'number' || f.type === 'integer' ? 'number' : ({ email: 'email', uri: 'url', date: 'date', 'date-time': 'datetime-local' }[f.format] || 'text');
      if (f.type === 'integer') inp.step = '1';
      if (f.minimum != null) inp.min = String(f.minimum);
      if (f.maximum != null) inp.max = String(f.maximum);
      if (f.default != null) inp.value = String(f.default);
    }
    inp.name = f.name; inp.required = !!f.required && f.type !== 'boolean';
    lab.append(inp);
    if (f.description) { const d = el('small'); d.textContent = ' ' + f.description; lab.append(d); }
    form.append(lab); inputs.push([f, inp]);
  }
  const value = (f, inp) => {
    if (f.type === 'boolean') return inp.checked;
    if (f.type === 'array') return [...inp.selectedOptions].map((o) => o.value);
    if (inp.value === '') return undefined;
    return f.type === 'number' || f.type === 'integer' ? Number(inp.value) : inp.value;
  };
  const buttons = el('div', 'buttons');
  const mk = (label, action) => { const b = el('button'); b.type = 'button'; b.textContent = label; b.dataset.action = action; buttons.append(b); return b; };
  // A form without fields is a confirmation (e.g. a server asking to
  // sample with the session's model): Allow.
  const submit = mk(el0.mode === 'url' ? 'Done' : ((el0.fields || []).length ? 'Submit' : 'Allow'), 'ACCEPT'); mk('Decline', 'DECLINE'); mk('Cancel', 'CANCEL');
  const sid = state.session;
  const send = async (action) => {
    if (action === 'ACCEPT' && !form.reportValidity()) return;
    const content = {};
    for (const [f, inp] of inputs) { const v = value(f, inp); if (v !== undefined) content[f.name] = v; }
    const all = card.querySelectorAll('button, input, select'); all.forEach((x) => { x.disabled = true; });
    try { await gql('mutation($s: ID!, $r: ID!, $a: String!, $x: QuestionAction) { answerQuestion(sessionId: $s, requestId: $r, answer: $a, action: $x) }', { s: sid, r: q.requestId, a: action === 'ACCEPT' ? JSON.stringify(content) : '', x: action }); }
    catch (e) { showError(e); all.forEach((x) => { x.disabled = false; }); }
  };
  buttons.querySelectorAll('button').forEach((b) => { b.onclick = () => send(b.dataset.action); });
  form.addEventListener('submit', (e) => { e.preventDefault(); send('ACCEPT'); });
  card.append(head, text, form, buttons);
  $('log').appendChild(card);
  (inputs.length ? inputs[0][1] : submit).focus({ preventScroll: true });
  scrollLog();
}

export function questionAnswered(q) {
  const c = q && document.querySelector('.question[data-request="' + q.requestId + '"]');
  if (!c) return;
  c.querySelector('.buttons').innerHTML = q.cancelled ? '<em>Not answered (the turn stopped)</em>' : 'Answer: ' + esc(q.answer);
  c.classList.add('resolved');
}

export function approvalCard(a) {
  if (document.querySelector('.approval[data-request="' + a.requestId + '"]')) return;
  const card = el('div', 'approval');
  card.dataset.request = a.requestId;
  card.setAttribute('role', 'group');
  card.setAttribute('aria-label', 'Approval: ' + a.tool);
  card.innerHTML = '<div><strong>' + esc(a.tool) + '</strong> wants to ' + esc(a.action) + '</div><pre><code>' + esc(a.summary) + '</code></pre><div class="buttons"></div>';
  const sid = state.session;
  for (const [label, decision] of [['Approve', 'APPROVED'], ['Approve for session', 'APPROVED_FOR_SESSION'], ['Deny', 'DENIED']]) {
    const b = el('button'); b.type = 'button'; b.textContent = label;
    b.onclick = async () => {
      card.querySelectorAll('button').forEach((x) => { x.disabled = true; });
      try { await gql('mutation($s: ID!, $r: ID!, $d: ApprovalDecision!) { resolveApproval(sessionId: $s, requestId: $r, decision: $d) }', { s: sid, r: a.requestId, d: decision }); }
      catch (e) { showError(e); card.querySelectorAll('button').forEach((x) => { x.disabled = false; }); }
    };
    card.querySelector('.buttons').appendChild(b);
  }
  $('log').appendChild(card);
  card.querySelector('button').focus({ preventScroll: true });
  scrollLog();
}
// guardianLine puts the guardian's verdict (GUARDED) on its tool card.
export function guardianLine(g) {
  const card = g && $('log').querySelector('details.toolcall[data-call="' + CSS.escape(g.toolCallId) + '"]');
  if (!card) return;
  const p = el('p', 'guardian verdict-' + g.verdict);
  p.textContent = 'Guardian ' + g.verdict + (g.cause && g.cause !== 'verdict' ? ' (' + g.cause + ')' : '') + (g.model ? ' by ' + g.model : '') + (g.reason ? ': ' + g.reason : '');
  card.appendChild(p);
}
