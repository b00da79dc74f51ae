package catalogfile

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/internal/atomicfile"
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
	fileStore
}

var _ core.MCPStore = (*MCPStore)(nil)

// NewMCP returns the MCP store of dir, creating the directory with mode 0700.
func NewMCP(dir string) (*MCPStore, error) {
	s := &MCPStore{}
	if err := s.open(dir, "mcp file store"); err != nil {
		return nil, err
	}
	return s, nil
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
	// OAuthClientID and OAuthClientSecret: a client registered by hand
	// (the secret is a secret like header values).
	OAuthClientID     string `json:"oauthClientId,omitempty"`
	OAuthClientSecret string `json:"oauthClientSecret,omitempty"`
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
	atomicfile.RemoveStale(s.dir, MCPFileName, MCPBackupName)
	raw, found, err := readStoreFile(s.Path())
	if !found || err != nil {
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
			OAuthClientID: r.OAuthClientID, OAuthClientSecret: r.OAuthClientSecret,
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
			OAuthClientID: c.OAuthClientID, OAuthClientSecret: c.OAuthClientSecret,
		})
	}
	next, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("marshal mcp servers: %w", err)
	}
	next = append(next, '\n')
	return replaceFile(s.dir, MCPFileName, MCPBackupName, next, s.rename, func(cur []byte) ([]byte, error) {
		if _, err := s.parse(cur); err != nil {
			return nil, fmt.Errorf("refusing to overwrite: %w", err)
		}
		return cur, nil
	})
}

func (s *MCPStore) parse(raw []byte) (mcpFileV1, error) {
	return parseFile(raw, func(f *mcpFileV1) int { return f.Version }, "MCP server file", s.Path(), filepath.Join(s.dir, MCPBackupName))
}
