package host

import (
	"context"
	"log/slog"
	"slices"
	"strings"

	"github.com/foya-dev/foya/core"
	foyav1 "github.com/foya-dev/foya/plugins/proto/foya/v1"
	"github.com/foya-dev/foya/plugins/sdk"
)

// Description is what a built-in plugin serves, known without starting it:
// the kernel compiles the same code it runs as the plugin, so it can ask
// that code in process. A built-in with a Description is not started by
// Start: it is listed healthy without a pid and starts at its first call
// (a provider when the kernel looks its kind up for a turn, a models
// listing or a capability check; the tool plugin at its first tool call),
// or when the `plugins` query asks what only the running plugin knows (see
// Manager.DescribePlugins).
type Description struct {
	// Provider is what its provider serves (Describe of the provider);
	// nil when it serves none.
	Provider *sdk.ProviderInfo
	// Tools is its tool set (nil when it serves none) without the sandbox
	// fields: how tool processes are confined is probed by the running
	// plugin, inside its masked namespaces.
	Tools *sdk.ToolSetInfo
}

// registerDescribed registers a built-in from its Description without
// starting it: it counts as stopped while unused (see process.stopped), so
// the first call starts it and a provider lookup warms it.
func (m *Manager) registerDescribed(mp *managed, d Description) {
	mp.proc.mu.Lock()
	mp.proc.parked = true
	mp.proc.mu.Unlock()
	var kinds []string
	var prov *providerAdapter
	var tools *toolRunner
	if pi := d.Provider; pi != nil {
		info := &foyav1.ProviderInfo{Kind: pi.Kind, Version: pi.Version}
		for _, c := range pi.Capabilities {
			info.Capabilities = append(info.Capabilities, string(c))
		}
		// The same build as the kernel: it speaks the SDK's protocol.
		prov = newProviderAdapter(mp.info.Name, mp.proc, info, sdk.ProtocolVersion)
		kinds = append(kinds, "provider")
		mp.info.ProviderKind, mp.info.Version, mp.info.Capabilities = info.GetKind(), info.GetVersion(), info.GetCapabilities()
	}
	if ti := d.Tools; ti != nil {
		tools = &toolRunner{plugin: mp.info.Name, src: mp.proc, known: true, described: m.toolsDescribed(mp)}
		kinds = append(kinds, "tool")
		if mp.info.Version == "" {
			mp.info.Version = ti.Version
		}
		for _, t := range ti.Tools {
			mp.info.Tools = append(mp.info.Tools, t.Name)
			tools.listed = append(tools.listed, core.ToolInfo{Name: t.Name, Description: t.Description, Schema: t.Schema, ReadOnly: t.ReadOnly})
		}
		mp.describeTools = true
	}
	mp.info.Kind = strings.Join(kinds, "+")
	m.log.Debug("plugin registered; starts at its first call", "plugin", mp.info.Name, "kind", mp.info.Kind, "provider_kind", mp.info.ProviderKind)
	m.add(mp, prov, tools)
}

// toolsDescribed returns what records a running tool plugin's own
// description of mp (its sandbox), once per kernel: the first description
// of a built-in registered from its Description.
func (m *Manager) toolsDescribed(mp *managed) func(*foyav1.ToolSetInfo) {
	return func(ti *foyav1.ToolSetInfo) {
		m.mu.Lock()
		if !mp.describeTools {
			m.mu.Unlock()
			return
		}
		mp.describeTools = false
		mp.info.Sandbox, mp.info.SandboxDetail = ti.GetSandbox(), ti.GetSandboxDetail()
		if mp.info.Sandbox == "" {
			mp.info.Sandbox, mp.info.SandboxDetail = "none", "the plugin does not say how it confines its tools"
		}
		sb, detail := mp.info.Sandbox, mp.info.SandboxDetail
		m.mu.Unlock()
		logSandbox(m.log.With("plugin", mp.info.Name), sb, detail)
	}
}

func logSandbox(log *slog.Logger, sb, detail string) {
	if sb == "none" {
		log.Warn("tool processes of this plugin are not sandboxed", "detail", detail)
	} else {
		log.Info("tool sandbox", "sandbox", sb, "detail", detail)
	}
}

// DescribePlugins is Plugins after asking each built-in registered from its
// Description, and not yet described by a running process, what only the
// running plugin knows (the tool plugin's sandbox): that starts it (it
// stops again after the idle stop, when one is set). The `plugins` query
// calls it when it asks for those fields.
func (m *Manager) DescribePlugins(ctx context.Context) []PluginInfo {
	m.mu.Lock()
	var todo []*toolRunner
	for _, mp := range m.plugins {
		if mp.describeTools {
			if r := m.tools[mp.info.Name]; r != nil {
				todo = append(todo, r)
			}
		}
	}
	m.mu.Unlock()
	for _, r := range todo {
		if err := r.describeLive(ctx); err != nil {
			m.log.Warn("describe plugin", "plugin", r.plugin, "err", err)
		}
	}
	return m.Plugins()
}

// describeLive asks the running plugin (started if need be) for its tool
// list, and records it and the plugin's own description.
func (r *toolRunner) describeLive(ctx context.Context) error {
	return r.call(ctx, func(c *clients) error {
		info, err := c.tools.Describe(ctx, &foyav1.DescribeRequest{})
		if err != nil {
			return err
		}
		r.record(c, info)
		return nil
	})
}

// record keeps the tool list c's process described.
func (r *toolRunner) record(c *clients, info *foyav1.ToolSetInfo) {
	var out []core.ToolInfo
	for _, t := range info.GetTools() {
		out = append(out, toolInfoFromProto(t))
	}
	r.mu.Lock()
	r.listedBy, r.listed, r.known = c, out, true
	r.mu.Unlock()
	if r.described != nil {
		r.described(info)
	}
}

// listedWhileStopped returns the tool list of the plugin's last process (or
// its Description) while it is stopped: listing tools does not start it.
func (r *toolRunner) listedWhileStopped() ([]core.ToolInfo, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.known && r.src.stopped() {
		return slices.Clone(r.listed), true
	}
	return nil, false
}
