// Foya web: the composer. Attachments, the model picker and approval mode
// (of the open session, or of the next new one), send and stop.
import { gql, multipart, showError } from './api.js';
import { $, el, fmtBytes } from './dom.js';
import { showSetup } from './setup.js';
import { ATT_FIELDS, S_FIELDS, state } from './state.js';

// ---- attachments: uploaded with the GraphQL multipart request spec, sent with the next message.
// previews: blob: URLs of the picked image files, by attachment id (shown
// in the composer without asking the kernel for bytes it was just sent).
const previews = new Map();
export function renderAttachments() {
  const ul = $('attachments'); ul.innerHTML = '';
  for (const [id, url] of previews) {
    if (!state.attachments.some((a) => a.id === id)) { URL.revokeObjectURL(url); previews.delete(id); }
  }
  for (const a of state.attachments) {
    const li = el('li');
    if (previews.has(a.id)) { const img = el('img', 'thumb'); img.alt = ''; img.src = previews.get(a.id); li.appendChild(img); }
    li.appendChild(document.createTextNode(a.name + ' (' + fmtBytes(a.size) + ') '));
    const b = el('button'); b.type = 'button'; b.textContent = '×'; b.setAttribute('aria-label', 'Remove attachment ' + a.name);
    b.onclick = () => { state.attachments = state.attachments.filter((x) => x !== a); renderAttachments(); $('input').focus(); };
    li.appendChild(b); ul.appendChild(li);
  }
}
async function upload(file) {
  return (await multipart('mutation($f: Upload!) { uploadAttachment(file: $f) { ' + ATT_FIELDS + ' } }', {}, file)).uploadAttachment;
}
// attachFiles uploads files, one by one, to the composer's attachments.
async function attachFiles(files) {
  for (const f of files) {
    $('status').textContent = 'Uploading ' + f.name + '…';
    try {
      const a = await upload(f);
      if (/^image\/(png|jpeg|gif|webp)$/.test(a.mediaType || '')) previews.set(a.id, URL.createObjectURL(f));
      state.attachments.push(a); renderAttachments(); $('status').textContent = '';
    }
    catch (err) { showError(err); }
  }
}
$('file').addEventListener('change', (e) => {
  const files = [...e.target.files]; e.target.value = '';
  attachFiles(files);
});
// Files pasted into the message box (a screenshot from the clipboard) or
// dropped on the composer are attached the same way; pasted text still goes
// into the box.
$('input').addEventListener('paste', (e) => {
  const dt = e.clipboardData; const files = dt ? [...dt.files] : [];
  if (!files.length || !state.session) return;
  if (![...dt.types].includes('text/plain')) e.preventDefault();
  attachFiles(files);
});
$('composer').addEventListener('dragover', (e) => {
  if (state.session && e.dataTransfer && [...e.dataTransfer.types].includes('Files')) { e.preventDefault(); e.dataTransfer.dropEffect = 'copy'; }
});
$('composer').addEventListener('drop', (e) => {
  const files = e.dataTransfer ? [...e.dataTransfer.files] : [];
  if (!files.length || !state.session) return;
  e.preventDefault();
  attachFiles(files);
});

// ---- models and approval modes
// The approval modes are exactly the schema's ApprovalMode enum.
const MODES = {
  EXPLORE: ['Explore', 'Read-only tools run; writes and commands are denied without asking.'],
  ASK: ['Ask', 'Read-only tools run; writes and commands wait for your approval.'],
  BYPASS: ['Bypass', 'Every tool runs without asking.'],
  GUARDED: ['Guarded', 'A guardian model reviews each write and command first; only what it escalates waits for your approval.'],
};
for (const o of $('mode').options) o.title = MODES[o.value][1];
const modeHelp = () => { $('modehelp').textContent = MODES[$('mode').value][1]; };
// The Approval mode select, like Model, belongs to the open session
// (changed with updateSession) or, with none open, to the next new one.
state.newMode = 'ASK';
$('mode').addEventListener('change', async () => {
  modeHelp();
  const v = $('mode').value;
  if (!state.session) { state.newMode = v; return; }
  try {
    const d = await gql('mutation($s: ID!, $m: ApprovalMode) { updateSession(id: $s, input: {approvalMode: $m}) { ' + S_FIELDS + ' } }', { s: state.session, m: v });
    state.sessions.set(d.updateSession.id, d.updateSession);
    $('status').textContent = 'Approval mode: ' + MODES[v][0] + '.';
  } catch (err) { showError(err); renderModelPicker(); }
});
modeHelp();
// languageModels: every model of the language connections, in order.
export function languageModels() {
  const out = [];
  for (const c of state.connections || []) {
    if ((c.type || 'LANGUAGE') !== 'LANGUAGE') continue;
    for (const m of c.models) out.push({ value: c.id + '|' + m.id, label: c.name + '/' + m.id, conn: c, model: m.id });
  }
  return out;
}
// effectiveDefault: what a session created without a model binds (the
// LANGUAGE default, else the first language connection's first model).
function effectiveDefault() {
  const ms = languageModels();
  const d = state.defaults && state.defaults.language;
  if (d) { const hit = ms.find((m) => m.value === d.connectionId + '|' + d.model); if (hit) return hit; }
  return ms[0] || null;
}
// renderModelPicker fills the composer's Model select: with a session open
// it shows (and changes, with updateSession) that session's model; with none
// it is the model of the next new session ("" = the default, named).
export function renderModelPicker() {
  const ms = $('model'); ms.length = 0;
  const models = languageModels(); const def = effectiveDefault();
  const s = state.session ? state.sessions.get(state.session) : null;
  const add = (value, label) => { const o = el('option'); o.value = value; o.textContent = label; ms.appendChild(o); };
  if (s) {
    const cur = s.connectionId && s.model ? s.connectionId + '|' + s.model : '';
    if (!cur) add('', '(no model: choose one)');
    else if (!models.some((m) => m.value === cur)) add(cur, s.model);
    for (const m of models) add(m.value, m.label);
    ms.value = cur;
    $('modelhelp').textContent = cur ? '' : 'This session has no model: choose one to send.';
    if (s.approvalMode && MODES[s.approvalMode]) $('mode').value = s.approvalMode;
  } else {
    add('', def ? 'Default (' + def.label + ')' : '(no model yet)');
    for (const m of models) add(m.value, m.label);
    if (state.newModel && !models.some((m) => m.value === state.newModel)) state.newModel = '';
    ms.value = state.newModel || '';
    $('modelhelp').textContent = '';
    $('mode').value = state.newMode;
  }
  ms.disabled = !models.length;
  modeHelp();
  const usable = models.length > 0;
  // New session stays clickable: without a model it shows the setup panel
  // (and says why) instead of creating a session that cannot answer.
  $('new').dataset.usable = String(usable);
  $('newhelp').textContent = usable ? '' : 'Connect a model first: a session needs one.';
  showSetup(!usable && state.connections !== undefined);
}
$('model').addEventListener('change', async (e) => {
  const v = e.target.value;
  if (!state.session) { state.newModel = v; return; }
  if (!v) return;
  const [c, m] = v.split('|');
  try {
    const d = await gql('mutation($s: ID!, $c: ID, $m: String) { updateSession(id: $s, input: {connectionId: $c, model: $m}) { ' + S_FIELDS + ' } }', { s: state.session, c, m });
    state.sessions.set(d.updateSession.id, d.updateSession); renderModelPicker();
    $('status').textContent = 'Model: ' + m + '.';
  } catch (err) { showError(err); renderModelPicker(); }
});

// ---- controls
export async function send() {
  const text = $('input').value;
  const atts = state.attachments;
  if (!state.session || (!text.trim() && !atts.length)) return;
  $('input').value = ''; state.attachments = []; renderAttachments();
  try { await gql('mutation($s: ID!, $t: String, $a: [ID!]) { sendMessage(sessionId: $s, input: {text: $t, attachmentIds: $a}) { turnStarted } }', { s: state.session, t: text, a: atts.map((a) => a.id) }); }
  catch (e) { $('input').value = text; state.attachments = atts; renderAttachments(); showError(e); }
}
$('composer').addEventListener('submit', (e) => { e.preventDefault(); send(); });
$('input').addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); send(); }
});
$('stop').onclick = async () => {
  const sid = state.session;
  let keep = true;
  if (state.queue.length) {
    const dlg = $('stopdlg');
    const answer = await new Promise((resolve) => { dlg.returnValue = ''; dlg.onclose = () => resolve(dlg.returnValue); dlg.showModal(); });
    if (answer !== 'keep' && answer !== 'clear') return;
    keep = answer === 'keep';
  }
  gql('mutation($s: ID!, $k: Boolean) { stopTurn(sessionId: $s, keepQueue: $k) { id } }', { s: sid, k: keep }).catch(showError);
};
