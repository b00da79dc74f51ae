package storage_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/storage"
	"github.com/foya-dev/foya/storage/pgtest"
)

// RotateSecretKey re-seals every secret of a shared database in one go:
// afterwards everything opens with the new key, nothing with the old, the
// key check follows, and the plain values are nowhere in the database.
func TestRotateSecretKeyPostgres(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ctx := context.Background()
	db, err := storage.OpenPostgres(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	old, next := newSealer(t), newSealer(t)
	if err := db.CheckSecretKey(ctx, old); err != nil {
		t.Fatal(err)
	}
	const apiKey, envValue, header, clientSecret, token = "sk-rotate-api", "env-rotate-value", "Bearer header-rotate", "client-rotate-secret", "access-rotate-token"
	if err := db.CatalogStore(old).Save(ctx, core.CatalogData{Connections: []core.Connection{
		{ID: "conn_a", Name: "a", APIKey: apiKey}, {ID: "conn_b", Name: "b"},
	}}); err != nil {
		t.Fatal(err)
	}
	if err := db.MCPStore(old).Save(ctx, []core.MCPServerConfig{{ID: "mcp_a", Name: "files", Transport: core.MCPHTTP, URL: "https://mcp.example/",
		Env: []core.KeyValue{{Key: "TOKEN", Value: envValue}}, Headers: []core.KeyValue{{Key: "Authorization", Value: header}}, OAuthClientSecret: clientSecret}}); err != nil {
		t.Fatal(err)
	}
	if err := db.MCPAuthStore(old).SaveMCPAuth(ctx, "mcp_a", core.MCPOAuthGrant{ClientID: "c", AccessToken: token}); err != nil {
		t.Fatal(err)
	}

	// A wrong current key changes nothing.
	if _, err := db.RotateSecretKey(ctx, newSealer(t), next); err == nil || !strings.Contains(err.Error(), "--secret-key-file") {
		t.Fatalf("rotation from a wrong key: %v", err)
	}
	n, err := db.RotateSecretKey(ctx, old, next)
	if err != nil || n != 5 {
		t.Fatalf("rotated %d values: %v", n, err)
	}
	if err := db.CheckSecretKey(ctx, next); err != nil {
		t.Fatalf("the new key's check: %v", err)
	}
	if err := db.CheckSecretKey(ctx, old); err == nil {
		t.Fatal("the old key still passes the check")
	}
	data, err := db.CatalogStore(next).Load(ctx)
	if err != nil || len(data.Connections) != 2 || data.Connections[0].APIKey != apiKey || data.Connections[1].APIKey != "" {
		t.Fatalf("connections under the new key: %+v %v", data.Connections, err)
	}
	servers, err := db.MCPStore(next).Load(ctx)
	if err != nil || len(servers) != 1 || servers[0].Env[0].Value != envValue || servers[0].Headers[0].Value != header || servers[0].OAuthClientSecret != clientSecret || servers[0].URL != "https://mcp.example/" {
		t.Fatalf("MCP servers under the new key: %+v %v", servers, err)
	}
	g, ok, err := db.MCPAuthStore(next).LoadMCPAuth(ctx, "mcp_a")
	if err != nil || !ok || g.AccessToken != token {
		t.Fatalf("grant under the new key: %+v %v %v", g, ok, err)
	}
	if _, err := db.CatalogStore(old).Load(ctx); err == nil {
		t.Fatal("the old key still opens the API keys")
	}
	text, err := db.AllText(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{apiKey, envValue, header, clientSecret, token} {
		if strings.Contains(text, secret) {
			t.Fatalf("%q is in the database in plain text", secret)
		}
	}
}

// On SQLite the grants and the check are rotated (the catalog is in files);
// a database no kernel used has nothing to rotate.
func TestRotateSecretKeySQLite(t *testing.T) {
	ctx := context.Background()
	db, err := storage.Open(ctx, filepath.Join(t.TempDir(), "foya.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	old, next := newSealer(t), newSealer(t)
	if _, err := db.RotateSecretKey(ctx, old, next); err == nil || !strings.Contains(err.Error(), "nothing to rotate") {
		t.Fatalf("unused database: %v", err)
	}
	if err := db.CheckSecretKey(ctx, old); err != nil {
		t.Fatal(err)
	}
	if err := db.MCPAuthStore(old).SaveMCPAuth(ctx, "mcp_a", core.MCPOAuthGrant{ClientID: "c", AccessToken: "tok"}); err != nil {
		t.Fatal(err)
	}
	if n, err := db.RotateSecretKey(ctx, old, next); err != nil || n != 1 {
		t.Fatalf("rotated %d: %v", n, err)
	}
	if g, ok, err := db.MCPAuthStore(next).LoadMCPAuth(ctx, "mcp_a"); err != nil || !ok || g.AccessToken != "tok" {
		t.Fatalf("grant: %+v %v %v", g, ok, err)
	}
}
