package graph_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sessionFields = `id title pinned connectionId model reasoningEffort approvalMode phase agentMode parentId headSeq createdAt updatedAt project { id path } tasks { id } children { id }`

type sessionJSON struct {
	ID              string  `json:"id"`
	Title           *string `json:"title"`
	Pinned          bool    `json:"pinned"`
	ConnectionID    *string `json:"connectionId"`
	Model           *string `json:"model"`
	ReasoningEffort *string `json:"reasoningEffort"`
	ApprovalMode    string  `json:"approvalMode"`
	Phase           string  `json:"phase"`
	AgentMode       string  `json:"agentMode"`
	HeadSeq         int     `json:"headSeq"`
	Project         *struct {
		ID   string `json:"id"`
		Path string `json:"path"`
	} `json:"project"`
}

func TestProjects(t *testing.T) {
	k := newTestKernel(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	const create = `mutation($in: ProjectInput!) { createProject(input: $in) { id name path } }`

	var out struct {
		CreateProject struct{ ID, Name, Path string }
	}
	k.mustDo(t, create, map[string]any{"in": map[string]any{"path": dir}}, &out)
	if out.CreateProject.Name != filepath.Base(dir) || out.CreateProject.Path != dir {
		t.Fatalf("project = %+v", out.CreateProject)
	}

	for name, tc := range map[string]struct{ path, code, want string }{
		"missing":   {filepath.Join(dir, "nope"), "BAD_INPUT", "does not exist"},
		"relative":  {"some/dir", "BAD_INPUT", "relative"},
		"file":      {file, "BAD_INPUT", "not a directory"},
		"empty":     {"", "BAD_INPUT", "absolute path"},
		"duplicate": {dir, "CONFLICT", "already project"},
	} {
		t.Run(name, func(t *testing.T) {
			msg := k.mustFail(t, tc.code, create, map[string]any{"in": map[string]any{"path": tc.path}})
			if !strings.Contains(msg, tc.want) {
				t.Fatalf("message %q lacks %q", msg, tc.want)
			}
		})
	}

	var list struct{ Projects []struct{ ID string } }
	k.mustDo(t, `{ projects { id } }`, nil, &list)
	if len(list.Projects) != 1 {
		t.Fatalf("projects = %+v", list.Projects)
	}

	// A bound session goes with its project; the directory stays.
	var s struct{ CreateSession sessionJSON }
	k.mustDo(t, `mutation($p: ID) { createSession(input: {projectId: $p}) { `+sessionFields+` } }`,
		map[string]any{"p": out.CreateProject.ID}, &s)
	var del struct{ DeleteProject bool }
	k.mustDo(t, `mutation($id: ID!) { deleteProject(id: $id) }`, map[string]any{"id": out.CreateProject.ID}, &del)
	if !del.DeleteProject {
		t.Fatal("deleteProject returned false")
	}
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("project directory touched: %v", err)
	}
	var got struct{ Session *sessionJSON }
	k.mustDo(t, `query($id: ID!) { session(id: $id) { id } }`, map[string]any{"id": s.CreateSession.ID}, &got)
	if got.Session != nil {
		t.Fatal("session of a deleted project survived")
	}
	k.mustFail(t, "NOT_FOUND", `mutation { deleteProject(id: "prj_nope") }`, nil)
}

func TestSessionLifecycle(t *testing.T) {
	k := newTestKernel(t)
	dirA, dirB := t.TempDir(), t.TempDir()
	var pa, pb struct{ CreateProject struct{ ID string } }
	k.mustDo(t, `mutation($p: String!) { createProject(input: {path: $p}) { id } }`, map[string]any{"p": dirA}, &pa)
	k.mustDo(t, `mutation($p: String!) { createProject(input: {path: $p}) { id } }`, map[string]any{"p": dirB}, &pb)

	var c struct{ CreateSession sessionJSON }
	k.mustDo(t, `mutation { createSession(input: {title: "first", reasoningEffort: "high"}) { `+sessionFields+` } }`, nil, &c)
	s := c.CreateSession
	if s.Phase != "IDLE" || s.ApprovalMode != "ASK" || s.AgentMode != "EXECUTE" || s.Project != nil || s.HeadSeq != 1 || *s.Title != "first" {
		t.Fatalf("new session = %+v", s)
	}

	var u struct{ UpdateSession sessionJSON }
	k.mustDo(t, `mutation($id: ID!, $p: ID) { updateSession(id: $id, input: {title: "renamed", pinned: true, approvalMode: BYPASS, agentMode: PLAN, projectId: $p}) { `+sessionFields+` } }`,
		map[string]any{"id": s.ID, "p": pa.CreateProject.ID}, &u)
	if got := u.UpdateSession; *got.Title != "renamed" || !got.Pinned || got.ApprovalMode != "BYPASS" || got.AgentMode != "PLAN" || got.Project == nil || got.Project.ID != pa.CreateProject.ID {
		t.Fatalf("updated = %+v", got)
	}

	// SES-3: a bound session can never be re-bound.
	msg := k.mustFail(t, "CONFLICT", `mutation($id: ID!, $p: ID) { updateSession(id: $id, input: {projectId: $p}) { id } }`,
		map[string]any{"id": s.ID, "p": pb.CreateProject.ID})
	if !strings.Contains(msg, "never be re-bound") {
		t.Fatalf("message = %q", msg)
	}
	k.mustFail(t, "CONFLICT", `mutation($id: ID!) { updateSession(id: $id, input: {projectId: ""}) { id } }`, map[string]any{"id": s.ID})

	// SES-4: clients cannot set the phase: the input has no such field.
	k.mustFail(t, "BAD_INPUT", `mutation($id: ID!) { updateSession(id: $id, input: {phase: TURN}) { id } }`, map[string]any{"id": s.ID})
	k.mustFail(t, "BAD_INPUT", `mutation { createSession(input: {approvalMode: SOMETIMES}) { id } }`, nil)
	k.mustFail(t, "BAD_INPUT", `mutation { createSession(input: {reasoningEffort: "VERY HIGH"}) { id } }`, nil)
	k.mustFail(t, "NOT_FOUND", `mutation { createSession(input: {projectId: "prj_nope"}) { id } }`, nil)
	k.mustFail(t, "NOT_FOUND", `mutation { updateSession(id: "ses_nope", input: {title: "x"}) { id } }`, nil)
	var unbound struct{ CreateSession sessionJSON }
	k.mustDo(t, `mutation { createSession(input: {}) { id } }`, nil, &unbound)
	k.mustFail(t, "NOT_FOUND", `mutation($id: ID!) { updateSession(id: $id, input: {projectId: "prj_nope"}) { id } }`, map[string]any{"id": unbound.CreateSession.ID})
	k.mustDo(t, `mutation($id: ID!) { deleteSession(id: $id) }`, map[string]any{"id": unbound.CreateSession.ID}, nil)

	var one struct{ Session *sessionJSON }
	k.mustDo(t, `{ session(id: "ses_nope") { id } }`, nil, &one)
	if one.Session != nil {
		t.Fatal("unknown session is not null")
	}

	var list struct{ Sessions []sessionJSON }
	k.mustDo(t, `{ sessions { `+sessionFields+` } }`, nil, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].HeadSeq != 2 {
		t.Fatalf("sessions = %+v", list.Sessions)
	}

	var evs struct {
		Events []struct {
			Seq     int
			Type    string
			Payload map[string]any
		}
	}
	k.mustDo(t, `query($id: ID!) { events(sessionId: $id) { seq type payload } }`, map[string]any{"id": s.ID}, &evs)
	if len(evs.Events) != 2 || evs.Events[0].Type != "session_created" || evs.Events[1].Type != "session_updated" {
		t.Fatalf("events = %+v", evs.Events)
	}
	changed, _ := evs.Events[1].Payload["changed"].([]any)
	if len(changed) != 5 {
		t.Fatalf("changed = %v", changed)
	}
	k.mustFail(t, "NOT_FOUND", `{ events(sessionId: "ses_nope") { seq } }`, nil)
	k.mustFail(t, "BAD_INPUT", `query($id: ID!) { events(sessionId: $id, limit: 0) { seq } }`, map[string]any{"id": s.ID})
	k.mustFail(t, "BAD_INPUT", `query($id: ID!) { events(sessionId: $id, afterSeq: -1) { seq } }`, map[string]any{"id": s.ID})

	var del struct{ DeleteSession bool }
	k.mustDo(t, `mutation($id: ID!) { deleteSession(id: $id) }`, map[string]any{"id": s.ID}, &del)
	k.mustDo(t, `query($id: ID!) { session(id: $id) { id } }`, map[string]any{"id": s.ID}, &one)
	if one.Session != nil {
		t.Fatal("deleted session still there")
	}
	k.mustFail(t, "NOT_FOUND", `mutation($id: ID!) { deleteSession(id: $id) }`, map[string]any{"id": s.ID})
	k.mustFail(t, "NOT_FOUND", `mutation($id: ID!) { updateSession(id: $id, input: {title: "back"}) { id } }`, map[string]any{"id": s.ID})
}

func TestLimitsAndSyntax(t *testing.T) {
	k := newTestKernel(t)
	deep := `{ sessions { children { children { children { children { children { children { children { children { children { children { children { children { id } } } } } } } } } } } } } }`
	msg := k.mustFail(t, "BAD_INPUT", deep, nil)
	if !strings.Contains(msg, "limit") {
		t.Fatalf("depth message = %q", msg)
	}
	k.mustFail(t, "BAD_INPUT", `{ sessions { id `, nil)
	k.mustFail(t, "BAD_INPUT", `{ nonsense }`, nil)
	// Introspection is not counted against the depth limit.
	k.mustDo(t, `{ __schema { types { name fields { name type { name ofType { name ofType { name ofType { name ofType { name ofType { name ofType { name } } } } } } } } } } }`, nil, nil)
}
