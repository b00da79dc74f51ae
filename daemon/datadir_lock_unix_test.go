//go:build unix

package daemon

import (
	"bytes"
	"strings"
	"testing"
)

// A second kernel on a data directory in use is refused.
func TestMainDataDirInUse(t *testing.T) {
	dataDir := t.TempDir()
	m, _ := startMain(t, t.Context(), dataDir)
	defer m.Close()
	m2 := NewMain("test", &bytes.Buffer{}, &bytes.Buffer{})
	if err := m2.ParseFlags([]string{"--addr", "127.0.0.1:0", "--data-dir", dataDir}); err != nil {
		t.Fatal(err)
	}
	err := m2.Run(t.Context())
	m2.Close()
	if err == nil || !strings.Contains(err.Error(), "in use by another foya kernel") {
		t.Fatalf("second kernel: %v", err)
	}
}
