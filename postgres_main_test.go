package main

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/foya-dev/foya/storage/pgtest"
)

// Sessions and projects written by a kernel on PostgreSQL are there for a
// kernel on another data directory that reads the database from
// FOYA_DATABASE; nothing is written to the data directory's SQLite file.
func TestServePostgresSharesDataAcrossDataDirs(t *testing.T) {
	url := pgtest.NewDatabase(t)
	proj := t.TempDir()
	k := startKernel(t, t.TempDir(), "--database", url)
	var p struct{ CreateProject struct{ ID string } }
	k.gql(t, `mutation($p: String!) { createProject(input: {path: $p}) { id } }`, map[string]any{"p": proj}, &p)
	for i := range 2 {
		k.gql(t, `mutation($t: String, $p: ID) { createSession(input: {title: $t, projectId: $p}) { id } }`,
			map[string]any{"t": fmt.Sprint("s", i), "p": p.CreateProject.ID}, nil)
	}
	k.stop(t)

	t.Setenv("FOYA_DATABASE", url)
	data2 := t.TempDir()
	k2 := startKernel(t, data2)
	var got struct {
		Sessions []struct{ Title string }
		Projects []struct{ ID string }
	}
	k2.gql(t, `{ sessions { title } projects { id } }`, nil, &got)
	if len(got.Sessions) != 2 || len(got.Projects) != 1 || got.Projects[0].ID != p.CreateProject.ID {
		t.Fatalf("second kernel on the same database sees %+v", got)
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
