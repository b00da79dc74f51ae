package catalogfile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/foya-dev/foya/core"
)

// MCP file names inside the data directory.
const (
	MCPFileName   = "mcp.json"
	MCPBackupName = MCPFileName + ".bak"
)

// MCPStore implements core.MCPStore on mcp.json, with the same guarantees
// as Store: mode 0600 in a 0700 directory, atomic saves, the previous good
// file kept as mcp.json.bak, a corrupt file never overwritten, stale temp
// files removed at Load (env and header values are secrets).
type MCPStore struct {
	dir    string
	mu     sync.Mutex
	rename func(oldpath, newpath string) error
}

var _ core.MCPStore = (*MCPStore)(nil)

// NewMCP returns the MCP store of dir, creating the directory with mode 0700.
func NewMCP(dir string) (*MCPStore, error) {
	if dir == "" {
		return nil, errors.New("mcp file store: data directory is required")
	}
	if err := ensurePrivateDir(dir); err != nil {
		return nil, err
	}
	return &MCPStore{dir: dir, rename: os.Rename}, nil
}

// Path returns the path of mcp.json.
func (s *MCPStore) Path() string { return filepath.Join(s.dir, MCPFileName) }

type mcpFileV1 struct {
	Version int            `json:"version"`
	Servers []mcpServerRow `json:"servers"`
}

type mcpKV struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

type mcpServerRow struct {
	ID             string   `json:"id"`
	Name           string   `json:"name"`
	Transport      string   `json:"transport"`
	Command        string   `json:"command,omitempty"`
	Args           []string `json:"args,omitempty"`
	Env            []mcpKV  `json:"env,omitempty"`
	URL            string   `json:"url,omitempty"`
	Headers        []mcpKV  `json:"headers,omitempty"`
	Enabled        bool     `json:"enabled"`
	TimeoutSeconds int      `json:"timeoutSeconds,omitempty"`
}

func kvsToRows(kvs []core.KeyValue) []mcpKV {
	var out []mcpKV
	for _, kv := range kvs {
		out = append(out, mcpKV(kv))
	}
	return out
}

func rowsToKVs(rows []mcpKV) []core.KeyValue {
	var out []core.KeyValue
	for _, r := range rows {
		out = append(out, core.KeyValue(r))
	}
	return out
}

// Load reads the servers; a missing file is none.
func (s *MCPStore) Load(ctx context.Context) ([]core.MCPServerConfig, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, name := range []string{MCPFileName, MCPBackupName} {
		matches, _ := filepath.Glob(filepath.Join(s.dir, name+tempPattern))
		for _, m := range matches {
			_ = os.Remove(m)
		}
	}
	raw, err := os.ReadFile(s.Path())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", s.Path(), err)
	}
	if err := tightenFile(s.Path()); err != nil {
		return nil, err
	}
	f, err := s.parse(raw)
	if err != nil {
		return nil, err
	}
	out := make([]core.MCPServerConfig, 0, len(f.Servers))
	for _, r := range f.Servers {
		out = append(out, core.MCPServerConfig{
			ID: r.ID, Name: r.Name, Transport: core.MCPTransport(r.Transport), Command: r.Command, Args: r.Args,
			Env: rowsToKVs(r.Env), URL: r.URL, Headers: rowsToKVs(r.Headers), Enabled: r.Enabled, TimeoutSeconds: r.TimeoutSeconds,
		})
	}
	return out, nil
}

// Save replaces the servers atomically, keeping the previous good file as
// mcp.json.bak.
func (s *MCPStore) Save(ctx context.Context, servers []core.MCPServerConfig) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := ensurePrivateDir(s.dir); err != nil {
		return err
	}
	f := mcpFileV1{Version: formatVersion, Servers: make([]mcpServerRow, 0, len(servers))}
	for _, c := range servers {
		f.Servers = append(f.Servers, mcpServerRow{
			ID: c.ID, Name: c.Name, Transport: string(c.Transport), Command: c.Command, Args: c.Args,
			Env: kvsToRows(c.Env), URL: c.URL, Headers: kvsToRows(c.Headers), Enabled: c.Enabled, TimeoutSeconds: c.TimeoutSeconds,
		})
	}
	next, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("marshal mcp servers: %w", err)
	}
	next = append(next, '\n')
	cur, err := os.ReadFile(s.Path())
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("read %s: %w", s.Path(), err)
	default:
		if _, err := s.parse(cur); err != nil {
			return fmt.Errorf("refusing to overwrite: %w", err)
		}
		if err := writeFileAtomic(s.dir, MCPBackupName, cur, s.rename); err != nil {
			return fmt.Errorf("back up %s: %w", s.Path(), err)
		}
	}
	if err := writeFileAtomic(s.dir, MCPFileName, next, s.rename); err != nil {
		return fmt.Errorf("write %s: %w", s.Path(), err)
	}
	return nil
}

func (s *MCPStore) parse(raw []byte) (mcpFileV1, error) {
	var f mcpFileV1
	err := json.Unmarshal(raw, &f)
	if err == nil && f.Version > formatVersion {
		err = fmt.Errorf("format version %d is newer than this kernel understands (%d)", f.Version, formatVersion)
	}
	if err != nil {
		return mcpFileV1{}, &core.Error{
			Code: core.CodeUnavailable,
			Message: fmt.Sprintf("MCP server file %s is corrupt (%s); fix or remove it (the last good copy, if any, is %s)",
				s.Path(), err, filepath.Join(s.dir, MCPBackupName)),
			Err: err,
		}
	}
	return f, nil
}
