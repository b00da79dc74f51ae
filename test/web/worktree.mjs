// A session in a git worktree from Foya web (see TestWebClientWorktree):
// the New session form's Git worktree checkbox shows the branch and base
// fields; the new session's sidebar entry names its branch (the worktree's
// path as its tooltip); deleting it asks, and a worktree with an untracked
// file asks again before it is removed with force.
import { chromium } from 'playwright-core';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { until } from './poll.mjs';
import { axeClean } from './axe.mjs';

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
  const dialogs = [];
  page.on('dialog', (d) => { dialogs.push(d.message()); d.accept(); });

  step('the worktree fields show with the checkbox');
  await page.goto(base + '/');
  await page.locator('#project option[value="' + process.env.PROJECT + '"]').waitFor({ state: 'attached' });
  if (await page.locator('#worktreeopts').isVisible()) throw new Error('worktree fields visible before the checkbox');
  await page.getByLabel('Git worktree').check();
  await page.locator('#worktreeopts').waitFor();
  await page.getByLabel('Branch').fill('web/one');
  await page.getByLabel('Base ref').fill('main');
  await page.selectOption('#project', process.env.PROJECT);
  await axeClean(page, 'new session form with worktree fields');

  step('New session creates it in a worktree');
  await page.getByRole('button', { name: 'New session' }).click();
  const wt = page.locator('#sessions button[aria-current=true] .wt');
  await until('the branch in the sidebar', () => wt.textContent(), (v) => v === 'web/one');
  const path = await wt.getAttribute('title');
  if (!path.startsWith(join(process.env.REPO, '.foya', 'worktrees', 'ses_'))) throw new Error('worktree path ' + path);
  console.log('session: ' + path.split('/').pop());
  await axeClean(page, 'a worktree session');

  step('a dirty worktree is deleted only after a second confirmation');
  writeFileSync(join(path, 'untracked.txt'), 'x');
  await page.locator('#delete').click();
  await until('the session to go', () => page.locator('#title').textContent(), (v) => v === 'No session');
  if (dialogs.length !== 2 || !dialogs[0].includes(path) || !dialogs[0].includes('web/one') || !dialogs[1].includes('uncommitted')) throw new Error('dialogs: ' + JSON.stringify(dialogs));
  if (errors.length) throw new Error('page errors: ' + errors.join('; '));
  console.log('ok: a session in a git worktree from the web client');
} finally {
  await browser.close();
}
