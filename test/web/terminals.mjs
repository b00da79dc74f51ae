// A session's background terminals in Foya web (see TestWebTerminals): the
// running terminal is listed with its command, status and output so far;
// output written later arrives live (terminal_output); Kill ends it and the
// status says so.
import { chromium } from 'playwright-core';
import { until } from './poll.mjs';
import { axeClean } from './axe.mjs';

const base = process.env.BASE;
const step = (s) => console.log('step: ' + s);
const gql = async (query, variables) => {
  const r = await fetch(base + '/graphql', { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: 'Bearer ' + process.env.TOKEN }, body: JSON.stringify({ query, variables }) });
  const b = await r.json();
  if (b.errors) throw new Error(JSON.stringify(b.errors));
  return b.data;
};
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
try {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await ctx.addInitScript((t) => { if (location.protocol.startsWith('http') && !sessionStorage.getItem('foya-token')) sessionStorage.setItem('foya-token', t); }, process.env.TOKEN);
  const page = await ctx.newPage();
  page.setDefaultTimeout(30000);
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));

  step('the running terminal is listed with its output so far');
  await page.goto(base + '/#' + process.env.SESSION);
  const term = page.locator('#terminals .term[data-id="' + process.env.TERMINAL + '"]');
  await term.waitFor();
  await until('the command', () => term.locator('.termcmd').textContent(), (v) => v.includes('while read'));
  await until('the status', () => term.locator('.termstatus').textContent(), (v) => v.startsWith('running'));
  await until('the output so far', () => term.locator('.termout').textContent(), (v) => v.includes('ready'));

  await axeClean(page, 'terminals panel');

  step('new output arrives live');
  await gql('mutation($s: ID!, $t: ID!) { writeTerminal(sessionId: $s, terminalId: $t, input: "live\\n") }', { s: process.env.SESSION, t: process.env.TERMINAL });
  await until('the live output', () => term.locator('.termout').textContent(), (v) => v.includes('got live'));

  step('Kill ends it');
  await term.getByRole('button', { name: /^Kill terminal/ }).click();
  await until('the killed status', () => term.locator('.termstatus').textContent(), (v) => v.startsWith('killed'));
  if (await term.getByRole('button', { name: /^Kill terminal/ }).isVisible()) throw new Error('Kill still offered for a killed terminal');
  await axeClean(page, 'terminals panel, killed');
  if (errors.length) throw new Error('page errors: ' + errors.join('; '));
  console.log('ok: a terminal followed live and killed in the web client');
} finally {
  await browser.close();
}
