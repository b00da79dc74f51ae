package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/foya-dev/foya/client"
)

// The typed client (package client) drives a kernel under test for every
// operation it has; hand-written GraphQL documents remain only where a test
// sends something raw on purpose (malformed bodies, limits, protocol audits,
// transports, introspection) or reads fields the client does not select.

// client is the typed client of k, with k's token (none with
// --insecure-no-token).
func (k *kernelProc) client() *client.Client { return client.New(k.url(), k.token) }

// ptr is a pointer to v: the client's optional input fields are pointers.
func ptr[T any](v T) *T { return &v }

// createConnection creates a connection and returns its id.
func (k *kernelProc) createConnection(t testing.TB, in client.ConnectionInput) string {
	t.Helper()
	r, err := client.CreateConnection(context.Background(), k.client(), in)
	if err != nil {
		t.Fatalf("createConnection: %v", err)
	}
	return r.CreateConnection.Id
}

// createSession creates a session and returns its id.
func (k *kernelProc) createSession(t testing.TB, in client.CreateSessionInput) string {
	t.Helper()
	r, err := client.CreateSession(context.Background(), k.client(), in)
	if err != nil {
		t.Fatalf("createSession: %v", err)
	}
	return r.CreateSession.Id
}

// createProject registers the directory path as a project.
func (k *kernelProc) createProject(t testing.TB, path string) client.ProjectFields {
	t.Helper()
	r, err := client.CreateProject(context.Background(), k.client(), path)
	if err != nil {
		t.Fatalf("createProject %s: %v", path, err)
	}
	return r.CreateProject.ProjectFields
}

// sendMessage sends text to the session.
func (k *kernelProc) sendMessage(t testing.TB, sid, text string) *client.SendMessageResponse {
	t.Helper()
	r, err := client.SendMessage(context.Background(), k.client(), sid, &text)
	if err != nil {
		t.Fatalf("sendMessage to %s: %v", sid, err)
	}
	return r
}

// eventLog is the session's stored log (the first 5000 events).
func (k *kernelProc) eventLog(t testing.TB, sid string) *client.EventsResponse {
	t.Helper()
	r, err := client.Events(context.Background(), k.client(), sid, 5000)
	if err != nil {
		t.Fatalf("events of %s: %v", sid, err)
	}
	return r
}

// getSession is the session with its messages.
func (k *kernelProc) getSession(t testing.TB, sid string) *client.SessionResponse {
	t.Helper()
	r, err := client.Session(context.Background(), k.client(), sid)
	if err != nil {
		t.Fatalf("session %s: %v", sid, err)
	}
	return r
}

// listSessions lists the sessions (sub-agents' too with includeChildren).
func (k *kernelProc) listSessions(t testing.TB, includeChildren bool) *client.SessionsResponse {
	t.Helper()
	r, err := client.Sessions(context.Background(), k.client(), &includeChildren, nil, nil)
	if err != nil {
		t.Fatalf("sessions: %v", err)
	}
	return r
}

// updateSession changes the session's settings.
func (k *kernelProc) updateSession(t testing.TB, sid string, in client.UpdateSessionInput) {
	t.Helper()
	if _, err := client.UpdateSession(context.Background(), k.client(), sid, in); err != nil {
		t.Fatalf("updateSession %s: %v", sid, err)
	}
}

// updateConnection changes the connection (nil fields keep their value).
func (k *kernelProc) updateConnection(t testing.TB, id string, in client.ConnectionInput) {
	t.Helper()
	if _, err := client.UpdateConnection(context.Background(), k.client(), id, in); err != nil {
		t.Fatalf("updateConnection %s: %v", id, err)
	}
}

// deleteConnection deletes the connection.
func (k *kernelProc) deleteConnection(t testing.TB, id string) {
	t.Helper()
	if _, err := client.DeleteConnection(context.Background(), k.client(), id); err != nil {
		t.Fatalf("deleteConnection %s: %v", id, err)
	}
}

// deleteSession deletes the session.
func (k *kernelProc) deleteSession(t testing.TB, sid string) {
	t.Helper()
	if _, err := client.DeleteSession(context.Background(), k.client(), sid, nil, nil); err != nil {
		t.Fatalf("deleteSession %s: %v", sid, err)
	}
}

// resolveApproval answers the session's approval request.
func (k *kernelProc) resolveApproval(t testing.TB, sid, rid string, decision client.ApprovalDecision) {
	t.Helper()
	if _, err := client.ResolveApproval(context.Background(), k.client(), sid, rid, decision); err != nil {
		t.Fatalf("resolveApproval %s: %v", rid, err)
	}
}

// listProjects lists the projects.
func (k *kernelProc) listProjects(t testing.TB) []client.ProjectsProjectsProject {
	t.Helper()
	r, err := client.Projects(context.Background(), k.client())
	if err != nil {
		t.Fatalf("projects: %v", err)
	}
	return r.Projects
}

// listConnections lists the connections.
func (k *kernelProc) listConnections(t testing.TB) []client.ConnectionsConnectionsConnection {
	t.Helper()
	r, err := client.Connections(context.Background(), k.client())
	if err != nil {
		t.Fatalf("connections: %v", err)
	}
	return r.Connections
}

// listPlugins lists the kernel's plugins.
func (k *kernelProc) listPlugins(t testing.TB) *client.PluginsResponse {
	t.Helper()
	r, err := client.Plugins(context.Background(), k.client())
	if err != nil {
		t.Fatalf("plugins: %v", err)
	}
	return r
}

// listNodes lists the cluster's nodes.
func (k *kernelProc) listNodes(t testing.TB) *client.NodesResponse {
	t.Helper()
	r, err := client.Nodes(context.Background(), k.client())
	if err != nil {
		t.Fatalf("nodes: %v", err)
	}
	return r
}

// refreshModels has the connection list its provider's models.
func (k *kernelProc) refreshModels(t testing.TB, id string) *client.RefreshModelsResponse {
	t.Helper()
	r, err := client.RefreshModels(context.Background(), k.client(), id)
	if err != nil {
		t.Fatalf("refreshModels %s: %v", id, err)
	}
	return r
}

// projectHooks is the state of the project's hooks document.
func (k *kernelProc) projectHooks(t testing.TB, id string) *client.ProjectHooksResponse {
	t.Helper()
	r, err := client.ProjectHooks(context.Background(), k.client(), id)
	if err != nil {
		t.Fatalf("projectHooks %s: %v", id, err)
	}
	return r
}

// hooksDoc is the kernel's hook configuration.
func (k *kernelProc) hooksDoc(t testing.TB) *client.HooksResponse {
	t.Helper()
	r, err := client.Hooks(context.Background(), k.client())
	if err != nil {
		t.Fatalf("hooks: %v", err)
	}
	return r
}

// rewindTo rewinds the session to before the message at seq: a preview,
// then its confirmation.
func (k *kernelProc) rewindTo(t testing.TB, sid string, seq int) {
	t.Helper()
	ctx := context.Background()
	p, err := client.PreviewRewind(ctx, k.client(), sid, seq)
	if err != nil {
		t.Fatalf("previewRewind %s at %d: %v", sid, seq, err)
	}
	if _, err := client.ConfirmRewind(ctx, k.client(), sid, seq, p.PreviewRewind.HeadSeq, p.PreviewRewind.FileStateToken); err != nil {
		t.Fatalf("confirmRewind %s at %d: %v", sid, seq, err)
	}
}

// sessionDetail is the session with its modes, queue, context usage, MCP
// servers and messages in detail.
func (k *kernelProc) sessionDetail(t testing.TB, sid string) *client.SessionDetailResponse {
	t.Helper()
	r, err := client.SessionDetail(context.Background(), k.client(), sid)
	if err != nil {
		t.Fatalf("session %s: %v", sid, err)
	}
	return r
}

// sessionInfo is the session without its messages (nil Session: none).
func (k *kernelProc) sessionInfo(t testing.TB, sid string) *client.SessionInfoResponse {
	t.Helper()
	r, err := client.SessionInfo(context.Background(), k.client(), sid)
	if err != nil {
		t.Fatalf("session %s: %v", sid, err)
	}
	return r
}

// setHooksError sends a hook configuration that must be refused and
// returns the error's code and message.
func (k *kernelProc) setHooksError(t testing.TB, config map[string]any) (code, msg string) {
	t.Helper()
	raw, _ := json.Marshal(config)
	_, err := client.SetHooks(context.Background(), k.client(), raw)
	return wantError(t, err)
}

// wantError is the code and message of a GraphQL error the kernel must
// have returned.
func wantError(t testing.TB, err error) (code, msg string) {
	t.Helper()
	var e *client.Error
	if !errors.As(err, &e) {
		t.Fatalf("expected a GraphQL error, got %v", err)
	}
	return e.Code, e.Message
}

// decodeAs copies a typed client response (or a map of them) into the
// test's own view of it, matched by JSON field names, so that a test keeps
// its plain structs while the operation comes from the client.
func decodeAs(t testing.TB, v, out any) {
	t.Helper()
	raw, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(raw, out)
	}
	if err != nil {
		t.Fatalf("decode %T into %T: %v", v, out, err)
	}
}

// generateVideo generates videos; in is a GenerateVideoInput as JSON.
func (k *kernelProc) generateVideo(t testing.TB, in map[string]any) *client.GenerateVideoResponse {
	t.Helper()
	r, err := k.tryGenerateVideo(t, in)
	if err != nil {
		t.Fatalf("generateVideo: %v", err)
	}
	return r
}

// generateVideoError sends a generateVideo that must fail and returns the
// error's code and message.
func (k *kernelProc) generateVideoError(t testing.TB, in map[string]any) (code, msg string) {
	t.Helper()
	_, err := k.tryGenerateVideo(t, in)
	return wantError(t, err)
}

func (k *kernelProc) tryGenerateVideo(t testing.TB, in map[string]any) (*client.GenerateVideoResponse, error) {
	t.Helper()
	var input client.GenerateVideoInput
	decodeAs(t, in, &input)
	return client.GenerateVideo(context.Background(), k.client(), input)
}
