// Foya web: the Connections and MCP servers panels. Adding a connection,
// editing one (its key write-only, its prices), and MCP servers' status with
// their sign-in links.
import { gql, showError } from './api.js';
import { $, el } from './dom.js';
import { loadSidebar } from './sidebar.js';

// ---- MCP servers: status, and a sign-in link for one that needs OAuth
// (NEEDS_AUTH). The link is the server's authUrl, opened in a new tab;
// the authorization server sends that tab back to the kernel's
// /mcp/oauth/callback, and the list follows the server's status through
// kernelEvents (catalog_updated, mcp_needs_auth).
export async function loadMcp() {
  const d = await gql('{ mcpServers { id name status error authUrl } }');
  const ul = $('mcplist'); ul.innerHTML = '';
  $('mcpnone').hidden = d.mcpServers.length > 0;
  for (const m of d.mcpServers) {
    const li = el('li'); li.dataset.id = m.id; li.dataset.status = m.status;
    li.append(m.name + ': ');
    const st = el('span', 'mcpstatus'); st.textContent = m.status === 'NEEDS_AUTH' ? 'needs a sign-in' : m.status.toLowerCase().replace('_', ' ');
    li.append(st);
    if (m.error) { const er = el('div', 'mcperror'); er.textContent = m.error; li.append(er); }
    if (m.status === 'NEEDS_AUTH') {
      if (m.authUrl) {
        const a = el('a', 'signin'); a.href = m.authUrl; a.target = '_blank'; a.rel = 'noopener noreferrer';
        a.textContent = 'Sign in'; a.setAttribute('aria-label', 'Sign in to ' + m.name);
        li.append(' ', a);
      } else {
        const b = el('button'); b.type = 'button'; b.textContent = 'Get a sign-in link'; b.setAttribute('aria-label', 'Get a sign-in link for ' + m.name);
        b.onclick = async () => { b.disabled = true; try { await gql('mutation($id: ID!) { loginMcpServer(id: $id) }', { id: m.id }); await loadMcp(); } catch (e) { showError(e); b.disabled = false; } };
        li.append(' ', b);
      }
    }
    if (m.status === 'FAILED' || m.status === 'READY') {
      const b = el('button'); b.type = 'button'; b.textContent = 'Restart'; b.setAttribute('aria-label', 'Restart MCP server ' + m.name);
      b.onclick = async () => { b.disabled = true; try { await gql('mutation($id: ID!) { restartMcpServer(id: $id) { id } }', { id: m.id }); await loadMcp(); } catch (e) { showError(e); b.disabled = false; } };
      li.append(' ', b);
    }
    ul.appendChild(li);
  }
}

// ---- connection editor: name, base URL, the key (write-only: replaced or
// removed, never read) and per-model prices. Capabilities are replaced
// whole by the API, so the other declared capabilities are sent back as read.
function priceInput(label, v) {
  const i = el('input'); i.type = 'number'; i.min = '0'; i.step = 'any'; i.setAttribute('aria-label', label);
  if (v != null) i.value = String(v);
  return i;
}
export function editConnection(c) {
  const dlg = $('conndlg'); const f = $('connedit');
  f.reset();
  f.elements.name.value = c.name; f.elements.baseUrl.value = c.baseUrl;
  f.elements.apiKey.placeholder = c.apiKeyConfigured ? '(a key is stored; leave empty to keep it)' : '(no key stored)';
  $('conntitle').textContent = 'Edit connection ' + c.name;
  const tb = $('connprices').tBodies[0]; tb.innerHTML = '';
  for (const m of c.models) {
    const p = m.capabilities.prices || {};
    const tr = el('tr'); tr.dataset.model = m.id;
    const name = el('td'); name.textContent = m.id; tr.appendChild(name);
    for (const [k, label] of [['inputPerMillion', 'Input price of '], ['cachedInputPerMillion', 'Cached input price of '], ['outputPerMillion', 'Output price of ']]) {
      const td = el('td'); const i = priceInput(label + m.id, p[k]); i.name = k; td.appendChild(i); tr.appendChild(td);
    }
    tb.appendChild(tr);
  }
  dlg.returnValue = '';
  dlg.onclose = async () => {
    if (dlg.returnValue !== 'save') return;
    const input = { name: f.elements.name.value.trim(), baseUrl: f.elements.baseUrl.value.trim() };
    if (f.elements.clearKey.checked) input.apiKey = ''; else if (f.elements.apiKey.value) input.apiKey = f.elements.apiKey.value;
    f.elements.apiKey.value = '';
    try {
      input.models = c.models.map((m) => {
        const caps = Object.assign({}, m.capabilities); delete caps.prices;
        const row = tb.querySelector('tr[data-model="' + CSS.escape(m.id) + '"]');
        const num = (k) => { const v = row.querySelector('input[name=' + k + ']').value; return v === '' ? null : Number(v); };
        const inp = num('inputPerMillion'), cached = num('cachedInputPerMillion'), out = num('outputPerMillion');
        if (inp != null || out != null || cached != null) {
          if (inp == null || out == null) throw new Error('Prices of ' + m.id + ': input and output are both needed (or neither).');
          const old = m.capabilities.prices || {};
          caps.prices = { inputPerMillion: inp, outputPerMillion: out, cachedInputPerMillion: cached, cacheWritePerMillion: old.cacheWritePerMillion == null ? null : old.cacheWritePerMillion };
        }
        return { id: m.id, capabilities: caps };
      });
      await gql('mutation($c: ID!, $i: ConnectionInput!) { updateConnection(id: $c, input: $i) { id } }', { c: c.id, i: input });
      await loadSidebar(); $('status').textContent = 'Connection ' + input.name + ' saved.';
    } catch (e) { showError(e); }
  };
  dlg.showModal();
}
$('connform').addEventListener('submit', async (e) => {
  e.preventDefault();
  const f = new FormData(e.target);
  const models = String(f.get('models') || '').split(',').map((m) => m.trim()).filter(Boolean).map((id) => ({ id }));
  const input = { name: f.get('name'), baseUrl: f.get('baseUrl'), type: f.get('type') || 'LANGUAGE' };
  if (input.type === 'VIDEO') input.videoProtocol = 'openai_video'; // the only video protocol today
  if (f.get('apiKey')) input.apiKey = f.get('apiKey');
  const inP = f.get('inPrice'), outP = f.get('outPrice');
  if ((inP === '') !== (outP === '')) { showError(new Error('Prices: give both input and output (or neither).')); return; }
  if (inP !== '') for (const m of models) m.capabilities = { prices: { inputPerMillion: Number(inP), outputPerMillion: Number(outP) } };
  if (models.length) input.models = models;
  try { await gql('mutation($i: ConnectionInput!) { createConnection(input: $i) { id } }', { i: input }); e.target.reset(); await loadSidebar(); }
  catch (err) { showError(err); }
});

