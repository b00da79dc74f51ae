package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/providers/openai/openaitest"
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
	// One bearer token for both, as docs/cluster.md asks (commands are forwarded).
	tokFile := filepath.Join(t.TempDir(), "auth-token")
	a := startKernel(t, t.TempDir(), "--database", url, "--secret-key-file", keyFile, "--auth-token-file", tokFile)
	t.Setenv("FOYA_DATABASE", url)
	b := startKernel(t, t.TempDir(), "--secret-key-file", keyFile, "--auth-token-file", tokFile)

	p := a.createProject(t, proj)
	for i := range 2 {
		a.createSession(t, client.CreateSessionInput{Title: ptr(fmt.Sprint("s", i)), ProjectId: ptr(p.Id)})
	}
	const apiKey = "sk-two-kernels-secret-value-42"
	c := a.createConnection(t, client.ConnectionInput{Name: ptr("shared"), BaseUrl: ptr("http://127.0.0.1:1/v1"), ApiKey: ptr(apiKey)})

	var got struct {
		Sessions    []struct{ Title string }
		Projects    []struct{ ID string }
		Connections []struct {
			ID               string
			APIKeyConfigured bool `json:"apiKeyConfigured"`
		}
	}
	decodeAs(t, map[string]any{"sessions": b.listSessions(t, false).Sessions, "projects": b.listProjects(t), "connections": b.listConnections(t)}, &got)
	if len(got.Sessions) != 2 || len(got.Projects) != 1 || got.Projects[0].ID != p.Id {
		t.Fatalf("second kernel sees %+v", got)
	}
	if len(got.Connections) != 1 || got.Connections[0].ID != c || !got.Connections[0].APIKeyConfigured {
		t.Fatalf("second kernel's connections: %+v", got.Connections)
	}
	// A change on B is seen by A.
	b.deleteConnection(t, c)
	decodeAs(t, map[string]any{"connections": a.listConnections(t)}, &got)
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
	t.Parallel()
	raw, err := exec.Command(foyaBin, "serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--database", "mysql://u:secret@h/db").CombinedOutput()
	out := string(raw)
	if err == nil {
		t.Fatalf("serve accepted a mysql URL:\n%s", out)
	}
	if !strings.Contains(out, "postgres://") || strings.Contains(out, "secret") {
		t.Fatalf("message: %s", out)
	}
}

// Two kernels on one database and one --artifact-dir: a connection and
// session made on A, an image uploaded to A, are used by a turn on B (the
// bytes come from the shared directory to B's model request); deleting the
// session on B removes it for A too and removes the unreferenced blob from
// the shared directory.
func TestServePostgresSharedArtifactsAndDelete(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	keyFile := filepath.Join(t.TempDir(), "key")
	artifacts := t.TempDir()
	// One bearer token for both, as docs/cluster.md asks (commands are forwarded).
	tokFile := filepath.Join(t.TempDir(), "auth-token")
	a := startKernel(t, t.TempDir(), "--database", url, "--secret-key-file", keyFile, "--artifact-dir", artifacts, "--auth-token-file", tokFile)
	b := startKernel(t, t.TempDir(), "--database", url, "--secret-key-file", keyFile, "--artifact-dir", artifacts, "--auth-token-file", tokFile)
	fake := openaitest.New(t)
	sid := a.chatSession(t, fake.BaseURL())

	img := image.NewRGBA(image.Rect(0, 0, 3, 2))
	var pic bytes.Buffer
	if err := png.Encode(&pic, img); err != nil {
		t.Fatal(err)
	}
	att, hash := a.uploadFile(t, "dot.png", pic.Bytes())
	blob := filepath.Join(artifacts, "sha256", hash[:2], hash[2:])
	if _, err := os.Stat(blob); err != nil {
		t.Fatalf("upload on A is not in the shared directory: %v", err)
	}

	fake.Enqueue(openaitest.TextStream("gpt-t", "A dot."))
	if _, err := client.ACPSendMessage(context.Background(), b.client(), sid, client.UserInput{Text: ptr("what is this?"), AttachmentIds: []string{att}}); err != nil {
		t.Fatalf("sendMessage with an attachment: %v", err)
	}
	b.waitEvent(t, sid, "turn_finished")
	if body := string(fake.LastRequest().Body); !strings.Contains(body, "data:image/png;base64,"+base64.StdEncoding.EncodeToString(pic.Bytes())) {
		t.Fatalf("B's model request lacks the image uploaded to A: %.300s", body)
	}
	s := a.getSession(t, sid)
	if n := len(s.Session.Messages); n != 2 || s.Session.Messages[1].Text != "A dot." {
		t.Fatalf("A reads the turn B ran as %+v", s.Session.Messages)
	}

	b.deleteSession(t, sid)
	list := a.listSessions(t, false)
	if len(list.Sessions) != 0 {
		t.Fatalf("A still lists %+v after B deleted the session", list.Sessions)
	}
	if _, err := os.Stat(blob); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the unreferenced blob is still in the shared directory: %v", err)
	}
}

// uploadFile sends a file with the GraphQL multipart request spec and
// returns the attachment id and hash.
func (k *kernelProc) uploadFile(t *testing.T, name string, data []byte) (id, sha string) {
	t.Helper()
	r, err := client.UploadAttachment(context.Background(), k.client(), client.Upload{Name: name, Data: data})
	if err != nil {
		t.Fatalf("upload: %v", err)
	}
	return r.UploadAttachment.Id, r.UploadAttachment.Sha256
}

// foya secret-key rotate re-seals a shared database's secrets under a new
// key with the kernels stopped: refused while a kernel runs; afterwards
// the kernel starts with the new key in its --secret-key-file and its
// connection's key still reaches the model service, the previous key is
// kept as .old, and a kernel with it is refused.
func TestSecretKeyRotatePostgres(t *testing.T) {
	url := pgtest.NewDatabase(t)
	keyFile := filepath.Join(t.TempDir(), "secret-key")
	data := t.TempDir()
	fake := openaitest.New(t)
	k := startKernel(t, data, "--database", url, "--secret-key-file", keyFile)
	const apiKey = "sk-before-rotation-secret"
	conn := k.createConnection(t, client.ConnectionInput{Name: ptr("fake"), BaseUrl: ptr(fake.BaseURL()), ApiKey: ptr(apiKey), Models: []client.ModelInput{{Id: "gpt-t"}}})
	if _, err := client.CreateMcpServer(context.Background(), k.client(), client.McpServerInput{Name: "remote", Transport: client.McpTransportHttp,
		Url: ptr("http://127.0.0.1:1/mcp"), Headers: []client.KeyValueInput{{Key: "Authorization", Value: "Bearer mcp-header-secret"}}}); err != nil {
		t.Fatal(err)
	}
	newKey := filepath.Join(t.TempDir(), "new-key")
	rotate := func(dataDir string) (string, error) {
		out, err := exec.Command(foyaBin, "secret-key", "rotate", newKey, "--database", url, "--secret-key-file", keyFile, "--data-dir", dataDir).CombinedOutput()
		return string(out), err
	}
	if out, err := rotate(t.TempDir()); err == nil || !strings.Contains(out, "kernels still run on this database") {
		t.Fatalf("rotation beside a running kernel: %v %s", err, out)
	}
	before, _ := os.ReadFile(keyFile)
	k.stop(t)
	out, err := rotate(data)
	if err != nil || !strings.Contains(out, "re-sealed 2 secrets") {
		t.Fatalf("rotate: %v %s", err, out)
	}
	after, _ := os.ReadFile(keyFile)
	fresh, _ := os.ReadFile(newKey)
	old, _ := os.ReadFile(keyFile + ".old")
	if string(after) != string(fresh) || string(old) != string(before) || string(after) == string(before) {
		t.Fatal("the key files are not the new key and the previous one")
	}
	if fi, err := os.Stat(keyFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode: %v %v", fi.Mode(), err)
	}

	k = startKernel(t, data, "--database", url, "--secret-key-file", keyFile)
	sid := k.createSession(t, client.CreateSessionInput{ConnectionId: ptr(conn), Title: ptr("t")})
	fake.Enqueue(openaitest.TextStream("gpt-t", "still here"))
	k.sendMessage(t, sid, "hi")
	k.waitEvent(t, sid, "turn_finished")
	if got := fake.Requests()[0].Header.Get("Authorization"); got != "Bearer "+apiKey {
		t.Fatalf("the connection's key after the rotation: %q", got)
	}
	k.stop(t)
	out2, err := exec.Command(foyaBin, "serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--database", url, "--secret-key-file", keyFile+".old").CombinedOutput()
	if err == nil || !strings.Contains(string(out2), "--secret-key-file") {
		t.Fatalf("a kernel with the previous key: %v\n%s", err, out2)
	}
}
