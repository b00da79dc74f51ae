package storage_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/storage"
	"github.com/foya-dev/foya/storage/pgtest"
)

// MCP OAuth grants are sealed whole: no token in any column in clear; an
// update that fails writes nothing; delete forgets.
func TestMCPAuthStoreSealsAndUpdates(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		db, err := storage.Open(context.Background(), filepath.Join(t.TempDir(), "foya.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		checkMCPAuthStore(t, db)
	})
	t.Run("postgres", func(t *testing.T) {
		db, err := storage.OpenPostgres(context.Background(), pgtest.NewDatabase(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		checkMCPAuthStore(t, db)
	})
}

func checkMCPAuthStore(t *testing.T, db *storage.DB) {
	ctx := context.Background()
	key := make([]byte, 32)
	key[0] = 7
	sealer, err := storage.NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	a := db.MCPAuthStore(sealer)
	if _, ok, err := a.LoadMCPAuth(ctx, "mcp_1"); ok || err != nil {
		t.Fatalf("empty store: %v %v", ok, err)
	}
	g := core.MCPOAuthGrant{ClientID: "client-abc", AccessToken: "access-token-secret-1", RefreshToken: "refresh-token-secret-1",
		TokenEndpoint: "https://as.example/token", Expiry: time.Now().Add(time.Hour).Round(0)}
	if err := a.SaveMCPAuth(ctx, "mcp_1", g); err != nil {
		t.Fatal(err)
	}
	text, err := db.AllText(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"access-token-secret-1", "refresh-token-secret-1", "client-abc"} {
		if strings.Contains(text, secret) {
			t.Fatalf("%s is in the database in clear", secret)
		}
	}
	if !strings.Contains(text, "mcp_oauth\tmcp_1\taesgcm1:") {
		t.Fatalf("no sealed row:\n%s", text)
	}
	boom := errors.New("refresh failed")
	if _, err := a.UpdateMCPAuth(ctx, "mcp_1", func(cur core.MCPOAuthGrant, ok bool) (core.MCPOAuthGrant, error) {
		cur.AccessToken = "half-written"
		return cur, boom
	}); !errors.Is(err, boom) {
		t.Fatalf("update error: %v", err)
	}
	got, ok, err := a.LoadMCPAuth(ctx, "mcp_1")
	if err != nil || !ok || got.AccessToken != g.AccessToken || !got.Expiry.Equal(g.Expiry) {
		t.Fatalf("after a failed update: %+v %v %v", got, ok, err)
	}
	if _, err := a.UpdateMCPAuth(ctx, "mcp_1", func(cur core.MCPOAuthGrant, ok bool) (core.MCPOAuthGrant, error) {
		cur.AccessToken, cur.RefreshToken = "access-token-secret-2", "refresh-token-secret-2"
		return cur, nil
	}); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := a.LoadMCPAuth(ctx, "mcp_1"); got.RefreshToken != "refresh-token-secret-2" {
		t.Fatalf("rotated refresh token not stored: %+v", got)
	}
	// Another key cannot open it.
	other, _ := storage.NewSealer(make([]byte, 32))
	if _, _, err := db.MCPAuthStore(other).LoadMCPAuth(ctx, "mcp_1"); err == nil {
		t.Fatal("a grant opened under another key")
	}
	if err := a.DeleteMCPAuth(ctx, "mcp_1"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := a.LoadMCPAuth(ctx, "mcp_1"); ok {
		t.Fatal("deleted grant still there")
	}
}
