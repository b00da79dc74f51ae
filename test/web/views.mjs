// Every view of Foya web in both themes and at three widths (see
// TestWebClientViews): the first-run setup, a conversation (Markdown table,
// task list, code with a copy button, a tool-call card, actions on hover),
// an approval card, the connections, the shortcuts list and the sessions
// drawer. Each view must pass axe-core with no serious or critical WCAG
// violation in light and dark; at 390 and 360 px nothing scrolls sideways
// and the composer stays in view. SHOTS=dir saves docs/web.md's screenshots.
import { chromium } from 'playwright-core';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { until, untilEq } from './poll.mjs';

const base = process.env.BASE;
const fakeURL = process.env.FAKE;
const shots = process.env.SHOTS;
const step = (s) => console.log('step: ' + s);
const must = (ok, what) => { if (!ok) throw new Error(what); };
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
const checked = [];
try {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await ctx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  await ctx.addInitScript((t) => { if (!sessionStorage.getItem('foya-token')) sessionStorage.setItem('foya-token', t); }, process.env.TOKEN);
  const page = await ctx.newPage();
  page.setDefaultTimeout(20000);
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (/Content.Security.Policy/i.test(m.text())) errors.push('CSP: ' + m.text()); });
  // blob: URLs of the kernel's origin are attachments' bytes, already fetched from it.
  page.on('request', (r) => { if (!r.url().startsWith(base) && !r.url().startsWith('blob:' + base)) errors.push('request outside the kernel: ' + r.url()); });
  const gql = (query, variables) => page.evaluate(([q, v]) => window.foyaWeb.gql(q, v), [query, variables || {}]);

  // axe: no serious or critical violation of the WCAG 2.x A/AA rules.
  const axe = async (view) => {
    if (!(await page.evaluate(() => !!window.axe))) await page.evaluate(axeSource);
    const res = await page.evaluate(() => window.axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'] }, resultTypes: ['violations'] }));
    const bad = res.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    must(!bad.length, 'axe, ' + view + ': ' + bad.map((v) => v.id + ' (' + v.impact + '): ' + v.nodes.slice(0, 3).map((n) => n.target.join(' ') + ' ' + (n.failureSummary || '').split('\n').slice(1, 2).join('')).join(' | ')).join('\n'));
    checked.push(view);
  };
  const theme = async (scheme) => { await page.emulateMedia({ colorScheme: scheme }); };
  // noSideScroll: the page is as wide as the window and the composer is in view.
  // (polled: the layout settles a frame after a resize)
  const fits = (what) => until(what + ': no sideways scroll and the composer in view (at least 150 px wide)', () => page.evaluate(() => {
    const r = document.getElementById('input').getBoundingClientRect();
    return { sw: document.documentElement.scrollWidth, bw: document.body.scrollWidth, w: window.innerWidth, h: window.innerHeight, top: r.top, bottom: r.bottom, width: r.width };
  }), (m) => m.sw <= m.w && m.bw <= m.w && m.top >= 0 && m.bottom <= m.h && m.width >= 150, 5000);
  // A screenshot waits for the transitions under way (the drawer sliding
  // away after a resize) to end.
  const shot = async (name) => {
    if (!shots) return;
    await page.waitForFunction(() => document.getAnimations().every((a) => a.playState !== 'running' || a.effect.getComputedTiming().endTime === Infinity));
    await page.screenshot({ path: shots + '/' + name });
  };

  await page.goto(base + '/#token=' + encodeURIComponent(process.env.TOKEN));
  const setup = page.getByRole('region', { name: 'Connect a model to start' });
  await setup.waitFor();

  step('the setup view in both themes');
  for (const scheme of ['light', 'dark']) {
    await theme(scheme);
    await axe('setup, ' + scheme);
    for (const w of [390, 360]) {
      await page.setViewportSize({ width: w, height: 780 });
      await fits('setup at ' + w + ' px, ' + scheme);
    }
    await page.setViewportSize({ width: 1280, height: 800 });
  }

  step('a connection and two sessions through the API');
  const conn = (await gql('mutation($u: String) { createConnection(input: {name: "fake", baseUrl: $u, apiKey: "sk-x", models: [{id: "gpt-t"}]}) { id } }', { u: fakeURL })).createConnection.id;
  await setup.waitFor({ state: 'hidden' });
  const mk = async (title, mode) => (await gql('mutation($c: ID, $t: String, $m: ApprovalMode) { createSession(input: {connectionId: $c, model: "gpt-t", title: $t, approvalMode: $m}) { id } }', { c: conn, t: title, m: mode })).createSession.id;
  // replied: the session is idle and its last message is the reply wanted
  // (polled from node: each check is a query).
  const replied = (s, text) => until('the reply "' + text + '" in ' + s, async () => {
    const d = (await gql('query($s: ID!) { session(id: $s) { phase messages(last: 1) { role text } } }', { s })).session;
    return d.phase === 'IDLE' && d.messages.length && d.messages[0].role === 'ASSISTANT' && d.messages[0].text.includes(text);
  });
  const ask = await mk('Approval card', 'ASK');
  const views = await mk('Release notes', 'BYPASS');
  // With an image attached (uploaded by the Go test): its thumbnail and Save button go through axe too.
  await gql('mutation($s: ID!, $a: [ID!]) { sendMessage(sessionId: $s, input: {text: "Plan the release as a table, a checklist and a shell snippet.", attachmentIds: $a}) { turnStarted } }', { s: views, a: process.env.ATT ? [process.env.ATT] : [] });
  await replied(views, 'git push');
  await gql('mutation($s: ID!) { sendMessage(sessionId: $s, input: {text: "Write NOTES.md."}) { turnStarted } }', { s: views });
  await replied(views, 'Wrote');
  await gql('mutation($s: ID!) { sendMessage(sessionId: $s, input: {text: "Write a.txt."}) { turnStarted } }', { s: ask });
  await until('an approval request', async () => (await gql('query($s: ID!) { events(sessionId: $s, limit: 500) { type } }', { s: ask })).events.some((e) => e.type === 'approval_requested'));

  step('the conversation: table, task list, code with a copy button, tool card, actions on hover');
  await page.locator('#sessions button.s').filter({ hasText: 'Release notes' }).click();
  const log = page.getByRole('log');
  const reply = log.locator('.msg.assistant[data-seq]').filter({ hasText: 'Release plan' });
  await reply.waitFor();
  must(await reply.locator('table th').count() === 3 && await reply.locator('table tbody tr').count() === 2, 'the Markdown table is not a <table>');
  must(await reply.locator('li.task [aria-label=Done]').count() === 1 && await reply.locator('li.task [aria-label="To do"]').count() === 1, 'task list');
  must(await reply.locator('a[href="https://example.com/changelog"][rel~=noopener]').count() === 1, 'safe link');
  must(await reply.locator('a[href^="javascript"]').count() === 0, 'a javascript: link was rendered');
  const actions = reply.locator('.actions');
  await page.mouse.move(0, 0);
  await untilEq('the opacity of message actions without hover or focus', () => actions.evaluate((e) => getComputedStyle(e).opacity), '0');
  await reply.hover();
  await page.waitForFunction(() => [...document.querySelectorAll('.msg.assistant .actions')].some((e) => getComputedStyle(e).opacity === '1'));
  await reply.getByRole('button', { name: 'Copy code' }).click();
  await reply.getByRole('button', { name: 'Copy code' }).filter({ hasText: 'Copied' }).waitFor();
  await untilEq('the clipboard', () => page.evaluate(() => navigator.clipboard.readText()), 'git tag v1.2.0\ngit push --tags');
  const card = log.locator('details.toolcall');
  await untilEq('tool cards', () => card.count(), 1);
  must((await card.locator('summary').textContent()).includes('path: NOTES.md'), 'tool card summary: ' + await card.locator('summary').textContent());
  await untilEq('the tool card\'s status', () => card.getAttribute('data-status'), 'ok');
  await until('a duration on the tool card', () => card.locator('summary .tdur').textContent(), (t) => /^(\d+ ms|\d+\.\d s|\d+ min \d+ s)$/.test(t));
  await card.locator('summary').click();
  await card.locator('.diff .add').filter({ hasText: '+# v1.2.0' }).waitFor();
  await card.locator('pre.out').waitFor();
  must(await log.locator('.msg.tool:visible').count() === 0, 'a tool result is shown outside its card');

  step('the conversation, approval, connections and shortcuts in both themes');
  for (const scheme of ['light', 'dark']) {
    await theme(scheme);
    await untilEq(scheme + ' background', () => page.evaluate(() => getComputedStyle(document.body).backgroundColor), scheme === 'dark' ? 'rgb(22, 23, 26)' : 'rgb(250, 250, 250)');
    await page.locator('#sessions button.s').filter({ hasText: 'Release notes' }).click();
    await reply.waitFor();
    if (process.env.ATT) await until('the attached image shown', () => log.locator('img.attmedia[alt="board.png"]').evaluate((i) => i.complete && i.naturalWidth > 0));
    await axe('conversation, ' + scheme);
    step('the edit-and-resend editor, ' + scheme);
    const asked = log.locator('.msg.user').filter({ hasText: 'Plan the release' });
    await asked.hover();
    await asked.getByRole('button', { name: 'Edit this message' }).click();
    const editor = asked.getByRole('textbox', { name: 'Edit message' });
    await untilEq('the text in the editor', () => editor.inputValue(), 'Plan the release as a table, a checklist and a shell snippet.');
    await axe('editor, ' + scheme);
    await editor.press('Escape');
    await editor.waitFor({ state: 'detached' });
    await asked.locator('.text').filter({ hasText: 'Plan the release' }).waitFor();
    for (const w of [1280, 768, 390]) {
      await page.setViewportSize({ width: w, height: w === 390 ? 844 : 800 });
      await log.evaluate((l) => { l.scrollTop = 0; });
      await shot('web-' + w + '-' + scheme + '.png');
      if (w === 390) await fits('conversation at 390 px, ' + scheme);
    }
    await page.setViewportSize({ width: 360, height: 740 });
    await fits('conversation at 360 px, ' + scheme);
    step('the sessions drawer at 360 px, ' + scheme);
    await page.getByRole('button', { name: 'Sessions menu' }).click();
    await page.locator('#sessions button.s').filter({ hasText: 'Approval card' }).waitFor();
    await axe('drawer, ' + scheme);
    await page.keyboard.press('Escape');
    await page.locator('#sessions button.s').filter({ hasText: 'Approval card' }).waitFor({ state: 'hidden' });
    await page.setViewportSize({ width: 1280, height: 800 });

    await page.locator('#sessions button.s').filter({ hasText: 'Approval card' }).click();
    await page.getByRole('button', { name: 'Approve', exact: true }).waitFor();
    await axe('approval, ' + scheme);
    await page.getByText('Connections', { exact: true }).click();
    await page.getByRole('button', { name: 'Refresh models of fake' }).waitFor();
    await axe('connections, ' + scheme);
    await page.getByText('Connections', { exact: true }).click();
    await page.locator('#log').focus();
    await page.keyboard.press('?');
    await page.getByRole('dialog', { name: 'Keyboard shortcuts' }).waitFor();
    await axe('shortcuts, ' + scheme);
    await page.keyboard.press('Escape');
    await page.getByRole('dialog', { name: 'Keyboard shortcuts' }).waitFor({ state: 'hidden' });
  }

  step('the theme toggle overrides the system theme; focus is visible');
  await theme('dark');
  await page.getByRole('button', { name: /^Theme: system/ }).click();
  await page.getByRole('button', { name: 'Theme: light' }).waitFor();
  await untilEq('the background under the light theme', () => page.evaluate(() => getComputedStyle(document.body).backgroundColor), 'rgb(250, 250, 250)');
  await page.getByRole('button', { name: 'Theme: light' }).click();
  await page.getByRole('button', { name: 'Theme: dark' }).click();
  await page.getByRole('button', { name: /^Theme: system/ }).waitFor();
  await page.getByRole('textbox', { name: 'Message' }).focus();
  await page.keyboard.press('Tab');
  await until('a visible focus outline (solid, 2 or 3 px)', () => page.evaluate(() => { const s = getComputedStyle(document.activeElement.closest('label') || document.activeElement); return s.outlineStyle + ' ' + s.outlineWidth; }), (o) => /solid [23]px/.test(o));

  if (errors.length) throw new Error('page errors: ' + errors.join('\n'));
  console.log('ok: axe clean on ' + checked.length + ' views (' + checked.join('; ') + ')');
} finally {
  await browser.close();
}
