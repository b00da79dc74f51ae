package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/foya-dev/foya/internal/atomicfile"
	foyav1 "github.com/foya-dev/foya/plugins/proto/foya/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// Third-party plugins start on demand too: what each executable described
// is cached in <DataDir>/plugins/.descriptions.json, keyed by its path,
// size, modification time and inode. A plugin with a matching entry is
// registered from it without starting; one without (new or changed
// executable) is started at Start to describe itself, and its description
// cached. A process started later that describes itself differently
// re-registers the plugin (verifyCached). Descriptions carry no secrets:
// kinds, versions, capabilities, tool names, descriptions and schemas.
const descCacheName = ".descriptions.json"

// liveDescription is what a plugin process said it serves.
type liveDescription struct {
	Protocol int
	Provider *foyav1.ProviderInfo // nil: serves no provider
	Tools    *foyav1.ToolSetInfo  // nil: serves no tools
}

func (d liveDescription) equal(o liveDescription) bool {
	return d.Protocol == o.Protocol && proto.Equal(d.Provider, o.Provider) && proto.Equal(d.Tools, o.Tools)
}

// fetchDescription asks a running plugin what it serves; err is the first
// failure other than an unimplemented service (d holds what answered).
func fetchDescription(ctx context.Context, c *clients) (d liveDescription, err error) {
	d.Protocol = c.protocol
	pi, perr := c.provider.Describe(ctx, &foyav1.DescribeRequest{})
	switch {
	case perr == nil:
		d.Provider = pi
	case status.Code(perr) != codes.Unimplemented:
		err = fmt.Errorf("describe provider: %w", perr)
	}
	ti, terr := c.tools.Describe(ctx, &foyav1.DescribeRequest{})
	switch {
	case terr == nil:
		d.Tools = ti
	case status.Code(terr) != codes.Unimplemented && err == nil:
		err = fmt.Errorf("describe tools: %w", terr)
	}
	return d, err
}

// descKey identifies one version of an executable.
type descKey struct {
	Size    int64  `json:"size"`
	ModTime int64  `json:"mtime_ns"`
	Inode   uint64 `json:"inode,omitempty"`
}

func statKey(path string) (descKey, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return descKey{}, err
	}
	return descKey{Size: fi.Size(), ModTime: fi.ModTime().UnixNano(), Inode: inode(fi)}, nil
}

type descEntry struct {
	descKey
	Protocol int             `json:"protocol"`
	Provider json.RawMessage `json:"provider,omitempty"` // protojson foya.v1.ProviderInfo
	Tools    json.RawMessage `json:"tools,omitempty"`    // protojson foya.v1.ToolSetInfo
}

func (e descEntry) description() (liveDescription, error) {
	d := liveDescription{Protocol: e.Protocol}
	if len(e.Provider) > 0 {
		d.Provider = &foyav1.ProviderInfo{}
		if err := protojson.Unmarshal(e.Provider, d.Provider); err != nil {
			return d, err
		}
	}
	if len(e.Tools) > 0 {
		d.Tools = &foyav1.ToolSetInfo{}
		if err := protojson.Unmarshal(e.Tools, d.Tools); err != nil {
			return d, err
		}
	}
	return d, nil
}

func newDescEntry(k descKey, d liveDescription) (descEntry, error) {
	e := descEntry{descKey: k, Protocol: d.Protocol}
	var err error
	if d.Provider != nil {
		if e.Provider, err = protojson.Marshal(d.Provider); err != nil {
			return e, err
		}
	}
	if d.Tools != nil {
		if e.Tools, err = protojson.Marshal(d.Tools); err != nil {
			return e, err
		}
	}
	return e, nil
}

// descCache is the on-disk cache of third-party plugin descriptions, by
// absolute executable path.
type descCache struct {
	dir     string
	entries map[string]descEntry
	seen    map[string]bool
	dirty   bool
}

func (m *Manager) loadDescCache() *descCache {
	c := &descCache{dir: filepath.Join(m.cfg.DataDir, "plugins"), entries: map[string]descEntry{}, seen: map[string]bool{}}
	raw, err := os.ReadFile(filepath.Join(c.dir, descCacheName))
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			m.log.Warn("read plugin description cache; plugins describe themselves again", "err", err)
		}
		return c
	}
	if err := json.Unmarshal(raw, &c.entries); err != nil {
		m.log.Warn("plugin description cache unreadable; plugins describe themselves again", "err", err)
		c.entries = map[string]descEntry{}
	}
	return c
}

// lookup returns the cached description of path when the executable is
// the one described.
func (c *descCache) lookup(path string) (liveDescription, descKey, bool) {
	abs, _ := filepath.Abs(path)
	c.seen[abs] = true
	k, err := statKey(path)
	if err != nil {
		return liveDescription{}, k, false
	}
	e, ok := c.entries[abs]
	if !ok || e.descKey != k {
		return liveDescription{}, k, false
	}
	d, err := e.description()
	return d, k, err == nil
}

func (c *descCache) put(path string, k descKey, d liveDescription) error {
	abs, _ := filepath.Abs(path)
	e, err := newDescEntry(k, d)
	if err != nil {
		return err
	}
	c.entries[abs], c.dirty = e, true
	return nil
}

// save drops the entries of executables gone and writes the cache when it
// changed.
func (c *descCache) save() error {
	for p := range c.entries {
		if !c.seen[p] {
			delete(c.entries, p)
			c.dirty = true
		}
	}
	if !c.dirty {
		return nil
	}
	raw, err := json.MarshalIndent(c.entries, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return fmt.Errorf("create plugin dir: %w", err)
	}
	atomicfile.RemoveStale(c.dir, descCacheName)
	if err := atomicfile.Write(c.dir, descCacheName, raw, nil); err != nil {
		return fmt.Errorf("write plugin description cache: %w", err)
	}
	c.dirty = false
	return nil
}

// startThirdParty registers a third-party plugin from its cached
// description without starting it, or starts it to describe itself and
// caches what it said. The process that described itself keeps running
// (third-party plugins are not stopped for idleness).
func (m *Manager) startThirdParty(ctx context.Context, mp *managed, cache *descCache) {
	d, key, ok := cache.lookup(mp.info.Path)
	if ok {
		mp.proc.mu.Lock()
		mp.proc.parked = true // healthy without a pid; the first call starts it
		mp.proc.mu.Unlock()
		mp.live = d
		m.verifyStarts(mp)
		prov, tools := m.fromDescription(mp, d, nil)
		m.log.Info("plugin registered from its cached description; starts at its first call", "plugin", mp.info.Name, "kind", mp.info.Kind, "provider_kind", mp.info.ProviderKind)
		m.add(mp, prov, tools)
	} else {
		d, ok = m.describe(ctx, mp)
		mp.proc.used.Store(false) // describing is not a use
		if !ok {
			return
		}
		m.mu.Lock()
		mp.live = d
		m.mu.Unlock()
		if err := cache.put(mp.info.Path, key, d); err != nil {
			m.log.Warn("cache plugin description", "plugin", mp.info.Name, "err", err)
		}
		m.verifyStarts(mp)
	}
}

// verifyStarts makes each process of mp started from now on check that it
// describes itself as registered.
func (m *Manager) verifyStarts(mp *managed) {
	mp.proc.mu.Lock()
	mp.proc.onStart = func(c *clients) { go m.verifyStarted(mp, c) }
	mp.proc.mu.Unlock()
}

// verifyStarted asks a newly started third-party process what it serves;
// when that differs from what the plugin is registered with (the cached
// description went stale), the plugin is registered again and the cache
// updated.
func (m *Manager) verifyStarted(mp *managed, c *clients) {
	ctx, cancel := context.WithTimeout(context.Background(), m.cfg.StartTimeout)
	defer cancel()
	d, err := fetchDescription(ctx, c)
	if err != nil {
		m.log.Warn("describe started plugin", "plugin", mp.info.Name, "err", err)
		return
	}
	m.mu.Lock()
	if mp.live.equal(d) {
		m.mu.Unlock()
		return
	}
	name := mp.info.Name
	if p := m.providers[mp.info.ProviderKind]; p != nil && p.plugin == name {
		delete(m.providers, mp.info.ProviderKind)
	}
	delete(m.tools, name)
	prov, tools := m.fromDescription(mp, d, c)
	mp.live = d
	if prov != nil {
		if _, dup := m.providers[prov.kind]; dup {
			m.log.Warn("provider kind served twice; keeping the first", "plugin", name, "provider_kind", prov.kind)
		} else {
			m.providers[prov.kind] = prov
		}
	}
	if tools != nil {
		m.tools[name] = tools
	}
	kind, pkind := mp.info.Kind, mp.info.ProviderKind
	m.mu.Unlock()
	m.log.Info("plugin describes itself differently from its cached description; registered again", "plugin", name, "kind", kind, "provider_kind", pkind)
	m.cacheMu.Lock()
	defer m.cacheMu.Unlock()
	cache := m.loadDescCache()
	for p := range cache.entries {
		cache.seen[p] = true
	}
	key, err := statKey(mp.info.Path)
	if err == nil {
		err = cache.put(mp.info.Path, key, d)
	}
	if err == nil {
		err = cache.save()
	}
	if err != nil {
		m.log.Warn("cache plugin description", "plugin", name, "err", err)
	}
}
