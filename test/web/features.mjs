// Drives the rest of Foya web in headless Chromium against a running kernel
// (BASE) whose fake OpenAI-compatible server has this script's responses
// queued in order (see TestWebClientFeatures): the connection form, refresh
// models and defaults, an attachment upload, a highlighted code block, the
// context and token usage, a question answered, the queue edited, reordered
// and emptied, Stop with keep or clear, compact, rewind with its file preview,
// rename and delete, a second tab following live (title, queue, stream,
// rewind), and keyboard reachability of the composer.
import { chromium } from 'playwright-core';

const base = process.env.BASE;
const fakeURL = process.env.FAKE;
const project = process.env.PROJECT;
const shots = process.env.SCREENSHOTS; // a directory, when screenshots are wanted
const step = (s) => console.log('step: ' + s);
const must = (ok, what) => { if (!ok) throw new Error(what); };
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
try {
  const ctx = await browser.newContext({ viewport: { width: 1200, height: 760 } });
  const page = await ctx.newPage();
  page.setDefaultTimeout(20000);
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('request', (r) => { if (!r.url().startsWith(base)) errors.push('request outside the kernel: ' + r.url()); });
  const gql = (query, variables) => page.evaluate(([q, v]) => window.foyaWeb.gql(q, v), [query, variables || {}]);
  const shot = async (name) => { if (shots) await page.screenshot({ path: shots + '/' + name }); };
  await page.goto(base + '/');
  await page.getByRole('link', { name: 'GraphQL playground' }).waitFor();

  step('add a connection with the form (the key is write-only)');
  await page.getByText('Connections').click();
  await page.getByLabel('Name', { exact: true }).fill('fake');
  await page.getByLabel('Base URL').fill(fakeURL);
  await page.getByLabel('API key').fill('sk-web-secret');
  await page.getByLabel('Model ids').fill('gpt-t');
  await page.getByRole('button', { name: 'Add connection' }).click();
  await page.locator('#connlist li').filter({ hasText: 'fake (gpt-t)' }).waitFor();
  must(!(await page.content()).includes('sk-web-secret'), 'the API key is shown on the page');

  step('refresh models (GET /models of the fake)');
  await page.getByRole('button', { name: 'Refresh models of fake' }).click();
  await page.locator('#connlist li').filter({ hasText: 'fake (gpt-t, gpt-u)' }).waitFor();

  step('set the default and fast models');
  await page.getByLabel('Default model', { exact: true }).selectOption({ label: 'fake/gpt-t' });
  await page.waitForFunction(() => document.getElementById('status').textContent === 'Default saved.');
  await page.getByLabel('Fast model', { exact: true }).selectOption({ label: 'fake/gpt-u' });
  await page.waitForFunction(async () => {
    const d = await window.foyaWeb.gql('{ defaultModels { language { model } fast { model } } }');
    return d.defaultModels.language && d.defaultModels.language.model === 'gpt-t' && d.defaultModels.fast && d.defaultModels.fast.model === 'gpt-u';
  });
  await shot('web-connections.png');

  step('a session to delete, then one to work in');
  await page.getByLabel('Title', { exact: true }).fill('to delete');
  await page.getByRole('button', { name: 'New session' }).click();
  await page.locator('#sessions button[aria-current=true]').filter({ hasText: 'to delete' }).waitFor();
  page.once('dialog', (d) => d.accept());
  await page.getByRole('button', { name: 'Delete', exact: true }).click();
  await page.waitForFunction(() => ![...document.querySelectorAll('#sessions button.s')].some((b) => b.textContent.includes('to delete')));
  must((await page.locator('#title').textContent()) === 'No session', 'the deleted session is still open');

  await page.getByLabel('Title', { exact: true }).fill('features');
  await page.getByLabel('Project', { exact: true }).selectOption({ label: project });
  await page.getByLabel('Approval mode', { exact: true }).selectOption('BYPASS');
  await page.getByRole('button', { name: 'New session' }).click();
  await page.locator('#sessions button[aria-current=true]').filter({ hasText: 'features' }).waitFor();
  const sid = await page.evaluate(() => window.foyaWeb.state.session);
  const box = page.getByRole('textbox', { name: 'Message' });
  const log = page.getByRole('log');
  const idle = () => page.waitForFunction(() => window.foyaWeb.state.phase === 'IDLE');

  step('rename');
  page.once('dialog', (d) => d.accept('features renamed'));
  await page.getByRole('button', { name: 'Rename', exact: true }).click();
  await page.locator('#title').filter({ hasText: 'features renamed' }).waitFor();
  await page.locator('#sessions button').filter({ hasText: 'features renamed' }).waitFor();

  step('a second tab follows the session');
  const page2 = await ctx.newPage();
  page2.setDefaultTimeout(20000);
  page2.on('pageerror', (e) => errors.push('tab 2: ' + String(e)));
  await page2.goto(base + '/#' + sid);
  await page2.locator('#title').filter({ hasText: 'features renamed' }).waitFor();

  step('keyboard: Message, then Attach files, then Send by Tab');
  await box.focus();
  await page.keyboard.press('Tab');
  must(await page.evaluate(() => document.activeElement.getAttribute('aria-label') === 'Attach files'), 'Tab from Message does not reach Attach files');
  await page.keyboard.press('Tab');
  must(await page.evaluate(() => document.activeElement.textContent === 'Send'), 'Tab does not reach Send');

  step('upload an attachment and send it');
  await page.getByLabel('Attach files').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('attached notes: the answer is 42\n') });
  await page.locator('#attachments li').filter({ hasText: 'notes.txt' }).waitFor();
  await box.fill('read the notes');
  await box.press('Enter');
  await log.locator('.msg.user').filter({ hasText: 'read the notes' }).filter({ hasText: 'notes.txt' }).waitFor();
  must(await page.locator('#attachments li').count() === 0, 'the attachment stayed in the composer after sending');

  step('a highlighted code block and the usage meters');
  await log.locator('.msg.assistant[data-seq]').filter({ hasText: 'Here is Go' }).waitFor();
  const kw = await log.locator('.msg.assistant pre code .tok-k').allTextContents();
  must(kw.includes('func') && kw.includes('return'), 'keywords not highlighted: ' + kw.join(','));
  must(await log.locator('.msg.assistant pre code .tok-s').filter({ hasText: '"<hi>"' }).count() === 1, 'string not highlighted (or not escaped)');
  await idle();
  await page.waitForFunction(() => document.getElementById('ctx').value > 0 && /Spent: \d/.test(document.getElementById('tokens').textContent));
  const usage = await page.locator('#usage').textContent();
  must(/\/ /.test(usage), 'context text: ' + usage);

  step('answer a question');
  await box.fill('ask me something');
  await box.press('Enter');
  const q = log.getByRole('group', { name: 'Question' });
  await q.filter({ hasText: 'Which colour?' }).waitFor();
  await shot('web-question.png');
  // The other tab, reloaded while the question is open, shows it again (from events).
  await page2.reload();
  const q2 = page2.getByRole('log').getByRole('group', { name: 'Question' });
  await q2.filter({ hasText: 'Which colour?' }).waitFor();
  // Answered by keyboard: the card has the focus; Enter answers.
  must(await page.evaluate(() => document.activeElement.getAttribute('aria-label') === 'Answer'), 'the question card did not take the focus');
  await page.keyboard.type('blue');
  await page.keyboard.press('Enter');
  await q.filter({ hasText: 'Answer: blue' }).waitFor();
  await q2.filter({ hasText: 'Answer: blue' }).waitFor();
  await log.locator('.msg.assistant[data-seq]').filter({ hasText: 'You said blue.' }).waitFor();
  await idle();

  step('a write (rewound later)');
  await box.fill('write hello.txt');
  await box.press('Enter');
  await log.locator('.msg.assistant[data-seq]').filter({ hasText: 'Written.' }).waitFor();
  await idle();

  step('compact now');
  await page.getByRole('button', { name: 'Compact', exact: true }).click();
  await page.waitForFunction(async (s) => {
    const d = await window.foyaWeb.gql('query($s: ID!) { events(sessionId: $s, limit: 5000) { type } }', { s });
    return d.events.some((e) => e.type === 'compaction_checkpoint');
  }, sid);
  await idle();

  const queued = () => page.locator('#queuelist li .qtext').allTextContents();
  const kernelQueue = async () => (await gql('query($s: ID!) { session(id: $s) { queue { text } } }', { s: sid })).session.queue.map((i) => i.text);

  step('Stop with a queue: clear it');
  await box.fill('slow one');
  await box.press('Enter');
  await log.locator('.msg.streaming').filter({ hasText: 'Slowly' }).waitFor();
  await box.fill('to be cleared');
  await box.press('Enter');
  await page.locator('#queuelist li').filter({ hasText: 'to be cleared' }).waitFor();
  await page.getByRole('button', { name: 'Stop' }).click();
  await page.getByRole('dialog', { name: 'Stop the turn' }).getByRole('button', { name: 'Clear the queue' }).click();
  await idle();
  await page.locator('#queue').waitFor({ state: 'hidden' });
  must((await kernelQueue()).length === 0, 'the kernel kept the queue');

  step('queue: edit, reorder, delete while a turn runs');
  await box.fill('slow two');
  await box.press('Enter');
  await log.locator('.msg.streaming').filter({ hasText: 'Slowly' }).waitFor();
  for (const t of ['first queued', 'second queued', 'third queued']) {
    await box.fill(t);
    await box.press('Enter');
    await page.locator('#queuelist li').filter({ hasText: t }).waitFor();
  }
  await shot('web-queue.png');
  const item = (t) => page.locator('#queuelist li').filter({ hasText: t });
  await item('first queued').getByRole('button', { name: 'Edit queued message' }).click();
  const ed = page.getByRole('textbox', { name: 'Edit queued message' });
  await ed.fill('first edited');
  await ed.press('Enter');
  await item('first edited').waitFor();
  await item('third queued').getByRole('button', { name: 'Move queued message up' }).click();
  await page.waitForFunction(() => [...document.querySelectorAll('#queuelist .qtext')].map((e) => e.textContent).join('|') === 'first edited|third queued|second queued');
  await item('second queued').getByRole('button', { name: 'Remove queued message' }).click();
  await page.waitForFunction(() => document.querySelectorAll('#queuelist li').length === 2);
  must((await queued()).join('|') === 'first edited|third queued', 'queue shown: ' + (await queued()).join('|'));
  must((await kernelQueue()).join('|') === 'first edited|third queued', 'kernel queue: ' + (await kernelQueue()).join('|'));
  await page2.waitForFunction(() => [...document.querySelectorAll('#queuelist .qtext')].map((e) => e.textContent).join('|') === 'first edited|third queued');
  await page2.getByRole('log').locator('.msg.streaming').filter({ hasText: 'Slowly' }).waitFor();

  step('Stop with a queue: keep it');
  await page.getByRole('button', { name: 'Stop' }).click();
  await page.getByRole('dialog', { name: 'Stop the turn' }).getByRole('button', { name: 'Keep the queue' }).click();
  await idle();
  await log.locator('.msg.assistant[data-seq]').filter({ hasText: 'Slowly' }).filter({ hasText: 'Interrupted' }).last().waitFor();
  must((await kernelQueue()).join('|') === 'first edited|third queued', 'kept queue: ' + (await kernelQueue()).join('|'));
  must((await queued()).join('|') === 'first edited|third queued', 'kept queue shown: ' + (await queued()).join('|'));
  for (const t of ['first edited', 'third queued']) await item(t).getByRole('button', { name: 'Remove queued message' }).click();
  await page.locator('#queue').waitFor({ state: 'hidden' });

  step('rewind to the write, with its file preview');
  await log.locator('.msg.user').filter({ hasText: 'write hello.txt' }).getByRole('button', { name: 'Rewind to here' }).click();
  const dlg = page.getByRole('dialog', { name: 'Rewind to before this message?' });
  await dlg.filter({ hasText: 'hello.txt' }).filter({ hasText: 'deleted (created since)' }).waitFor();
  await shot('web-rewind.png');
  await dlg.getByRole('button', { name: 'Rewind' }).click();
  await page.waitForFunction(() => document.querySelector('textarea[aria-label=Message]').value === 'write hello.txt');
  await page.waitForFunction(() => !document.getElementById('log').textContent.includes('Written.'));
  await page2.waitForFunction(() => !document.getElementById('log').textContent.includes('Written.'));
  await log.locator('.msg.assistant[data-seq]').filter({ hasText: 'You said blue.' }).waitFor();

  if (errors.length) throw new Error('page errors: ' + errors.join('\n'));
  console.log('ok: session ' + sid);
} finally {
  await browser.close();
}
