// Package hooks runs lifecycle hook commands (docs/hooks.md) under the tool
// sandbox and keeps the kernel-wide hooks document in the data directory.
package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/foya-dev/foya/internal/atomicfile"
)

// FileName is the kernel-wide hooks document in the data directory.
const FileName = "hooks.json"

// Store keeps <data-dir>/hooks.json.
type Store struct{ Dir string }

// LoadHooks implements core.HookStore.
func (s Store) LoadHooks(context.Context) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(s.Dir, FileName))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read hooks document: %w", err)
	}
	return b, nil
}

// SaveHooks implements core.HookStore: an atomic 0600 write.
func (s Store) SaveHooks(_ context.Context, data []byte) error {
	return atomicfile.Write(s.Dir, FileName, data, nil)
}

// TrustFileName records the trusted project hooks files.
const TrustFileName = "hooks-trust.json"

// LoadTrust implements core.HookStore.
func (s Store) LoadTrust(context.Context) (map[string]string, error) {
	b, err := os.ReadFile(filepath.Join(s.Dir, TrustFileName))
	if errors.Is(err, os.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read hook trust: %w", err)
	}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("hook trust file %s is corrupt: %w", filepath.Join(s.Dir, TrustFileName), err)
	}
	return m, nil
}

// SaveTrust implements core.HookStore: an atomic 0600 write.
func (s Store) SaveTrust(_ context.Context, m map[string]string) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(s.Dir, TrustFileName, b, nil)
}
