// Signing in to an OAuth MCP server from Foya web (see
// TestWebClientMCPSignIn): the MCP servers list shows the server as needing
// a sign-in with a "Sign in" link; following it in a new tab goes through
// the authorization server and back to the kernel's callback page ("Signed
// in"), and the list then shows the server ready, without a reload.
import { chromium } from 'playwright-core';
import { until } from './poll.mjs';

const base = process.env.BASE;
const name = process.env.MCP_NAME;
const step = (s) => console.log('step: ' + s);
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
try {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await ctx.addInitScript((t) => { if (location.protocol.startsWith('http') && !sessionStorage.getItem('foya-token')) sessionStorage.setItem('foya-token', t); }, process.env.TOKEN);
  const page = await ctx.newPage();
  page.setDefaultTimeout(20000);
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error' && /Content Security Policy/.test(m.text())) errors.push(m.text()); });

  step('the server is listed as needing a sign-in');
  await page.goto(base + '/');
  await page.locator('#mcp > summary').click();
  const item = page.locator('#mcplist li', { hasText: name });
  await until('the server to need a sign-in', () => item.getAttribute('data-status'), (v) => v === 'NEEDS_AUTH');
  const link = item.getByRole('link', { name: 'Sign in to ' + name });
  await link.waitFor();
  const href = await link.getAttribute('href');
  if (!href.startsWith(process.env.AS_ISSUER + '/authorize?')) throw new Error('sign-in link: ' + href);
  if ((await link.getAttribute('rel')) !== 'noopener noreferrer') throw new Error('the sign-in link must not give the tab a handle on the client');

  step('following the link signs in through the kernel callback');
  const [tab] = await Promise.all([ctx.waitForEvent('page'), link.click()]);
  await tab.waitForLoadState();
  await until('the callback page', () => tab.locator('h1').textContent(), (v) => v === 'Signed in');
  if (!tab.url().startsWith(base + '/mcp/oauth/callback?')) throw new Error('callback at ' + tab.url());

  step('the list follows the server to ready, without a reload');
  await until('the server to be ready', () => item.getAttribute('data-status'), (v) => v === 'READY');
  if (await item.getByRole('link', { name: 'Sign in to ' + name }).count()) throw new Error('a ready server still offers a sign-in');

  step('a ready server can be restarted from the list and comes back ready');
  await item.getByRole('button', { name: 'Restart MCP server ' + name }).click();
  await until('the restarted server to be ready', () => item.getAttribute('data-status'), (v) => v === 'READY');
  if (await page.locator('#error').isVisible()) throw new Error('restart showed an error: ' + (await page.locator('#errortext').textContent()));
  if (errors.length) throw new Error('page errors: ' + errors.join('; '));
  console.log('ok: signed in from the web client');
} finally {
  await browser.close();
}
