package daemon

import (
	"context"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/foya-dev/foya/cluster"
	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/session"
	"github.com/foya-dev/foya/storage"

	"github.com/foya-dev/foya/internal/cmdutil"
)

// openCluster joins the kernels sharing a PostgreSQL database (nil on
// SQLite: this kernel is alone).
func openCluster(ctx context.Context, database string, log *slog.Logger) (*cluster.Node, error) {
	if database == "" {
		return nil, nil
	}
	return cluster.Open(ctx, cluster.Config{DatabaseURL: database, Logger: log})
}

// checkAdvertiseURL validates --advertise-url.
func checkAdvertiseURL(v string) error {
	if v == "" {
		return nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return cmdutil.Usagef("--advertise-url %q: give the base URL other kernels reach this one at, e.g. http://10.0.0.5:4777", v)
	}
	return nil
}

// advertiseURL is --advertise-url, else the listen address (the host name
// when listening on every address).
func advertiseURL(flagValue string, ln net.Listener, tls bool) string {
	if flagValue != "" {
		return flagValue
	}
	scheme := "http"
	if tls {
		scheme = "https"
	}
	host := ln.Addr().String()
	if a, ok := ln.Addr().(*net.TCPAddr); ok && a.IP.IsUnspecified() {
		name, err := os.Hostname()
		if err != nil {
			name = "localhost"
		}
		host = net.JoinHostPort(name, strconv.Itoa(a.Port))
	}
	return scheme + "://" + host
}

// startCluster makes the node work: relay, heartbeat, take-over. A remote
// catalog change reloads this node's catalog.
func (k *kernel) startCluster(ctx context.Context, url string, log *slog.Logger) error {
	if k.node == nil {
		k.nodes = soloNode{url: url, started: time.Now().UTC(), svc: k.sessions}
		return nil
	}
	k.nodes = k.node
	return k.node.Start(ctx, k.sessions, url, func(ev core.KernelEvent) {
		if ev.Type != core.KernelCatalogUpdated {
			return
		}
		// Reads sync too; this makes the change visible at once.
		if err := k.catalog.Sync(ctx); err != nil {
			log.Warn("reload the catalog after a change on another node", "err", err)
		}
		if k.mcp != nil {
			if err := k.mcp.Sync(ctx); err != nil {
				log.Warn("reload the MCP servers after a change on another node", "err", err)
			}
		}
	})
}

// soloNode answers the nodes query for a kernel alone on its database.
type soloNode struct {
	url     string
	started time.Time
	svc     *session.Service
}

func (s soloNode) Nodes(ctx context.Context) ([]core.NodeInfo, error) {
	all, err := s.svc.Sessions(ctx, core.SessionFilter{IncludeChildren: true})
	if err != nil {
		return nil, err
	}
	return []core.NodeInfo{{ID: "local", AdvertiseURL: s.url, StartedAt: s.started, LastHeartbeat: time.Now().UTC(), SessionsOwned: len(all)}}, nil
}

// loadClusterKey returns the secret key of --secret-key-file (default
// <data-dir>/secret-key) on a PostgreSQL database, which signs the requests
// between kernels (edge.SignatureHeader); nil on SQLite, where a kernel is
// alone and honours no forwarding header.
func loadClusterKey(c Config, dataDir string) ([]byte, error) {
	if c.Database == "" {
		return nil, nil
	}
	path := c.SecretKeyFile
	if path == "" {
		path = filepath.Join(dataDir, storage.SecretKeyFileName)
	}
	return storage.LoadOrCreateSecretKey(path)
}
