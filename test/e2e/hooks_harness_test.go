//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/providers/openai/openaitest"
)

// writeHook writes an executable script into dir and returns its path.
func writeHook(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/bash\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func (k *kernelProc) setHooks(t *testing.T, doc string) {
	t.Helper()
	var cfg any
	if err := json.Unmarshal([]byte(doc), &cfg); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.SetHooks(context.Background(), k.client(), raw); err != nil {
		t.Fatalf("setHooks: %v", err)
	}
}

func (k *kernelProc) hookEvents(t *testing.T, sid string) (started, finished []map[string]any, system []map[string]any) {
	t.Helper()
	r := k.eventLog(t, sid)
	for _, e := range r.Events {
		var p map[string]any
		_ = json.Unmarshal(e.Payload, &p)
		switch e.Type {
		case "hook_started":
			started = append(started, p)
		case "hook_finished":
			finished = append(finished, p)
		case "message_end":
			if m, _ := p["message"].(map[string]any); m != nil && m["role"] == "system" {
				system = append(system, m)
			}
		}
	}
	return
}

func requestText(r openaitest.Request) string { return string(r.Body) }

// lastTurnRequest is the body of the newest request that is not a title request.
func lastTurnRequest(fake *openaitest.Server) string {
	rs := fake.Requests()
	for i := len(rs) - 1; i >= 0; i-- {
		if b := requestText(rs[i]); !strings.Contains(b, "Write a title") {
			return b
		}
	}
	return ""
}
