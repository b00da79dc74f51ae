package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/storage"
	"github.com/foya-dev/foya/storage/pgtest"
)

// Two kernels on one PostgreSQL database share an OAuth MCP server: a
// sign-in through one reaches the other (it picks the sealed grant up from
// the database); when the access token has expired and both reconnect at
// the same moment, one refreshes under the row lock and the other uses
// its result, so the rotating refresh token (spent once; the
// authorization server refuses a reuse) is never burnt. No token is in the
// database in plain text.
func TestMCPOAuthTwoKernelsRefreshOnce(t *testing.T) {
	t.Parallel()
	// 8 s tokens: both restarts land well inside one token's life even on
	// a loaded machine (a token in its last third is refreshed).
	as := startOAuthAS(t, 8)
	srv := startProtectedMCP(t, as)
	url := pgtest.NewDatabase(t)
	a := addNode(t, url)
	b := addNode(t, url)

	var created struct {
		CreateMcpServer struct{ ID string } `json:"createMcpServer"`
	}
	a.gql(t, `mutation($u: String!) { createMcpServer(input: {name: "docs", transport: HTTP, url: $u}) { id } }`, map[string]any{"u": srv.url}, &created)
	id := created.CreateMcpServer.ID
	waitMCPStatus(t, a.kernelProc, "docs", "NEEDS_AUTH")
	waitMCPStatus(t, b.kernelProc, "docs", "NEEDS_AUTH")

	var login struct {
		LoginMcpServer string `json:"loginMcpServer"`
	}
	a.gql(t, `mutation($id: ID!) { loginMcpServer(id: $id) }`, map[string]any{"id": id}, &login)
	if code, page := followAuthURL(t, login.LoginMcpServer); code != 200 || !strings.Contains(page, "Signed in") {
		t.Fatalf("callback page %d: %s", code, page)
	}
	issued := time.Now() // the access token was issued before the callback page came back
	waitMCPStatus(t, a.kernelProc, "docs", "READY")
	waitMCPStatus(t, b.kernelProc, "docs", "READY") // the grant, from the database

	time.Sleep(time.Until(issued.Add(8 * time.Second))) // the access token expires
	before := as.stats(t)
	var wg sync.WaitGroup
	for _, k := range []*clusterNode{a, b} {
		wg.Go(func() {
			k.gql(t, `mutation($id: ID!) { restartMcpServer(id: $id) { id } }`, map[string]any{"id": id}, nil)
		})
	}
	wg.Wait()
	waitMCPStatus(t, a.kernelProc, "docs", "READY")
	waitMCPStatus(t, b.kernelProc, "docs", "READY")
	after := as.stats(t)
	if after.RefusedRefreshes != 0 {
		t.Fatalf("a rotated refresh token was used twice: %d refused, %d refreshes", after.RefusedRefreshes, after.Refreshes)
	}
	if n := after.Refreshes - before.Refreshes; n != 1 {
		t.Fatalf("%d refreshes for one expiry on two kernels, want 1 (%d refused)", n, after.RefusedRefreshes)
	}

	db, err := storage.OpenPostgres(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	text, err := db.AllText(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "mcp_oauth") {
		t.Fatal("no mcp_oauth row in the database")
	}
	for _, tok := range append(after.Issued, srv.tokens()...) {
		if strings.Contains(text, tok) || strings.Contains(a.Logs()+b.Logs(), tok) {
			t.Fatalf("a token shows in clear (…%s)", tok[len(tok)-8:])
		}
	}
}

// In a cluster every kernel's client ID metadata document lists its own
// callback first and every other live kernel's after it, so that one
// hosted document serves sign-ins through any of them.
func TestClientMetadataDocumentListsClusterNodes(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	flag := []string{"--mcp-client-metadata-url", "https://foya.example.com/client.json"}
	a := addNodeArgs(t, url, flag)
	b := addNodeArgs(t, url, flag)
	callback := func(k *clusterNode) string { return "http://" + k.addr + "/mcp/oauth/callback" }
	for _, c := range []struct{ self, other *clusterNode }{{a, b}, {b, a}} {
		deadline := time.Now().Add(30 * time.Second)
		for {
			resp, err := plainHTTP().Get("http://" + c.self.addr + core.MCPClientMetadataPath)
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				ClientID     string   `json:"client_id"`
				RedirectURIs []string `json:"redirect_uris"`
			}
			err = json.NewDecoder(resp.Body).Decode(&doc)
			resp.Body.Close()
			if err == nil && len(doc.RedirectURIs) == 2 && doc.RedirectURIs[0] == callback(c.self) && doc.RedirectURIs[1] == callback(c.other) && doc.ClientID == "https://foya.example.com/client.json" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("document of %s: %+v %v", c.self.addr, doc, err)
			}
			time.Sleep(200 * time.Millisecond) // the other node's first heartbeat
		}
	}
}
