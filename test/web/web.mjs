// Drives Foya web in headless Chromium against a running kernel (BASE) whose
// fake OpenAI-compatible server has the turns of this script queued in order.
import { chromium } from 'playwright-core';
import { until, untilEq } from './poll.mjs';

const base = process.env.BASE;
const project = process.env.PROJECT;
const step = (s) => console.log('step: ' + s);
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
try {
  const ctx = await browser.newContext();
  // The kernel requires its token: later tabs get it in sessionStorage, as
  // a user pastes the link; the first one opens the web link (#token=…).
  await ctx.addInitScript((t) => { if (!sessionStorage.getItem('foya-token')) sessionStorage.setItem('foya-token', t); }, process.env.TOKEN);
  const page = await ctx.newPage();
  page.setDefaultTimeout(20000);
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (/Content.Security.Policy/i.test(m.text())) errors.push('CSP: ' + m.text()); });
  // blob: URLs of the kernel's origin are attachments' bytes, already fetched from it.
  page.on('request', (r) => { if (!r.url().startsWith(base) && !r.url().startsWith('blob:' + base)) errors.push('request outside the kernel: ' + r.url()); });
  await page.goto(base + '/#token=' + encodeURIComponent(process.env.TOKEN));
  await page.getByRole('link', { name: 'GraphQL playground' }).waitFor();

  step('new session');
  // A title of our own: the kernel would otherwise ask the model for one.
  await page.getByLabel('Title', { exact: true }).fill('web check');
  await page.getByLabel('Project', { exact: true }).selectOption({ label: project });
  await page.getByLabel('Model', { exact: true }).selectOption({ label: 'fake/gpt-t' });
  await page.getByLabel('Approval mode', { exact: true }).selectOption('ASK');
  await page.getByRole('button', { name: 'New session', exact: true }).click();
  await page.waitForFunction(() => !!(window.foyaWeb.state.session));
  const sid = await page.evaluate(() => window.foyaWeb.state.session);
  await page.locator('#sessions button[aria-current=true]').filter({ hasText: 'web check' }).waitFor();

  const box = page.getByRole('textbox', { name: 'Message' });
  const log = page.getByRole('log');

  step('Shift+Enter is a newline, not a send');
  await box.fill('line one');
  await box.press('Shift+Enter');
  await box.type('line two');
  if ((await box.inputValue()) !== 'line one\nline two') throw new Error('Shift+Enter: ' + JSON.stringify(await box.inputValue()));

  step('streamed text');
  await box.fill('hi **there** <b>x</b>');
  await box.press('Enter');
  // Deltas render in a live bubble before message_end replaces it.
  await log.locator('.msg.streaming').filter({ hasText: 'Hello' }).waitFor();
  await fetch(process.env.RELEASE); // the provider held the rest of the reply until now
  await log.locator('.msg.assistant[data-seq]').filter({ hasText: 'Hello from the web' }).waitFor();
  if (await log.locator('.msg.user b').count() !== 0) throw new Error('user HTML was not escaped');
  if (await log.locator('.msg.user strong').count() !== 1) throw new Error('Markdown bold not rendered');
  await page.waitForFunction(() => window.foyaWeb.state.phase === 'IDLE');

  step('second tab on the same session');
  const page2 = await ctx.newPage();
  page2.setDefaultTimeout(20000);
  await page2.goto(base + '/#' + sid);
  await page2.getByRole('log').locator('.msg.assistant').filter({ hasText: 'Hello from the web' }).waitFor();
  // Back to the first tab, as a user who opened the second one returns: in
  // headless Chromium the tab left behind paints about once a second, so each
  // action on it would wait seconds for its element to be stable.
  await page.bringToFront();

  step('approve a write');
  await box.fill('write hello.txt');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.getByRole('button', { name: 'Approve', exact: true }).waitFor();
  // The call's card says it is running while it waits.
  const card = (st, text) => log.locator('details.toolcall[data-status=' + st + ']').filter({ hasText: text });
  await card('running', 'path: hello.txt').locator('.tstate').filter({ hasText: /^running$/ }).waitFor();
  if (process.env.SCREENSHOT) await page.screenshot({ path: process.env.SCREENSHOT.replace(/\.png$/, '-approval.png') });
  // The approval waits a while: the card's duration leaves that wait out.
  await page.waitForTimeout(1200);
  await page.getByRole('button', { name: 'Approve', exact: true }).click();
  await log.locator('.msg.assistant[data-seq]').filter({ hasText: 'Wrote it.' }).waitFor();
  step('the tool card: ok, a duration, the diff and the output');
  const ok = card('ok', 'path: hello.txt');
  await ok.locator('.tstate').filter({ hasText: /^ok$/ }).waitFor();
  await until('a duration on the write card', () => ok.locator('.tdur').textContent(), (t) => /^(\d+ ms|\d+\.\d s|\d+ min \d+ s)$/.test(t));
  // It waited at least the 1.2 s before the click for its approval; the
  // duration shown runs from the decision, and its title says so.
  const waited = async (c) => c.locator('.tdur').evaluate((d) => ({ wait: Number(d.dataset.waitMs || 0), title: d.title }));
  await until('the approval wait left out of the write card\'s duration', () => waited(ok), (w) => w.wait >= 1000 && /not counted/.test(w.title));
  await ok.locator('summary').click();
  await ok.locator('.diff .add').filter({ hasText: '+hi from the browser' }).waitFor();
  const addColor = await ok.locator('.diff .add').first().evaluate((e) => getComputedStyle(e).color);
  const plainColor = await ok.locator('.diff').evaluate((e) => getComputedStyle(e).color);
  if (addColor === plainColor) throw new Error('diff additions are not coloured: ' + addColor);
  await ok.locator('pre.out').waitFor();
  await page.waitForFunction(() => window.foyaWeb.state.phase === 'IDLE');

  step('deny a write');
  await box.fill('write nope.txt');
  await box.press('Enter');
  await page.getByRole('button', { name: 'Deny' }).click();
  await log.locator('.msg.assistant[data-seq]').filter({ hasText: 'OK, not written.' }).waitFor();
  await card('denied', 'path: nope.txt').locator('.tstate').filter({ hasText: /^denied$/ }).waitFor();
  await page.waitForFunction(() => window.foyaWeb.state.phase === 'IDLE');
  await page2.getByRole('log').locator('.msg.assistant').filter({ hasText: 'OK, not written.' }).waitFor();
  await page2.getByRole('log').locator('details.toolcall[data-status=denied]').filter({ hasText: 'path: nope.txt' }).waitFor();

  step('a tool that fails: its card says error');
  await box.fill('read missing.txt');
  await box.press('Enter');
  await log.locator('.msg.assistant[data-seq]').filter({ hasText: 'No such file.' }).waitFor();
  await card('error', 'path: missing.txt').locator('.tstate').filter({ hasText: /^error$/ }).waitFor();
  await page.waitForFunction(() => window.foyaWeb.state.phase === 'IDLE');

  step('stop a slow turn');
  await box.fill('tell me a long story');
  await box.press('Enter');
  await log.locator('.msg.streaming').filter({ hasText: 'Once upon' }).waitFor();
  await page.getByRole('button', { name: 'Stop' }).click();
  await log.locator('.msg.assistant[data-seq]').filter({ hasText: 'Once upon' }).filter({ hasText: 'Interrupted' }).waitFor();
  await page.waitForFunction(() => window.foyaWeb.state.phase === 'IDLE');

  if (process.env.SCREENSHOT) await page.screenshot({ path: process.env.SCREENSHOT });

  step('reload resumes without duplicates');
  const before = await log.locator('.msg[data-seq]').count();
  await page.reload();
  await page.getByRole('log').locator('.msg.assistant').filter({ hasText: 'Once upon' }).waitFor();
  // (the last messages are painted first, the rest of the page just after)
  const seqs = await until('the ' + before + ' messages back after the reload, once each', () => page.locator('#log .msg[data-seq]').evaluateAll((els) => els.map((e) => e.dataset.seq)),
    (ss) => new Set(ss).size === ss.length && ss.length === before);
  // The fake's models have no prices: tokens spent, no dollar figure (never $0).
  await page.locator('#cost').filter({ hasText: 'Cost: — (unpriced' }).waitFor();
  // After the reload the cards are read from the history, durations from the events.
  await until('a duration on the write card after a reload', () => card('ok', 'path: hello.txt').locator('.tdur').textContent(), (t) => /\d/.test(t));
  await until('the approval wait left out after a reload too', () => waited(card('ok', 'path: hello.txt')), (w) => w.wait >= 1000 && /not counted/.test(w.title));
  await card('denied', 'path: nope.txt').waitFor();
  await card('error', 'path: missing.txt').waitFor();

  step('edit and resend the last user message');
  const asked = log.locator('.msg.user').filter({ hasText: 'tell me a long story' });
  await asked.hover();
  await asked.getByRole('button', { name: 'Edit this message' }).click();
  const editor = asked.getByRole('textbox', { name: 'Edit message' });
  await untilEq('the text in the editor', () => editor.inputValue(), 'tell me a long story');
  await editor.fill('tell me a short story');
  await asked.getByRole('button', { name: 'Send', exact: true }).click();
  // No file changed since that message: no preview to confirm.
  await log.locator('.msg.assistant[data-seq]').filter({ hasText: 'A short story.' }).waitFor();
  await log.locator('.msg.user[data-seq]').filter({ hasText: 'tell me a short story' }).waitFor();
  await untilEq('messages of the edited exchange left in the log', () => log.locator('.msg').filter({ hasText: /long story|Once upon/ }).count(), 0);
  await until('the kernel\'s active history ends with the edited exchange', async () => {
    const ms = (await page.evaluate((s) => window.foyaWeb.gql('query($s: ID!) { session(id: $s) { messages(last: 2) { role text } } }', { s }), sid)).session.messages;
    return ms.length === 2 && ms[0].text === 'tell me a short story' && ms[1].text === 'A short story.';
  });
  await page.waitForFunction(() => window.foyaWeb.state.phase === 'IDLE');
  await page2.getByRole('log').locator('.msg.assistant[data-seq]').filter({ hasText: 'A short story.' }).waitFor();

  step('pin, then fork after the first reply');
  await page.getByRole('button', { name: 'Pin' }).click();
  await page.locator('#pin[aria-pressed=true]').waitFor();
  await log.locator('.msg.assistant').filter({ hasText: 'Hello from the web' }).getByRole('button', { name: 'Fork from here' }).click();
  await page.waitForFunction((old) => window.foyaWeb.state.session && window.foyaWeb.state.session !== old, sid);
  await page.getByRole('log').locator('.msg.assistant[data-seq]').filter({ hasText: 'Hello from the web' }).waitFor();
  if (await page.getByRole('log').getByText('Wrote it.').count() !== 0) throw new Error('the fork holds messages after its point');
  await untilEq('sessions in the sidebar', () => page.locator('#sessions button.s').count(), 2);

  if (errors.length) throw new Error('page errors: ' + errors.join('\n'));
  console.log('ok: session ' + sid + ', ' + seqs.length + ' messages');
} finally {
  await browser.close();
}
