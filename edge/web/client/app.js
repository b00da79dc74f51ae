// Foya web: a chat client that speaks only the kernel's public API — GraphQL
// POST for queries and mutations, graphql-transport-ws for subscriptions.
// No framework, no build step, no network beyond the kernel.
//
// This is the entry module (index.html loads it with type=module); the
// others are imported from here, in the order their top-level wiring runs:
//   (boot.js, a classic script loaded first from <head>: the token link,
//    query field lists, the session in the address asked for at once)
//   dom.js         DOM and formatting helpers
//   api.js         transport: gql, multipart uploads, the socket, token, errors
//   state.js       page state
//   markdown.js    safe Markdown, code highlighting, diffs
//   attachments.js attachments shown, played and saved (GET /attachments/{id})
//   messages.js    the conversation log: messages, tool cards, paging back
//   edit.js        edit-and-resend, rewind
//   cards.js       approval, question and elicitation cards, notices
//   session.js     opening a session, its events, phase, queue, usage
//   composer.js    attachments, model and approval mode, send, stop
//   sidebar.js     sessions, catalog, header buttons, export and import
//   connections.js connection form and editor, MCP servers
//   setup.js       first-run setup
//   layout.js      drawer, theme, keyboard shortcuts
import { gql, showError, ws } from './api.js';
import { state } from './state.js';
import './markdown.js';
import './messages.js';
import './edit.js';
import './cards.js';
import { openSession } from './session.js';
import { renderModelPicker } from './composer.js';
import { loadSidebar, renderSessions, watchKernel } from './sidebar.js';
import { loadMcp } from './connections.js';
import './setup.js';
import './layout.js';

window.foyaWeb = { gql, ws, state };
performance.mark('foya:script-end');
// A session named in the address opens at once, beside the sidebar's
// query rather than after it (the first paint of a long session).
const first = location.hash.slice(1);
// The sidebar is read once the session is on screen: both at once would
// share the kernel's time and delay the conversation.
const opened = /^ses_[\w-]+$/.test(first) ? openSession(first).catch(() => openSession(null)) : Promise.resolve();
// The kernel's events are watched before the sidebar is read: a session
// changed, made or deleted while the list is read (a walk of many pages
// with 10,000 sessions) would otherwise never reach the page.
// (Without the kernel's events, after 3 s, the list is read all the same,
// and again once the events come.)
opened.then(() => watchKernel(3000)).then(loadSidebar).then(() => {
  renderSessions(); renderModelPicker();
  return loadMcp();
}).catch(showError);
