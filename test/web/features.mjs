// Drives the rest of Foya web in headless Chromium against a running kernel
// (BASE) whose fake OpenAI-compatible server has this script's responses
// queued in order (see TestWebClientFeatures): the connection form, refresh
// models and defaults, an attachment upload, a highlighted code block, the
// context and token usage, a question answered, the queue edited, reordered
// and emptied, Stop with keep or clear, compact, rewind with its file preview,
// rename and delete, a second tab following live (title, queue, stream,
// rewind), and keyboard reachability of the composer.
import { chromium } from 'playwright-core';
import { until, untilEq } from './poll.mjs';

const base = process.env.BASE;
const fakeURL = process.env.FAKE;
const project = process.env.PROJECT;
const shots = process.env.SCREENSHOTS; // a directory, when screenshots are wanted
const step = (s) => console.log('step: ' + s);
const must = (ok, what) => { if (!ok) throw new Error(what); };
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
try {
  const ctx = await browser.newContext({ viewport: { width: 1200, height: 760 } });
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
  const gql = (query, variables) => page.evaluate(([q, v]) => window.foyaWeb.gql(q, v), [query, variables || {}]);
  const shot = async (name) => { if (shots) await page.screenshot({ path: shots + '/' + name }); };
  await page.goto(base + '/#token=' + encodeURIComponent(process.env.TOKEN));
  await page.getByRole('link', { name: 'GraphQL playground' }).waitFor();

  step('add a connection with the form (the key is write-only)');
  await page.getByText('Connections').click();
  await page.getByLabel('Name', { exact: true }).fill('fake');
  await page.getByLabel('Base URL', { exact: true }).fill(fakeURL);
  await page.getByLabel('API key', { exact: true }).fill('sk-web-secret');
  await page.getByLabel('Model ids').fill('gpt-t');
  await page.getByLabel('Input price', { exact: true }).fill('2');
  await page.getByLabel('Output price', { exact: true }).fill('8');
  await page.getByRole('button', { name: 'Add connection' }).click();
  await page.locator('#connlist li').filter({ hasText: 'fake (gpt-t)' }).waitFor();
  must(!(await page.content()).includes('sk-web-secret'), 'the API key is shown on the page');
  const conns = async () => (await gql('{ connections { name type apiKeyConfigured models { id capabilities { contextWindow prices { inputPerMillion cachedInputPerMillion outputPerMillion } } } } }')).connections;
  const price = (cs, conn, model) => { const c = cs.find((x) => x.name === conn); const m = c && c.models.find((x) => x.id === model); return m && m.capabilities.prices; };
  must(JSON.stringify(price(await conns(), 'fake', 'gpt-t')) === '{"inputPerMillion":2,"cachedInputPerMillion":null,"outputPerMillion":8}', 'prices on creation: ' + JSON.stringify(price(await conns(), 'fake', 'gpt-t')));

  step('refresh models (GET /models of the fake)');
  await page.getByRole('button', { name: 'Refresh models of fake' }).click();
  await page.locator('#connlist li').filter({ hasText: 'fake (gpt-t, gpt-u)' }).waitFor();

  step('set the default and fast models');
  await page.getByLabel('Default model', { exact: true }).selectOption({ label: 'fake/gpt-t' });
  await page.waitForFunction(() => document.getElementById('status').textContent === 'Default saved.');
  await page.getByLabel('Fast model', { exact: true }).selectOption({ label: 'fake/gpt-u' });
  await until('the default gpt-t and the fast gpt-u', async () => {
    const d = await gql('{ defaultModels { language { model } fast { model } } }');
    return d.defaultModels.language && d.defaultModels.language.model === 'gpt-t' && d.defaultModels.fast && d.defaultModels.fast.model === 'gpt-u';
  });

  step('edit the connection: prices of the refreshed model; the key stays (the field is empty, write-only)');
  await page.getByRole('button', { name: 'Edit connection fake' }).click();
  const cdlg = page.getByRole('dialog', { name: 'Edit connection fake' });
  must(await cdlg.getByLabel('Input price of gpt-t', { exact: true }).inputValue() === '2', 'the dialog does not show the input price');
  must(await cdlg.getByLabel('Replace API key').inputValue() === '', 'the key field is not empty');
  await cdlg.getByLabel('Input price of gpt-u', { exact: true }).fill('1');
  await cdlg.getByLabel('Output price of gpt-u', { exact: true }).fill('4');
  await shot('web-connection-edit.png');
  await cdlg.getByRole('button', { name: 'Save' }).click();
  await page.waitForFunction(() => document.getElementById('status').textContent === 'Connection fake saved.');
  {
    const cs = await conns();
    must(JSON.stringify(price(cs, 'fake', 'gpt-u')) === '{"inputPerMillion":1,"cachedInputPerMillion":null,"outputPerMillion":4}', 'gpt-u prices: ' + JSON.stringify(price(cs, 'fake', 'gpt-u')));
    must(price(cs, 'fake', 'gpt-t').inputPerMillion === 2, 'gpt-t prices lost on update');
    must(cs.find((c) => c.name === 'fake').apiKeyConfigured, 'the key was dropped by an edit that left it empty');
  }
  await shot('web-connections.png');

  step('a session to delete, then one to work in');
  await page.getByLabel('Title', { exact: true }).fill('to delete');
  await page.getByRole('button', { name: 'New session', exact: true }).click();
  await page.locator('#sessions button[aria-current=true]').filter({ hasText: 'to delete' }).waitFor();
  await page.locator('#cost').filter({ hasText: 'Cost: —' }).waitFor(); // nothing spent, nothing priced: no $0
  page.once('dialog', (d) => d.accept());
  await page.getByRole('button', { name: 'Delete', exact: true }).click();
  await page.waitForFunction(() => ![...document.querySelectorAll('#sessions button.s')].some((b) => b.textContent.includes('to delete')));
  await untilEq('the header once the open session is deleted', () => page.locator('#title').textContent(), 'No session');

  await page.getByLabel('Title', { exact: true }).fill('features');
  await page.getByLabel('Project', { exact: true }).selectOption({ label: project });
  await page.getByLabel('Approval mode', { exact: true }).selectOption('BYPASS');
  await page.getByRole('button', { name: 'New session', exact: true }).click();
  await page.locator('#sessions button[aria-current=true]').filter({ hasText: 'features' }).waitFor();
  const sid = await page.evaluate(() => window.foyaWeb.state.session);

  step('the sidebar groups sessions by project (collapsible)');
  const group = page.locator('#sessions details.group').filter({ has: page.locator('summary', { hasText: project }) });
  await group.locator('button.s').filter({ hasText: 'features' }).waitFor();
  await group.locator('summary').click();
  await group.locator('button.s').filter({ hasText: 'features' }).waitFor({ state: 'hidden' });
  await group.locator('summary').click();
  await group.locator('button.s').filter({ hasText: 'features' }).waitFor();
  // A session made by another client lands live (kernelEvents) in its group.
  await gql('mutation { createSession(input: {title: "made elsewhere"}) { id } }');
  await page.locator('#sessions details.group').filter({ has: page.locator('summary', { hasText: 'No project (1)' }) })
    .locator('button.s').filter({ hasText: 'made elsewhere' }).waitFor();
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
  // Back to the first tab, as a user who opened the second one returns: in
  // headless Chromium the tab left behind paints about once a second, so each
  // action on it would wait seconds for its element to be stable.
  await page.bringToFront();

  step('keyboard: Message, then Attach files, then Send by Tab');
  await box.focus();
  await page.keyboard.press('Tab');
  await untilEq('the focus after Tab from Message', () => page.evaluate(() => document.activeElement.getAttribute('aria-label')), 'Attach files');
  await page.keyboard.press('Tab');
  await untilEq('the focus after a second Tab', () => page.evaluate(() => document.activeElement.textContent), 'Send');

  step('attach files (picked, pasted, dropped) and send them');
  await page.getByLabel('Attach files').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('attached notes: the answer is 42\n') });
  await page.locator('#attachments li').filter({ hasText: 'notes.txt' }).waitFor();
  // A file pasted into the message box, and one dropped on the composer, are attached too.
  await box.evaluate((ta) => {
    const dt = new DataTransfer(); dt.items.add(new File(['pasted bytes\n'], 'pasted.txt', { type: 'text/plain' }));
    ta.dispatchEvent(new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }));
  });
  await page.locator('#attachments li').filter({ hasText: 'pasted.txt' }).waitFor();
  await page.locator('#composer').evaluate((f) => {
    const dt = new DataTransfer(); dt.items.add(new File(['dropped bytes\n'], 'dropped.txt', { type: 'text/plain' }));
    f.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  });
  await page.locator('#attachments li').filter({ hasText: 'dropped.txt' }).waitFor();
  // An image, and a video Chromium records here (WebM from a canvas), are
  // shown and played in the log from GET /attachments/{id}.
  await page.getByLabel('Attach files').setInputFiles({ name: 'dot.png', mimeType: 'image/png',
    buffer: Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGP4z8AARAwQCgAf7gP9i18U1AAAAABJRU5ErkJggg==', 'base64') });
  // The picked image shows as a thumbnail in the composer, from the file itself.
  await until('the composer\'s thumbnail of dot.png', () => page.locator('#attachments li').filter({ hasText: 'dot.png' }).locator('img.thumb').evaluate((i) => i.complete && i.naturalWidth === 2));
  await page.locator('#composer').evaluate(async (f) => {
    const c = document.createElement('canvas'); c.width = 64; c.height = 48;
    const g = c.getContext('2d');
    const rec = new MediaRecorder(c.captureStream(25), { mimeType: 'video/webm' });
    const parts = [];
    rec.ondataavailable = (e) => parts.push(e.data);
    const stopped = new Promise((r) => { rec.onstop = r; });
    rec.start();
    // A second of frames, however slowly this machine draws them.
    for (let i = 0; i < 25; i++) { g.fillStyle = i % 2 ? '#c00' : '#00c'; g.fillRect(0, 0, 64, 48); await new Promise((r) => setTimeout(r, 40)); }
    rec.stop(); await stopped;
    if (!parts.some((p) => p.size > 0)) throw new Error('MediaRecorder recorded nothing');
    const dt = new DataTransfer(); dt.items.add(new File(parts, 'clip.webm', { type: 'video/webm' }));
    f.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  });
  await page.locator('#attachments li').filter({ hasText: 'clip.webm' }).waitFor();
  await box.fill('read the notes');
  await box.press('Enter');
  const sent = log.locator('.msg.user').filter({ hasText: 'read the notes' });
  await sent.filter({ hasText: 'notes.txt' }).filter({ hasText: 'pasted.txt' }).filter({ hasText: 'dropped.txt' }).waitFor();
  await untilEq('attachments left in the composer after sending', () => page.locator('#attachments li').count(), 0);
  await until('the image shown in the message', () => sent.locator('img.attmedia[alt="dot.png"]').evaluate((i) => i.complete && i.naturalWidth));
  // A click shows it whole, a second click as before.
  const zoom = sent.getByRole('button', { name: 'Show dot.png at full size' });
  await zoom.click();
  await untilEq('the image enlarged', () => zoom.getAttribute('aria-pressed'), 'true');
  await zoom.click();
  await untilEq('the image back', () => zoom.getAttribute('aria-pressed'), 'false');
  await sent.getByRole('button', { name: 'Play clip.webm' }).click();
  await untilEq('the played video\'s width', () => sent.locator('video.attmedia').evaluate((v) => v.readyState >= 1 ? v.videoWidth : 0), 64);
  const [dl] = await Promise.all([page.waitForEvent('download'), sent.getByRole('button', { name: 'Save notes.txt' }).click()]);
  must(dl.suggestedFilename() === 'notes.txt', 'saved as ' + dl.suggestedFilename());
  await shot('web-attachments.png');

  step('a highlighted code block and the usage meters');
  await log.locator('.msg.assistant[data-seq]').filter({ hasText: 'Here is Go' }).waitFor();
  const kw = await log.locator('.msg.assistant pre code .tok-k').allTextContents();
  must(kw.includes('func') && kw.includes('return'), 'keywords not highlighted: ' + kw.join(','));
  must(await log.locator('.msg.assistant pre code .tok-s').filter({ hasText: '"<hi>"' }).count() === 1, 'string not highlighted (or not escaped)');
  await idle();
  await page.waitForFunction(() => document.getElementById('ctx').value > 0 && /Spent: \d/.test(document.getElementById('tokens').textContent));
  const usage = await page.locator('#usage').textContent();
  must(/\/ /.test(usage), 'context text: ' + usage);
  // gpt-t is priced (2 $/M in, 8 $/M out, set with the form): a dollar figure, no unpriced note.
  await page.waitForFunction(() => /^Cost: \$\d/.test(document.getElementById('cost').textContent));
  const cost = await page.locator('#cost').textContent();
  const apiCost = (await gql('query($s: ID!) { session(id: $s) { usage { cost unpricedTokens } } }', { s: sid })).session.usage;
  must(apiCost.cost > 0 && apiCost.unpricedTokens === 0 && !cost.includes('unpriced'), 'cost: ' + cost + ' ' + JSON.stringify(apiCost));

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
  await page.waitForFunction(() => document.activeElement && document.activeElement.getAttribute('aria-label') === 'Answer'); // the card takes the focus
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
  await until('a compaction checkpoint', async () => {
    const d = await gql('query($s: ID!) { events(sessionId: $s, limit: 5000) { type } }', { s: sid });
    return d.events.some((e) => e.type === 'compaction_checkpoint');
  });
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
  await untilEq('the kernel queue after Stop and clear', async () => (await kernelQueue()).length, 0);

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
  await untilEq('the queue shown', async () => (await queued()).join('|'), 'first edited|third queued');
  await untilEq('the kernel queue', async () => (await kernelQueue()).join('|'), 'first edited|third queued');
  await page2.waitForFunction(() => [...document.querySelectorAll('#queuelist .qtext')].map((e) => e.textContent).join('|') === 'first edited|third queued');
  await page2.getByRole('log').locator('.msg.streaming').filter({ hasText: 'Slowly' }).waitFor();

  step('Stop with a queue: keep it');
  await page.getByRole('button', { name: 'Stop' }).click();
  await page.getByRole('dialog', { name: 'Stop the turn' }).getByRole('button', { name: 'Keep the queue' }).click();
  await idle();
  await log.locator('.msg.assistant[data-seq]').filter({ hasText: 'Slowly' }).filter({ hasText: 'Interrupted' }).last().waitFor();
  await untilEq('the kept kernel queue', async () => (await kernelQueue()).join('|'), 'first edited|third queued');
  await untilEq('the kept queue shown', async () => (await queued()).join('|'), 'first edited|third queued');
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

  step('export the session (a download), then import the file');
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export', exact: true }).click()]);
  must(/\.foya\.jsonl$/.test(download.suggestedFilename()), 'export file name: ' + download.suggestedFilename());
  const chunks = [];
  for await (const c of await download.createReadStream()) chunks.push(c);
  const doc = Buffer.concat(chunks);
  const header = JSON.parse(doc.toString('utf8').split('\n')[0]);
  must(JSON.stringify(header).includes('foya.session'), 'export header: ' + JSON.stringify(header).slice(0, 200));
  must(doc.toString('utf8').includes('You said blue.'), 'the export lacks the conversation');
  await page.getByLabel('Import session').setInputFiles({ name: 'features.foya.jsonl', mimeType: 'application/jsonl', buffer: doc });
  await page.waitForFunction((old) => { const s = window.foyaWeb.state.session; return s && s !== old; }, sid);
  const imported = await page.evaluate(() => window.foyaWeb.state.session);
  await log.locator('.msg.assistant[data-seq]').filter({ hasText: 'You said blue.' }).waitFor();
  await group.locator('button.s[aria-current=true]').waitFor(); // bound to the chosen project
  await untilEq('sessions in the project group (the original and the import)', () => group.locator('button.s').count(), 2);
  const back = (await gql('query($s: ID!) { session(id: $s) { project { name } messages { text } } }', { s: imported })).session;
  must(back.project && back.project.name === project && back.messages.some((m) => m.text === 'You said blue.'), 'imported: ' + JSON.stringify(back).slice(0, 300));

  step('image default, then rename the connection and replace its key');
  await page.getByLabel('Name', { exact: true }).fill('img');
  await page.getByLabel('Base URL', { exact: true }).fill(fakeURL);
  await page.getByLabel('Type', { exact: true }).selectOption('IMAGE');
  await page.getByLabel('Model ids').fill('gpt-image-1');
  await page.getByRole('button', { name: 'Add connection' }).click();
  await page.locator('#connlist li').filter({ hasText: 'img [image] (gpt-image-1)' }).waitFor();
  must(await page.getByLabel('Default model', { exact: true }).locator('option', { hasText: 'img/' }).count() === 0, 'an image model is offered as the language default');
  await page.getByLabel('Image model', { exact: true }).selectOption({ label: 'img/gpt-image-1' });
  await until('the image default gpt-image-1', async () => {
    const d = await gql('{ defaultModels { image { model } } }');
    return d.defaultModels.image && d.defaultModels.image.model === 'gpt-image-1';
  });
  await page.getByRole('button', { name: 'Edit connection fake' }).click();
  const edlg = page.getByRole('dialog', { name: 'Edit connection fake' });
  await edlg.getByLabel('Connection name').fill('fake2');
  await edlg.getByLabel('Replace API key').fill('sk-web-replaced');
  await edlg.getByRole('button', { name: 'Save' }).click();
  await page.locator('#connlist li').filter({ hasText: 'fake2 (gpt-t, gpt-u)' }).waitFor();
  must(!(await page.content()).includes('sk-web-replaced'), 'the replaced key is shown on the page');
  await until('the default kept through a rename', async () => await page.getByLabel('Default model', { exact: true }).inputValue() !== '');
  // The replaced key goes out with the next request (TestWebClientFeatures checks the header).
  await page.getByRole('button', { name: 'Refresh models of fake2' }).click();
  await page.waitForFunction(() => document.getElementById('status').textContent === 'Models of fake2 refreshed.');
  await page.getByRole('button', { name: 'Edit connection fake2' }).click();
  const kdlg = page.getByRole('dialog', { name: 'Edit connection fake2' });
  await kdlg.getByLabel('Remove the stored key').check();
  await kdlg.getByRole('button', { name: 'Save' }).click();
  await page.waitForFunction(() => document.getElementById('status').textContent === 'Connection fake2 saved.');
  await until('the stored key removed', async () => !(await conns()).find((c) => c.name === 'fake2').apiKeyConfigured);

  step('delete a connection, with confirmation');
  page.once('dialog', (d) => d.dismiss());
  await page.getByRole('button', { name: 'Delete connection img' }).click();
  must((await conns()).some((c) => c.name === 'img'), 'deleted although the confirmation was dismissed');
  page.once('dialog', (d) => d.accept());
  await page.getByRole('button', { name: 'Delete connection img' }).click();
  await page.locator('#connlist li').filter({ hasText: 'img' }).waitFor({ state: 'detached' });
  await until('the connection img gone', async () => !(await conns()).some((c) => c.name === 'img'));
  await until('the image default gone with its connection', async () => (await gql('{ defaultModels { image { model } } }')).defaultModels.image === null);

  if (errors.length) throw new Error('page errors: ' + errors.join('\n'));
  console.log('ok: session ' + sid);
} finally {
  await browser.close();
}
