// Foya web: the page's state, the field lists of its queries, and the
// session named in the address, asked for as soon as the transport exists.
import { gql } from './api.js';

export const state = { session: null, lastSeq: 0, sessions: new Map(), live: null, sub: null, phase: 'IDLE', queue: [], attachments: [], editing: null, gen: 0 };
export const S_FIELDS = 'id title pinned phase updatedAt parentId connectionId model approvalMode project { id name path }';
// A page of history carries at most TEXT_PAGE bytes of each text (textBytes
// says how long it is); the rest is read on request with text(offset:, limit:).
export const TEXT_PAGE = 262144, HISTORY_PAGE = 50;
export const MSG_FIELDS = 'seq role text(limit: ' + TEXT_PAGE + ') textBytes source reasoning toolCalls { id name input } toolCallId toolName isError diff interrupted turnStatus turnReason finishReason refusal attachments { id name kind size }';
export const ATT_FIELDS = 'id name kind mediaType size';
// The usage meters come in a query of their own (refreshUsage), after the
// messages are on screen: counting the context of a long session is the
// slow part of reading it.
export const SESSION_Q = 'query($id: ID!) { session(id: $id) { id title connectionId model approvalMode phase headSeq queue { id text truncated attachments { id } } messages(last: ' + HISTORY_PAGE + ') { ' + MSG_FIELDS + ' } } }';
// A session named in the address is asked for before the rest of the
// script runs (the first paint of a long session); openSession takes it.
let prefetched = null;
if (/^#ses_[\w-]+$/.test(location.hash)) {
  const id = location.hash.slice(1);
  prefetched = { id, data: gql(SESSION_Q, { id }) };
  prefetched.data.catch(() => { /* openSession asks again */ });
}
// takePrefetched returns the answer asked for id at load (a promise), or
// null; either way the prefetch is used up.
export function takePrefetched(id) {
  const p = prefetched; prefetched = null;
  return p && p.id === id ? p.data : null;
}
