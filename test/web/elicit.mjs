// A question an MCP server asks during a tool call (elicitation), answered
// in Foya web (see TestWebClientElicitation): the card names the server,
// renders the form's field as an input with Submit, Decline and Cancel,
// refuses an empty required field in the page, and submits the typed value.
import { chromium } from 'playwright-core';
import { until } from './poll.mjs';

const base = process.env.BASE;
const step = (s) => console.log('step: ' + s);
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
try {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await ctx.addInitScript((t) => { if (location.protocol.startsWith('http') && !sessionStorage.getItem('foya-token')) sessionStorage.setItem('foya-token', t); }, process.env.TOKEN);
  const page = await ctx.newPage();
  page.setDefaultTimeout(30000);
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));

  step('the server question shows as a form');
  await page.goto(base + '/#' + process.env.SESSION);
  const card = page.locator('.elicitation');
  await card.waitFor();
  const label = await card.getAttribute('aria-label');
  if (label !== 'Question from MCP server files') throw new Error('card label: ' + label);
  await until('the card text', () => card.locator('.text').textContent(), (v) => v.includes('Your name?'));
  for (const b of ['Submit', 'Decline', 'Cancel']) await card.getByRole('button', { name: b }).waitFor();
  const input = card.locator('input[name="name"]');
  await input.waitFor();

  step('an empty required field is refused in the page');
  await card.getByRole('button', { name: 'Submit' }).click();
  if (!(await input.evaluate((i) => i.matches(':invalid')))) throw new Error('empty required field accepted');
  if (!(await card.getByRole('button', { name: 'Submit' }).isEnabled())) throw new Error('Submit disabled after a refused submit');

  step('the typed value is submitted');
  await input.fill('Ada');
  await card.getByRole('button', { name: 'Submit' }).click();
  await until('the card to be answered', () => card.evaluate((c) => c.classList.contains('resolved')));
  await until('the reply after the answer', () => page.locator('#log').textContent(), (v) => v.includes('Nice to meet you'));
  if (errors.length) throw new Error('page errors: ' + errors.join('; '));
  console.log('ok: an MCP server question answered in the web client');
} finally {
  await browser.close();
}
