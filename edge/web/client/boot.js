// Foya web: the first script to run. index.html loads it from <head> as a
// classic script, so it runs as soon as it arrives (from the cache, at once),
// before the page is parsed and while the modules are still loading; it
// touches no DOM. It keeps the token of a #token= link, holds the field lists
// of the page's queries, and asks at once for the session named in the
// address (the first paint of a long session waits on that answer more than
// on anything else). What it offers is window.foyaBoot, the one global it
// sets; api.js and state.js pass it on as module exports.
window.foyaBoot = (() => {
  'use strict';
  performance.mark('foya:boot');
  const endpoint = '/graphql';
  const tokenKey = 'foya-token';
  const token = () => sessionStorage.getItem(tokenKey) || '';
  const setToken = (t) => sessionStorage.setItem(tokenKey, t);
  // A web link (`foya web`, or the kernel's log on loopback) carries the
  // token in the fragment, #token=…, which browsers never send to a server:
  // keep it in this tab's sessionStorage, and take it off the address bar
  // and out of the history at once.
  if (location.hash.startsWith('#token=')) {
    const t = new URLSearchParams(location.hash.slice(1)).get('token');
    if (t && t.trim()) setToken(t.trim());
    history.replaceState(null, '', location.pathname + location.search);
  }

  // post sends one GraphQL request with the token and returns the kernel's
  // answer, {data, errors}; api.js's gql adds asking for a refused token.
  async function post(query, variables) {
    const headers = { 'Content-Type': 'application/json' };
    const t = token();
    if (t) headers.Authorization = 'Bearer ' + t;
    const resp = await fetch(endpoint, { method: 'POST', headers, body: JSON.stringify({ query, variables: variables || {} }) });
    try { return await resp.json(); } catch (e) { throw new Error('kernel answered HTTP ' + resp.status); }
  }

  const S_FIELDS = 'id title pinned phase updatedAt parentId connectionId model approvalMode project { id name path } worktree { path branch baseRef }';
  // A page of history carries at most TEXT_PAGE bytes of each text (textBytes
  // says how long it is); the rest is read on request with text(offset:, limit:).
  const TEXT_PAGE = 262144, HISTORY_PAGE = 50;
  const MSG_FIELDS = 'seq role text(limit: ' + TEXT_PAGE + ') textBytes source reasoning toolCalls { id name input } toolCallId toolName isError diff interrupted turnStatus turnReason finishReason refusal attachments { id name kind mediaType size }';
  const ATT_FIELDS = 'id name kind mediaType size';
  // The usage meters come in a query of their own (refreshUsage), after the
  // messages are on screen: counting the context of a long session is the
  // slow part of reading it.
  const SESSION_Q = 'query($id: ID!) { session(id: $id) { id title connectionId model approvalMode phase headSeq queue { id text truncated attachments { id } } messages(last: ' + HISTORY_PAGE + ') { ' + MSG_FIELDS + ' } } }';

  // The session named in the address, asked for now; openSession takes the
  // answer (and asks again through gql, which can ask for a token, if this
  // one failed).
  let prefetched = null;
  if (/^#ses_[\w-]+$/.test(location.hash)) {
    const id = location.hash.slice(1);
    prefetched = { id, body: post(SESSION_Q, { id }) };
    prefetched.body.catch(() => { /* openSession asks again */ });
  }
  // takePrefetched returns the kernel's answer ({data, errors}, a promise)
  // asked for id at load, or null; either way the prefetch is used up.
  function takePrefetched(id) {
    const p = prefetched; prefetched = null;
    return p && p.id === id ? p.body : null;
  }
  return { endpoint, token, setToken, post, S_FIELDS, TEXT_PAGE, HISTORY_PAGE, MSG_FIELDS, ATT_FIELDS, SESSION_Q, takePrefetched };
})();
