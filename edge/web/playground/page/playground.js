// The Foya playground page: GraphiQL on the kernel's /graphql with
// subscriptions over graphql-transport-ws. An external file, not an inline
// script: the page is served with a Content-Security-Policy that allows
// scripts from the kernel only (docs/security.md). Its settings come from
// the JSON block #foya-playground-config in the page.
(function () {
  'use strict';
  const config = JSON.parse(document.getElementById('foya-playground-config').textContent);
  const endpoint = config.endpoint;
  const url = location.protocol + '//' + location.host + endpoint;
  const subscriptionUrl = (location.protocol === 'https:' ? 'wss:' : 'ws:') + '//' + location.host + endpoint;
  // The token is kept in sessionStorage only: this tab, until it is
  // closed; never in localStorage, cookies or the URL.
  const tokenKey = 'foya-token';
  // A web link (`foya web`, or the kernel's log on loopback) carries the
  // token in the fragment, #token=…: keep it, and take it off the address
  // bar and out of the history at once.
  if (location.hash.startsWith('#token=')) {
    const t = new URLSearchParams(location.hash.slice(1)).get('token');
    if (t && t.trim()) sessionStorage.setItem(tokenKey, t.trim());
    history.replaceState(null, '', location.pathname + location.search);
  }
  if (!window.GraphiQL || !window.graphqlWs || !window.React || !window.ReactDOM) {
    document.getElementById('foya-loading').textContent =
      'GraphiQL could not be loaded from this kernel. The API itself works: POST ' + url + '.';
    return;
  }
  // A kernel answers a request without its token UNAUTHENTICATED (HTTP 401,
  // or a WebSocket closed with 4403). The page then asks for the token.
  const token = () => sessionStorage.getItem(tokenKey) || '';
  const askToken = (refused) => {
    const t = window.prompt((refused ? 'The kernel refused the token (was it rotated?).\n' : '') +
      'This kernel requires its bearer token: run "foya web" where the kernel runs for a link that holds it, ' +
      'or "foya token show". It is kept in this tab only.');
    if (!t || !t.trim()) return false;
    sessionStorage.setItem(tokenKey, t.trim());
    return true;
  };
  const unauthenticated = async (resp) => {
    if (resp.status !== 401) return false;
    try {
      const body = await resp.clone().json();
      return !!(body.errors && body.errors.some((e) => e.extensions && e.extensions.code === 'UNAUTHENTICATED'));
    } catch (e) {
      return false;
    }
  };
  // POST (and SSE) requests carry the token as a Bearer header.
  const authFetch = async (input, init) => {
    for (let attempt = 0; ; attempt++) {
      const headers = new Headers((init && init.headers) || {});
      const t = token();
      if (t && !headers.has('Authorization')) headers.set('Authorization', 'Bearer ' + t);
      const resp = await fetch(input, Object.assign({}, init, { headers }));
      if (attempt >= 3 || !(await unauthenticated(resp)) || !askToken(t !== '')) return resp;
    }
  };
  window.foyaAuth = { tokenKey, token, askToken, authFetch };
  // Subscriptions use the graphql-transport-ws protocol of the graphql-ws
  // client; the token goes in connection_init.
  const wsClient = graphqlWs.createClient({
    url: subscriptionUrl, lazy: true, retryAttempts: 3,
    connectionParams: () => (token() ? { authorization: 'Bearer ' + token() } : {}),
    shouldRetry: (e) => !(e && e.code === 4403),
    on: { closed: (e) => { if (e && e.code === 4403) askToken(token() !== ''); } },
  });
  const fetcher = GraphiQL.createFetcher({ url, wsClient, fetch: authFetch });
  window.foyaPlayground = { fetcher, url, subscriptionUrl };
  ReactDOM.render(
    React.createElement(GraphiQL, {
      fetcher,
      defaultQuery: config.defaultQuery,
      defaultEditorToolsVisibility: true,
      isHeadersEditorEnabled: true,
      inputValueDeprecation: true,
    }),
    document.getElementById('graphiql'),
  );
})();
