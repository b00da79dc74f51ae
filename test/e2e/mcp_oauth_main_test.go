package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/providers/openai/openaitest"
	"github.com/foya-dev/foya/storage"
)

// An HTTP MCP server that takes only OAuth tokens of a real authorization
// server (npm oauth2-mock-server: dynamic client registration, PKCE,
// RS256 JWTs bound to the resource indicator, rotating refresh tokens):
// the kernel reports NEEDS_AUTH with an authUrl and a kernel event;
// `foya mcp login` prints the URL and waits while a browser (a client
// without the kernel's token) follows it back to the kernel's callback;
// the tools work; a short-lived access token is refreshed without anyone,
// also after a kernel restart; the callback's state is single use;
// `foya mcp logout` revokes and forgets. No token ever shows in a CLI
// output, a GraphQL answer, the log or the database file.
func TestMCPOAuthSignInRefreshRestartLogout(t *testing.T) {
	t.Parallel()
	as := startOAuthAS(t, 4)
	srv := startProtectedMCP(t, as)
	fake := openaitest.New(t)
	dir := t.TempDir()
	k := startKernel(t, dir)
	var o outputs
	var answers []string // every GraphQL answer read, for the token check
	o.addFakeConnection(t, k.addr, fake.BaseURL())
	events, eventText := kernelEventStream(t, k)

	r := o.mustRun(t, "", "mcp", "add", "docs", "--addr", k.addr, "--url", srv.url, "--wait", "0")
	st, raw := waitMCPStatus(t, k, "docs", "NEEDS_AUTH")
	answers = append(answers, raw)
	for timeout := time.After(20 * time.Second); ; {
		var ev string
		select {
		case ev = <-events:
		case <-timeout:
			t.Fatal("no mcp_needs_auth on kernelEvents")
		}
		if ev == "mcp_needs_auth "+st.ID {
			break
		}
	}
	if st.AuthURL == nil || !strings.HasPrefix(*st.AuthURL, as.issuer+"/authorize?") || len(st.Tools) != 0 {
		t.Fatalf("NEEDS_AUTH server: %+v", st)
	}
	for _, want := range []string{"code_challenge_method=S256", "resource=", "redirect_uri=", "state="} {
		if !strings.Contains(*st.AuthURL, want) {
			t.Fatalf("authUrl lacks %s: %s", want, *st.AuthURL)
		}
	}
	if s := as.stats(t); s.Registrations < 1 {
		t.Fatalf("no dynamic client registration: %d", s.Registrations)
	}
	if !strings.Contains(k.Logs(), "mcp server needs a sign-in") {
		t.Fatalf("no log line for NEEDS_AUTH:\n%s", k.Logs())
	}

	// foya mcp login prints the URL, gives it to xdg-open (here a script
	// that records its arguments and environment) and waits; the "browser"
	// follows it.
	bin := t.TempDir()
	opened := filepath.Join(bin, "opened")
	script := "#!/bin/sh\nfor a in \"$@\"; do printf 'arg:%s\\n' \"$a\" >> " + opened + "; done\nenv >> " + opened + "\n"
	if err := os.WriteFile(filepath.Join(bin, "xdg-open"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	login := foyaCmd(t, "", "mcp", "login", "docs", "--addr", k.addr, "--wait", "60s", "--open")
	login.Env = append(login.Env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	stdout, err := login.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	login.Stderr = &stderr
	if err := login.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	var printed, authURL string
	for sc.Scan() {
		printed += sc.Text() + "\n"
		if strings.HasPrefix(sc.Text(), "http") {
			authURL = sc.Text()
			break
		}
	}
	if authURL == "" {
		t.Fatalf("mcp login printed no URL:\n%s\n%s", printed, stderr.String())
	}
	var rec []byte
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if rec, _ = os.ReadFile(opened); bytes.Contains(rec, []byte("PATH=")) {
			break
		}
	}
	if strings.Count(string(rec), "arg:") != 1 || !strings.Contains(string(rec), "arg:"+authURL+"\n") || strings.Contains(string(rec), "FOYA_") {
		t.Fatalf("xdg-open got (want the URL as its only argument, no FOYA_ variable):\n%s", rec)
	}
	code, page := followAuthURL(t, authURL)
	// The access token was issued before the callback page came back: it
	// has expired 4 s after this at the latest.
	issued := time.Now()
	if code != 200 || !strings.Contains(page, "Signed in") || !strings.Contains(page, "docs") {
		t.Fatalf("callback page %d:\n%s", code, page)
	}
	for sc.Scan() {
		printed += sc.Text() + "\n"
	}
	if err := login.Wait(); err != nil || !strings.Contains(printed, "READY") {
		t.Fatalf("mcp login: %v\n%s\n%s", err, printed, stderr.String())
	}
	o.all = append(o.all, printed, stderr.String())
	// The state was single use: the same redirect again is refused.
	if code, page := followAuthURL(t, authURL); code != 400 || !strings.Contains(page, "Sign-in failed") {
		t.Fatalf("second use of the callback: %d %s", code, page)
	}
	s := as.stats(t)
	if s.CodeExchanges != 1 || len(s.Resources) == 0 || s.Resources[0] != srv.url {
		t.Fatalf("code exchange with the resource indicator: %d exchanges, resources %v", s.CodeExchanges, s.Resources)
	}
	st, raw = waitMCPStatus(t, k, "docs", "READY")
	answers = append(answers, raw)
	if len(st.Tools) == 0 || st.AuthURL != nil {
		t.Fatalf("READY server: %+v", st)
	}

	// The tool works.
	callEcho := func(word string) {
		t.Helper()
		fake.Enqueue(toolCallResponse("call_"+word, "mcp__docs__echo", `{"text":"`+word+`"}`), openaitest.TextStream("gpt-t", "Done."))
		o.mustRun(t, "", "exec", "--addr", k.addr, "--no-project", "--approval-mode", "bypass", "echo "+word)
		for _, req := range fake.Requests() {
			if bytes.Contains(req.Body, []byte("echo: "+word)) {
				return
			}
		}
		t.Fatalf("the model never saw the echo of %s:\n%s", word, k.Logs())
	}
	callEcho("first")
	answers = append(answers, eventText())

	// The access token expires (4s); the next call refreshes it first.
	time.Sleep(time.Until(issued.Add(4 * time.Second)))
	callEcho("second")
	issued = time.Now() // the refreshed token
	if s := as.stats(t); s.Refreshes < 1 || s.RefusedRefreshes != 0 {
		t.Fatalf("no refresh before the expired token was used: %d refreshes, %d refused", s.Refreshes, s.RefusedRefreshes)
	}

	// A restart: the sealed grant is read back, the expired token refreshed.
	k.stop(t)
	time.Sleep(time.Until(issued.Add(4 * time.Second)))
	before := as.stats(t).Refreshes
	k = startKernel(t, dir)
	st, raw = waitMCPStatus(t, k, "docs", "READY")
	answers = append(answers, raw)
	if s := as.stats(t); s.Refreshes <= before || s.RefusedRefreshes != 0 {
		t.Fatalf("no refresh after the restart: %d refreshes (before %d), %d refused", s.Refreshes, before, s.RefusedRefreshes)
	}
	callEcho("third")

	// Logout revokes (RFC 7009) and forgets: the server needs a sign-in again.
	r = o.mustRun(t, "", "mcp", "logout", "docs", "--addr", k.addr)
	if !strings.Contains(r.stdout, "signed out") {
		t.Fatalf("mcp logout: %s", r.stdout)
	}
	if s := as.stats(t); s.Revocations < 1 {
		t.Fatalf("logout revoked nothing: %d revocations", s.Revocations)
	}
	st, raw = waitMCPStatus(t, k, "docs", "NEEDS_AUTH")
	answers = append(answers, raw)
	r = o.mustRun(t, "", "mcp", "list", "--addr", k.addr, "--json")

	// Sign in again (GraphQL this time), then the authorization server
	// revokes everything: the next refresh fails, the server is NEEDS_AUTH
	// with the reason, and its tools leave the model's requests.
	var again struct {
		LoginMcpServer string `json:"loginMcpServer"`
	}
	k.gql(t, `mutation($id: ID!) { loginMcpServer(id: $id) }`, map[string]any{"id": st.ID}, &again)
	if code, page := followAuthURL(t, again.LoginMcpServer); code != 200 || !strings.Contains(page, "Signed in") {
		t.Fatalf("second sign-in: %d %s", code, page)
	}
	issued = time.Now()
	waitMCPStatus(t, k, "docs", "READY")
	for _, tok := range as.stats(t).Issued {
		resp, err := plainHTTP().PostForm(as.issuer+"/revoke", map[string][]string{"token": {tok}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	time.Sleep(time.Until(issued.Add(4 * time.Second)))
	fake.Enqueue(toolCallResponse("call_late", "mcp__docs__echo", `{"text":"late"}`), openaitest.TextStream("gpt-t", "Done."))
	sent := len(fake.Requests())
	o.mustRun(t, "", "exec", "--addr", k.addr, "--no-project", "--approval-mode", "bypass", "echo late")
	// That session's title request (after its turn) must not take the
	// response scripted below for the next turn.
	waitTitleRequest(t, fake, sent)
	st, raw = waitMCPStatus(t, k, "docs", "NEEDS_AUTH")
	answers = append(answers, raw)
	if st.Error == nil || !strings.Contains(*st.Error, "token refresh failed") || st.AuthURL == nil {
		t.Fatalf("after a failed refresh: %+v", st)
	}
	fake.Enqueue(openaitest.TextStream("gpt-t", "No tools."))
	o.mustRun(t, "", "exec", "--addr", k.addr, "--no-project", "--approval-mode", "bypass", "anything")
	reqs := fake.Requests()
	last := reqs[len(reqs)-1].Body
	for i := len(reqs) - 1; i >= 0 && bytes.Contains(last, []byte("Write a title")); i-- {
		last = reqs[i].Body
	}
	if bytes.Contains(last, []byte("mcp__docs__echo")) || !bytes.Contains(last, []byte("anything")) {
		t.Fatalf("the model still gets the tools of a server that needs a sign-in:\n%.400s", last)
	}

	// No token in clear anywhere.
	k.stop(t)
	var files []string
	for _, name := range []string{"foya.db", "foya.db-wal", "mcp.json"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
			files = append(files, string(b))
		}
	}
	db, err := storage.Open(context.Background(), filepath.Join(dir, "foya.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	text, err := db.AllText(context.Background())
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	haystack := strings.Join(append(append(append(files, text, k.Logs()), o.all...), answers...), "\n")
	tokens := append(as.stats(t).Issued, srv.tokens()...)
	if len(tokens) < 4 {
		t.Fatalf("too few tokens to check: %d", len(tokens))
	}
	for _, tok := range tokens {
		if len(tok) >= 16 && strings.Contains(haystack, tok) {
			t.Fatalf("a token shows in clear (…%s)", tok[len(tok)-8:])
		}
	}
	var servers []map[string]any
	_ = json.Unmarshal([]byte(r.stdout), &servers)
	if len(servers) != 1 || servers[0]["status"] != "NEEDS_AUTH" || servers[0]["authUrl"] == nil {
		t.Fatalf("mcp list after logout: %s", r.stdout)
	}
}

// Step-up: a tool the server guards with a scope the sign-in did not grant
// answers 403 with an insufficient_scope challenge; the kernel puts the
// server in NEEDS_AUTH with a new sign-in that asks for the granted scopes
// and the new one, and once a browser follows it the same tool works. The
// authorization server is npm oauth2-mock-server, which grants the scope
// asked at /authorize.
func TestMCPOAuthScopeStepUp(t *testing.T) {
	t.Parallel()
	as := startOAuthAS(t, 3600)
	srv := startScopedMCP(t, as, map[string]string{"note": "notes:write"})
	fake := openaitest.New(t)
	k := startKernel(t, t.TempDir())
	var o outputs
	o.mustRun(t, "", "mcp", "add", "docs", "--addr", k.addr, "--url", srv.url, "--wait", "0")
	st, _ := waitMCPStatus(t, k, "docs", "NEEDS_AUTH")
	if st.AuthURL == nil || strings.Contains(*st.AuthURL, "notes") {
		t.Fatalf("first sign-in: %+v", st)
	}
	if code, page := followAuthURL(t, *st.AuthURL); code != 200 {
		t.Fatalf("callback: %d %.300s", code, page)
	}
	waitMCPStatus(t, k, "docs", "READY")
	sid := k.chatSession(t, fake.BaseURL())

	msgs := k.runTools(t, fake, sid, toolCall("n1", "mcp__docs__note", map[string]any{"text": "first"}))
	if !msgs[0].IsError {
		t.Fatalf("a call without the scope: %s", msgs[0].Text)
	}
	st, _ = waitMCPStatus(t, k, "docs", "NEEDS_AUTH")
	if st.AuthURL == nil || !strings.Contains(*st.AuthURL, "scope=notes%3Awrite") || st.Error == nil || !strings.Contains(*st.Error, `"notes:write"`) {
		t.Fatalf("step-up: %+v", st)
	}
	if code, page := followAuthURL(t, *st.AuthURL); code != 200 {
		t.Fatalf("callback: %d %.300s", code, page)
	}
	waitMCPStatus(t, k, "docs", "READY")
	msgs = k.runTools(t, fake, sid, toolCall("n2", "mcp__docs__note", map[string]any{"text": "second"}))
	if msgs[0].IsError || msgs[0].Text != "noted: second" {
		t.Fatalf("the call after the step-up: %+v", msgs[0])
	}
}
