package catalogfile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/foya-dev/foya/core"
)

func sample(key string) core.CatalogData {
	win := int64(128000)
	return core.CatalogData{
		Connections: []core.Connection{{
			ID: "conn_a", Name: "OpenAI", Type: core.ConnLanguage, ProviderKind: "openai",
			BaseURL: "https://api.openai.com/v1", AuthKind: core.AuthAPIKey, APIKey: key,
			Models: []core.Model{{ID: "gpt-x", Capabilities: core.Capabilities{ContextWindow: &win}}},
		}},
		Defaults: core.DefaultModels{Language: &core.ModelRef{ConnectionID: "conn_a", Model: "gpt-x"}},
	}
}

func newStore(t *testing.T) (*Store, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	s, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s, dir
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Mode().Perm()
}

func TestLoadMissingFileIsEmpty(t *testing.T) {
	s, _ := newStore(t)
	got, err := s.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Connections) != 0 || got.Defaults.Language != nil {
		t.Fatalf("want empty catalog, got %v", got)
	}
}

func TestSaveLoadRoundTripKeepsKey(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	want := sample("sk-secret")
	if err := s.Save(ctx, want); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip:\n got %v\nwant %v", got, want)
	}
	// A fresh store on the same directory reads the same data (restart).
	s2, err := New(filepath.Dir(s.Path()))
	if err != nil {
		t.Fatal(err)
	}
	got2, err := s2.Load(ctx)
	if err != nil || !reflect.DeepEqual(got2, want) {
		t.Fatalf("reload after restart: err=%v equal=%v", err, reflect.DeepEqual(got2, want))
	}
}

func TestPermissions(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, dir string)
	}{
		{"new directory", func(t *testing.T, dir string) {}},
		{"loose existing directory", func(t *testing.T, dir string) {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			tt.prepare(t, dir)
			s, err := New(dir)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			for range 2 { // the second save also writes the backup
				if err := s.Save(ctx, sample("sk-secret")); err != nil {
					t.Fatal(err)
				}
			}
			if m := mode(t, dir); m != 0o700 {
				t.Errorf("dir mode = %o, want 700", m)
			}
			if m := mode(t, s.Path()); m != 0o600 {
				t.Errorf("file mode = %o, want 600", m)
			}
			if m := mode(t, s.BackupPath()); m != 0o600 {
				t.Errorf("backup mode = %o, want 600", m)
			}
		})
	}
}

func TestLoadTightensLooseFile(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	if err := s.Save(ctx, sample("k")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(s.Path(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if m := mode(t, s.Path()); m != 0o600 {
		t.Fatalf("file mode = %o, want 600", m)
	}
}

func TestBackupKeepsLastGoodFile(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	if err := s.Save(ctx, sample("first")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.BackupPath()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("no backup expected after the first save, stat err = %v", err)
	}
	before, _ := os.ReadFile(s.Path())
	renamed := sample("first")
	renamed.Connections[0].Name = "renamed"
	if err := s.Save(ctx, renamed); err != nil {
		t.Fatal(err)
	}
	bak, err := os.ReadFile(s.BackupPath())
	if err != nil {
		t.Fatal(err)
	}
	if string(bak) != string(before) {
		t.Fatalf("backup is not the previous file:\n%s", bak)
	}
	got, _ := s.Load(ctx)
	if got.Connections[0].Name != "renamed" {
		t.Fatal("current file does not hold the new data")
	}
}

// The backup never keeps a key that was replaced or whose connection was
// deleted; a backup left by an older kernel is cleaned at Load.
func TestBackupDropsReplacedAndDeletedKeys(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	two := sample("sk-old-key")
	two.Connections = append(two.Connections, core.Connection{
		ID: "conn_b", Name: "Other", Type: core.ConnLanguage, ProviderKind: "openai",
		BaseURL: "https://other.example/v1", AuthKind: core.AuthAPIKey, APIKey: "sk-b-key",
	})
	for _, step := range []func(d *core.CatalogData){
		func(d *core.CatalogData) {},
		func(d *core.CatalogData) { d.Connections[0].APIKey = "sk-new-key" },
		func(d *core.CatalogData) { d.Connections = d.Connections[:1] },
	} {
		step(&two)
		if err := s.Save(ctx, two); err != nil {
			t.Fatal(err)
		}
	}
	bak, err := os.ReadFile(s.BackupPath())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(bak), "sk-old-key") || strings.Contains(string(bak), "sk-b-key") || !strings.Contains(string(bak), "conn_b") {
		t.Fatalf("backup after replace and delete:\n%s", bak)
	}
	// An old-style backup holding a deleted key.
	legacy := strings.Replace(string(bak), `"id": "conn_b",`, `"id": "conn_b", "apiKey": "sk-b-key",`, 1)
	if legacy == string(bak) {
		t.Fatal("test setup: legacy backup unchanged")
	}
	if err := os.WriteFile(s.BackupPath(), []byte(legacy), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if bak, _ := os.ReadFile(s.BackupPath()); strings.Contains(string(bak), "sk-b-key") {
		t.Fatalf("legacy backup not cleaned:\n%s", bak)
	}
}

func TestCrashBeforeRenameKeepsOldFile(t *testing.T) {
	s, dir := newStore(t)
	ctx := context.Background()
	if err := s.Save(ctx, sample("old")); err != nil {
		t.Fatal(err)
	}
	old, _ := os.ReadFile(s.Path())

	t.Run("failing rename", func(t *testing.T) {
		s.rename = func(oldpath, newpath string) error {
			if strings.HasSuffix(newpath, FileName) {
				return errors.New("simulated crash")
			}
			return os.Rename(oldpath, newpath)
		}
		defer func() { s.rename = os.Rename }()
		if err := s.Save(ctx, sample("new")); err == nil {
			t.Fatal("save with failing rename succeeded")
		}
		now, _ := os.ReadFile(s.Path())
		if string(now) != string(old) {
			t.Fatal("old file changed by a failed save")
		}
		got, err := s.Load(ctx)
		if err != nil || got.Connections[0].APIKey != "old" {
			t.Fatalf("old file unreadable after failed save: %v", err)
		}
		if temps, _ := filepath.Glob(filepath.Join(dir, FileName+".tmp-*")); len(temps) != 0 {
			t.Fatalf("failed save left temp files: %v", temps)
		}
	})

	t.Run("stray temp file from a crash", func(t *testing.T) {
		stray := filepath.Join(dir, FileName+".tmp-123")
		if err := os.WriteFile(stray, []byte(`{"version":1,"connections":[{"id":"half`), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := s.Load(ctx)
		if err != nil || got.Connections[0].APIKey != "old" {
			t.Fatalf("load with stray temp file: %v", err)
		}
		if _, err := os.Stat(stray); !errors.Is(err, os.ErrNotExist) {
			t.Fatal("stray temp file (may hold keys) was not removed")
		}
	})
}

func TestCorruptFile(t *testing.T) {
	tests := []struct {
		name    string
		content string
	}{
		{"truncated", `{"version":1,"connections":[`},
		{"not json", "garbage"},
		{"empty", ""},
		{"wrong types", `{"version":1,"connections":{"id":1}}`},
		{"newer version", `{"version":99,"connections":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := newStore(t)
			ctx := context.Background()
			if err := os.WriteFile(s.Path(), []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := s.Load(ctx)
			if err == nil {
				t.Fatal("load of a corrupt file succeeded")
			}
			if !strings.Contains(err.Error(), s.Path()) || !strings.Contains(core.ErrorMessage(err), "corrupt") {
				t.Fatalf("error does not name the file clearly: %v", err)
			}
			if !errors.Is(err, core.ErrUnavailable) {
				t.Fatalf("error code = %s", core.ErrorCode(err))
			}
			if err := s.Save(ctx, sample("new")); err == nil {
				t.Fatal("save over a corrupt file succeeded")
			}
			now, _ := os.ReadFile(s.Path())
			if string(now) != tt.content {
				t.Fatal("corrupt file was modified")
			}
			if _, err := os.Stat(s.BackupPath()); !errors.Is(err, os.ErrNotExist) {
				t.Fatal("a corrupt file was copied over the backup")
			}
		})
	}
}

func TestSaveHonoursCancelledContext(t *testing.T) {
	s, _ := newStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Save(ctx, sample("k")); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}
