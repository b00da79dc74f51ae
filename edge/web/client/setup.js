// Foya web: the first-run setup panel (presets, a check before saving, the
// first model made the default).
import { gql } from './api.js';
import { $, el } from './dom.js';
import { loadSidebar } from './sidebar.js';
import { state } from './state.js';

// ---- first-run setup: presets, and a check (the provider lists its
// models) before the connection is kept. The API has no dry run: the
// connection is created, refreshModels checks it, and a failed check
// deletes it again unless the person chooses to save without checking.
const PRESETS = [
  { id: 'openai', label: 'OpenAI', name: 'openai', baseUrl: 'https://api.openai.com/v1', kind: 'openai', key: 'env:OPENAI_API_KEY', help: 'Chat Completions; a key from platform.openai.com (or env:OPENAI_API_KEY, read by the kernel).' },
  { id: 'anthropic', label: 'Anthropic', name: 'claude', baseUrl: 'https://api.anthropic.com', kind: 'anthropic', key: 'env:ANTHROPIC_API_KEY', help: 'Anthropic Messages; a key from console.anthropic.com (or env:ANTHROPIC_API_KEY).' },
  { id: 'responses', label: 'OpenAI (Responses API)', name: 'openai-responses', baseUrl: 'https://api.openai.com/v1', kind: 'openai-responses', key: 'env:OPENAI_API_KEY', help: 'The OpenAI Responses API (e.g. codex models); the same key as OpenAI.' },
  { id: 'openrouter', label: 'OpenRouter', name: 'openrouter', baseUrl: 'https://openrouter.ai/api/v1', kind: 'openai', key: 'env:OPENROUTER_API_KEY', help: 'Many models through one OpenAI-compatible endpoint; a key from openrouter.ai.' },
  { id: 'ollama', label: 'Ollama (this machine)', name: 'ollama', baseUrl: 'http://127.0.0.1:11434/v1', kind: 'openai', key: '', help: 'A local Ollama server: no key; its pulled models are listed.' },
  { id: 'lmstudio', label: 'LM Studio (this machine)', name: 'lmstudio', baseUrl: 'http://127.0.0.1:1234/v1', kind: 'openai', key: '', help: 'LM Studio\'s local server: no key.' },
  { id: 'vllm', label: 'vLLM (this machine)', name: 'vllm', baseUrl: 'http://127.0.0.1:8000/v1', kind: 'openai', key: '', help: 'vLLM\'s OpenAI-compatible server: a key only if it was started with --api-key.' },
  { id: 'custom', label: 'Other OpenAI-compatible', name: 'custom', baseUrl: '', kind: 'openai', key: '', help: 'Any endpoint speaking Chat Completions; its base URL usually ends in /v1.' },
];
for (const p of PRESETS) { const o = el('option'); o.value = p.id; o.textContent = p.label; $('preset').appendChild(o); }
function applyPreset() {
  const p = PRESETS.find((x) => x.id === $('preset').value) || PRESETS[0];
  const f = $('setupform');
  f.elements.name.value = p.name; f.elements.baseUrl.value = p.baseUrl; f.elements.apiKey.value = '';
  f.elements.apiKey.placeholder = p.key ? 'sk-… or ' + p.key : '(none needed)';
  $('presethelp').textContent = p.help;
  $('setupresult').textContent = ''; $('setupforce').hidden = true;
}
$('preset').addEventListener('change', applyPreset); applyPreset();
export function showSetup(on) {
  const was = !$('setup').hidden;
  $('setup').hidden = !on;
  if (on && !was && !state.session) $('preset').focus({ preventScroll: true });
}
function setupInput() {
  const f = $('setupform'); const p = PRESETS.find((x) => x.id === $('preset').value) || PRESETS[0];
  const input = { name: f.elements.name.value.trim(), baseUrl: f.elements.baseUrl.value.trim(), providerKind: p.kind, type: 'LANGUAGE' };
  if (f.elements.apiKey.value.trim()) input.apiKey = f.elements.apiKey.value.trim();
  const models = f.elements.models.value.split(',').map((m) => m.trim()).filter(Boolean);
  if (models.length) input.models = models.map((id) => ({ id }));
  return input;
}
// afterSetup makes the first language model the default when none is set,
// so the default shows at once, then reloads the sidebar.
async function afterSetup(conn, note) {
  const first = conn.models[0];
  if (first && !(state.defaults && state.defaults.language)) {
    await gql('mutation($c: ID, $m: String) { setDefaultModel(purpose: LANGUAGE, connectionId: $c, model: $m) { language { model } } }', { c: conn.id, m: first.id });
  }
  $('setupform').reset(); applyPreset();
  await loadSidebar();
  $('status').textContent = note;
}
$('setupform').addEventListener('submit', async (e) => {
  e.preventDefault();
  const input = setupInput(); const res = $('setupresult');
  $('setupsave').disabled = true; $('setupforce').hidden = true;
  res.textContent = 'Checking ' + input.baseUrl + '…';
  let conn = null;
  try {
    conn = (await gql('mutation($i: ConnectionInput!) { createConnection(input: $i) { id name models { id } } }', { i: input })).createConnection;
    let listed;
    try {
      listed = (await gql('mutation($c: ID!) { refreshModels(connectionId: $c) { id name models { id } } }', { c: conn.id })).refreshModels;
    } catch (err) {
      await gql('mutation($c: ID!) { deleteConnection(id: $c) }', { c: conn.id }).catch(() => {});
      res.textContent = 'Check failed, nothing saved: ' + err.message;
      $('setupforce').hidden = !input.models; // without listed models there is nothing to use
      return;
    }
    if (!listed.models.length) {
      await gql('mutation($c: ID!) { deleteConnection(id: $c) }', { c: conn.id }).catch(() => {});
      res.textContent = 'The provider answered but listed no models: name one under Models.';
      return;
    }
    res.textContent = '';
    await afterSetup(listed, 'Connected ' + listed.name + ': ' + listed.models.length + ' model(s).');
  } catch (err) { res.textContent = err.message; }
  finally { $('setupsave').disabled = false; }
});
$('setupforce').onclick = async () => {
  try {
    const conn = (await gql('mutation($i: ConnectionInput!) { createConnection(input: $i) { id name models { id } } }', { i: setupInput() })).createConnection;
    $('setupresult').textContent = '';
    await afterSetup(conn, 'Saved ' + conn.name + ' without checking it.');
  } catch (err) { $('setupresult').textContent = err.message; }
};

