package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The CLI's token: FOYA_TOKEN, else --token-file, else the data dir's file,
// which is sent to loopback addresses only.
func TestClientToken(t *testing.T) {
	data := t.TempDir()
	if err := os.WriteFile(filepath.Join(data, "auth-token"), []byte(strings.Repeat("d", 43)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "tok")
	os.WriteFile(other, []byte(strings.Repeat("f", 43)), 0o600)
	t.Setenv("FOYA_TOKEN", "")
	for _, tc := range []struct{ env, file, addr, want string }{
		{"", "", "127.0.0.1:4777", strings.Repeat("d", 43)},
		{"", "", "https://localhost:4777", strings.Repeat("d", 43)},
		{"", "", "127.0.0.2:1", strings.Repeat("d", 43)},
		{"", "", "192.0.2.1:4777", ""},
		{"", "", "https://foya.example:443", ""},
		{"", other, "192.0.2.1:4777", strings.Repeat("f", 43)},
		{"envtoken", other, "192.0.2.1:4777", "envtoken"},
	} {
		t.Setenv("FOYA_TOKEN", tc.env)
		got, err := clientToken(tc.file, data, tc.addr)
		if err != nil || got != tc.want {
			t.Errorf("%+v: %q %v", tc, got, err)
		}
	}
}
