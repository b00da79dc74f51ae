// Drives the first-run experience of Foya web against a kernel with no
// connection (see TestWebClientFirstRun): the setup panel and its presets, a
// check that fails and saves nothing, one that passes; the default model
// named in the composer's model picker; no session without a usable model;
// approval modes exactly the schema's ApprovalMode; "New session" (never a raw
// id) until the kernel titles it; errors that can be dismissed and that the
// next successful change clears.
import { chromium } from 'playwright-core';
import { until, untilEq } from './poll.mjs';

const base = process.env.BASE;
const fakeURL = process.env.FAKE;
const step = (s) => console.log('step: ' + s);
const must = (ok, what) => { if (!ok) throw new Error(what); };
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
try {
  const ctx = await browser.newContext({ viewport: { width: 1200, height: 760 } });
  const page = await ctx.newPage();
  page.setDefaultTimeout(20000);
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (/Content.Security.Policy/i.test(m.text())) errors.push('CSP: ' + m.text()); });
  // blob: URLs of the kernel's origin are attachments' bytes, already fetched from it.
  page.on('request', (r) => { if (!r.url().startsWith(base) && !r.url().startsWith('blob:' + base)) errors.push('request outside the kernel: ' + r.url()); });
  const gql = (query, variables) => page.evaluate(([q, v]) => window.foyaWeb.gql(q, v), [query, variables || {}]);
  // sessionIs polls the session from node until field has the value wanted.
  const sessionIs = (s, field, want) => untilEq('session ' + field, async () => (await gql('query($s: ID!) { session(id: $s) { ' + field + ' } }', { s })).session[field], want);
  const text = (sel) => () => page.locator(sel).textContent();
  await page.goto(base + '/#token=' + encodeURIComponent(process.env.TOKEN));
  const setup = page.getByRole('region', { name: 'Connect a model to start' });

  step('first run: the setup panel, and no session without a model');
  await setup.waitFor();
  const newBtn = page.getByRole('button', { name: 'New session', exact: true });
  await untilEq('New session data-usable', () => newBtn.getAttribute('data-usable'), 'false');
  await page.locator('#newhelp').filter({ hasText: 'Connect a model first' }).waitFor();
  await newBtn.click();
  await page.waitForFunction(() => document.activeElement && document.activeElement.id === 'preset'); // it leads to the setup
  must((await gql('{ sessions { id } }')).sessions.length === 0, 'a session was created without a usable model');
  await until('the model picker disabled with no model', () => page.getByLabel('Model', { exact: true }).isDisabled());

  step('approval modes are exactly the schema\'s ApprovalMode, each explained');
  const enumValues = (await gql('{ __type(name: "ApprovalMode") { enumValues { name } } }')).__type.enumValues.map((v) => v.name);
  const mode = page.getByLabel('Approval mode', { exact: true });
  const options = await mode.locator('option').evaluateAll((os) => os.map((o) => [o.value, o.title]));
  must(JSON.stringify(options.map((o) => o[0]).sort()) === JSON.stringify(enumValues.slice().sort()), 'approval modes ' + options.map((o) => o[0]) + ' vs schema ' + enumValues);
  must(options.every((o) => o[1].length > 10), 'an approval mode lacks its explanation');
  must(await mode.inputValue() === 'ASK', 'the default approval mode is not Ask');
  for (const v of enumValues) {
    await mode.selectOption(v);
    await untilEq('help of ' + v, text('#modehelp'), options.find((o) => o[0] === v)[1]);
  }
  await mode.selectOption('ASK');

  step('presets fill the form');
  const preset = setup.getByLabel('Provider');
  await preset.selectOption({ label: 'Ollama (this machine)' });
  await untilEq('Ollama preset endpoint', () => setup.getByLabel('Endpoint').inputValue(), 'http://127.0.0.1:11434/v1');
  await preset.selectOption({ label: 'Anthropic' });
  await untilEq('Anthropic preset endpoint', () => setup.getByLabel('Endpoint').inputValue(), 'https://api.anthropic.com');
  await preset.selectOption({ label: 'vLLM (this machine)' });
  await untilEq('vLLM preset endpoint', () => setup.getByLabel('Endpoint').inputValue(), 'http://127.0.0.1:8000/v1');
  await preset.selectOption({ label: 'OpenAI (Responses API)' });
  await untilEq('Responses preset endpoint', () => setup.getByLabel('Endpoint').inputValue(), 'https://api.openai.com/v1');
  await preset.selectOption({ label: 'Other OpenAI-compatible' });
  await setup.getByLabel('Connection name for setup').fill('local');
  await setup.getByLabel('Endpoint').fill(fakeURL);
  await setup.getByLabel('Key').fill('sk-bad');

  step('a failed check saves nothing');
  await setup.getByRole('button', { name: 'Check and save' }).click();
  await setup.locator('#setupresult').filter({ hasText: 'Check failed, nothing saved' }).waitFor();
  await untilEq('connections after a failed check', async () => (await gql('{ connections { id } }')).connections.length, 0);
  must(!(await page.content()).includes('sk-bad'), 'the key is shown on the page');

  step('a passing check saves the connection and makes its first model the default');
  await setup.getByLabel('Key').fill('sk-good');
  await setup.getByRole('button', { name: 'Check and save' }).click();
  await setup.waitFor({ state: 'hidden' });
  // The panel closes as the default model is being set: poll the kernel.
  const cs = await until('a default model', () => gql('{ connections { name models { id } } defaultModels { language { model } } }'), (d) => !!d.defaultModels.language);
  must(cs.connections.length === 1 && cs.connections[0].models.map((m) => m.id).join(',') === 'gpt-t,gpt-u', 'connections: ' + JSON.stringify(cs.connections));
  must(cs.defaultModels.language && cs.defaultModels.language.model === 'gpt-t', 'default: ' + JSON.stringify(cs.defaultModels));
  const picker = page.getByLabel('Model', { exact: true });
  await picker.locator('option', { hasText: 'Default (local/gpt-t)' }).waitFor({ state: 'attached' });
  await untilEq('the picker names the default', () => picker.evaluate((s) => s.options[s.selectedIndex].textContent), 'Default (local/gpt-t)');
  await until('the Default model select set', async () => await page.getByLabel('Default model', { exact: true }).inputValue() !== '');
  await untilEq('New session data-usable', () => newBtn.getAttribute('data-usable'), 'true');
  await page.locator('#newhelp').filter({ hasText: /^$/ }).waitFor({ state: 'attached' });

  step('an untitled session is "New session", never its id');
  await newBtn.click();
  await page.waitForFunction(() => !!window.foyaWeb.state.session);
  const sid = await page.evaluate(() => window.foyaWeb.state.session);
  await page.locator('#sessions button[aria-current=true]').filter({ hasText: 'New session' }).waitFor();
  await untilEq('header', text('#title'), 'New session');
  must(!(await page.evaluate(() => document.body.innerText + document.title)).includes(sid), 'the session id is shown');

  step('the composer\'s model picker shows and changes the session\'s model');
  const conn = (await gql('{ connections { id } }')).connections[0].id;
  await untilEq('picker value', () => picker.inputValue(), conn + '|gpt-t');
  await picker.selectOption({ label: 'local/gpt-u' });
  await sessionIs(sid, 'model', 'gpt-u');
  await picker.selectOption({ label: 'local/gpt-t' });
  await sessionIs(sid, 'model', 'gpt-t');

  step('the composer\'s approval mode shows and changes the session\'s');
  await untilEq('the new session\'s approval mode', () => mode.inputValue(), 'ASK');
  await mode.selectOption('EXPLORE');
  await sessionIs(sid, 'approvalMode', 'EXPLORE');
  await mode.selectOption('ASK');
  await sessionIs(sid, 'approvalMode', 'ASK');

  step('errors: shown in an alert, dismissable, cleared by the next success');
  const alert = page.getByRole('alert');
  page.once('dialog', (d) => d.accept('x'.repeat(201))); // beyond the 200-character limit
  await page.getByRole('button', { name: 'Rename', exact: true }).click();
  await alert.waitFor();
  await until('an error text', async () => (await alert.textContent()).length > 5);
  await page.getByRole('button', { name: 'Dismiss error' }).click();
  await alert.waitFor({ state: 'hidden' });
  page.once('dialog', (d) => d.accept('y'.repeat(201)));
  await page.getByRole('button', { name: 'Rename', exact: true }).click();
  await alert.waitFor();
  await page.getByRole('button', { name: 'Pin' }).click();
  await page.locator('#pin[aria-pressed=true]').waitFor();
  await alert.waitFor({ state: 'hidden' });

  step('the kernel titles the session after its first turn');
  const box = page.getByRole('textbox', { name: 'Message' });
  await box.fill('hello');
  await box.press('Enter');
  await page.getByRole('log').locator('.msg.assistant[data-seq]').filter({ hasText: 'Hi there' }).waitFor();
  await page.locator('#sessions button[aria-current=true]').filter({ hasText: 'Greetings' }).waitFor();
  await page.locator('#title').filter({ hasText: 'Greetings' }).waitFor();

  if (errors.length) throw new Error('page errors: ' + errors.join('\n'));
  console.log('ok: first run, session ' + sid);
} finally {
  await browser.close();
}
