package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foya-dev/foya/storage"
	"github.com/foya-dev/foya/storage/pgtest"
)

// Two kernels with their own data directories run at once on one
// PostgreSQL database (the second reads it from FOYA_DATABASE) and the same
// secret key file: projects, sessions and connections made on one are seen
// by the other; the API key is nowhere in the database in plain text; a
// kernel with another key file refuses to start.
func TestServePostgresTwoKernelsShareOneDatabase(t *testing.T) {
	url := pgtest.NewDatabase(t)
	keyFile := filepath.Join(t.TempDir(), "shared-secret-key")
	proj := t.TempDir()
	a := startKernel(t, t.TempDir(), "--database", url, "--secret-key-file", keyFile)
	t.Setenv("FOYA_DATABASE", url)
	b := startKernel(t, t.TempDir(), "--secret-key-file", keyFile)

	var p struct{ CreateProject struct{ ID string } }
	a.gql(t, `mutation($p: String!) { createProject(input: {path: $p}) { id } }`, map[string]any{"p": proj}, &p)
	for i := range 2 {
		a.gql(t, `mutation($t: String, $p: ID) { createSession(input: {title: $t, projectId: $p}) { id } }`,
			map[string]any{"t": fmt.Sprint("s", i), "p": p.CreateProject.ID}, nil)
	}
	const apiKey = "sk-two-kernels-secret-value-42"
	var c struct{ CreateConnection struct{ ID string } }
	a.gql(t, `mutation($k: String) { createConnection(input: {name: "shared", baseUrl: "http://127.0.0.1:1/v1", apiKey: $k}) { id } }`,
		map[string]any{"k": apiKey}, &c)

	var got struct {
		Sessions    []struct{ Title string }
		Projects    []struct{ ID string }
		Connections []struct {
			ID               string
			APIKeyConfigured bool `json:"apiKeyConfigured"`
		}
	}
	b.gql(t, `{ sessions { title } projects { id } connections { id apiKeyConfigured } }`, nil, &got)
	if len(got.Sessions) != 2 || len(got.Projects) != 1 || got.Projects[0].ID != p.CreateProject.ID {
		t.Fatalf("second kernel sees %+v", got)
	}
	if len(got.Connections) != 1 || got.Connections[0].ID != c.CreateConnection.ID || !got.Connections[0].APIKeyConfigured {
		t.Fatalf("second kernel's connections: %+v", got.Connections)
	}
	// A change on B is seen by A.
	b.gql(t, `mutation($id: ID!) { deleteConnection(id: $id) }`, map[string]any{"id": c.CreateConnection.ID}, nil)
	a.gql(t, `{ connections { id } }`, nil, &got)
	if len(got.Connections) != 0 {
		t.Fatalf("A still sees %+v after B deleted it", got.Connections)
	}

	db, err := storage.OpenPostgres(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	text, err := db.AllText(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text, apiKey) {
		t.Fatal("the API key is in the database in plain text")
	}

	out, err := exec.Command(foyaBin, "serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir()).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--secret-key-file") {
		t.Fatalf("a kernel with another secret key started or said: %v\n%s", err, out)
	}
}

func TestServeRefusesNonPostgresDatabaseURL(t *testing.T) {
	raw, err := exec.Command(foyaBin, "serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--database", "mysql://u:secret@h/db").CombinedOutput()
	out := string(raw)
	if err == nil {
		t.Fatalf("serve accepted a mysql URL:\n%s", out)
	}
	if !strings.Contains(out, "postgres://") || strings.Contains(out, "secret") {
		t.Fatalf("message: %s", out)
	}
}
