package graph

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/foya-dev/foya/core"
)

// The session list, answered by hand.
//
// gqlgen resolves a list of objects one goroutine an element, and every
// field of every element through its field pipeline (a field context, the
// field middlewares, a marshaller value); for sessions(first: 1000) that is
// thousands of goroutines and tens of thousands of small objects a page,
// several times what the store spends reading the page. SessionList answers
// the shape every client lists sessions with — a query whose only field is
// sessions, selecting Session's stored fields, project, worktree and usage
// — by writing the JSON itself, with the same resolvers, the same batch
// lookups, the same bytes and the same response budget as gqlgen's answer.
// Anything else (another root field, a fragment, a directive, a field with
// a resolver of its own such as messages or route, any error on the way)
// is left to gqlgen, which then answers the operation from the start: an
// error is always gqlgen's own. TestSessionListSameAsGqlgen holds the two
// answers equal byte for byte.

// sessionListServed counts the operations SessionList answered (tests read
// it to know which path ran).
var sessionListServed atomic.Int64

// SessionList is an operation middleware that answers the session-list
// query by hand (see above); es is the schema NewExecutableSchema made,
// maxResponse the response budget ResponseCap enforces.
func SessionList(es graphql.ExecutableSchema, maxResponse int64) graphql.OperationMiddleware {
	schema, ok := es.(*executableSchema)
	if !ok {
		return func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler { return next(ctx) }
	}
	return func(ctx context.Context, next graphql.OperationHandler) (h graphql.ResponseHandler) {
		defer func() {
			// A panic here has written nothing: gqlgen answers, and
			// reports it if it is the resolvers' (their recover).
			if r := recover(); r != nil {
				h = next(ctx)
			}
		}()
		oc := graphql.GetOperationContext(ctx)
		lp, ok := planSessionList(oc)
		if !ok {
			return next(ctx)
		}
		alone := len(lp.rest) == 0
		// A transport that sends the data as it is (DataNote) hands
		// the buffer back once it is written: the list is written into
		// one of the pool's.
		note, _ := ctx.Value(dataNoteKey{}).(*DataNote)
		var buf []byte
		if alone && note != nil {
			buf = listBufs.get()
		}
		data, spent, ok := answerSessionList(ctx, newExecutionContext(oc, schema, nil), lp.root, lp.plan, maxResponse, alone, buf)
		if !ok {
			listBufs.put(buf)
			return next(ctx)
		}
		if alone {
			sessionListServed.Add(1)
			if note != nil {
				note.Compact = true
				note.Release = func() { listBufs.put(data) }
			}
			return graphql.OneShot(&graphql.Response{Data: data})
		}
		merged, ok := withOtherFields(ctx, next, oc, lp, data, spent)
		if !ok {
			return next(ctx)
		}
		sessionListServed.Add(1)
		return graphql.OneShot(&graphql.Response{Data: merged})
	}
}

// withOtherFields has gqlgen answer the operation's other root fields (an
// operation of its own: the same document, variables and headers, the
// selections without sessions), charging them to what is left of the
// response budget once the list is charged (spent), and puts the list's
// member among theirs in the operation's order. It reports false when
// gqlgen's part has an error or is not one plain object of those fields:
// the whole operation is then gqlgen's.
func withOtherFields(ctx context.Context, next graphql.OperationHandler, oc *graphql.OperationContext, lp listPlan, list []byte, spent int64) ([]byte, bool) {
	op := *oc.Operation
	op.SelectionSet = make(ast.SelectionSet, len(lp.rest))
	for i, f := range lp.rest {
		field := *f.Field
		field.SelectionSet, field.Directives = f.Selections, nil // collected: @skip and @include applied
		op.SelectionSet[i] = &field
	}
	rest := &graphql.OperationContext{
		RawQuery: oc.RawQuery, Variables: oc.Variables, OperationName: oc.OperationName, Doc: oc.Doc,
		Extensions: oc.Extensions, Headers: oc.Headers, Operation: &op, DisableIntrospection: oc.DisableIntrospection,
		RecoverFunc: oc.RecoverFunc, ResolverMiddleware: oc.ResolverMiddleware, RootResolverMiddleware: oc.RootResolverMiddleware,
		Stats: oc.Stats,
	}
	ctx = graphql.WithOperationContext(ctx, rest)
	h := next(ctx)
	if h == nil {
		return nil, false
	}
	resp := h(context.WithValue(ctx, preChargedKey{}, spent))
	if resp == nil || len(resp.Errors) > 0 || resp.Data == nil || resp.HasNext != nil || resp.Label != "" || resp.Path != nil || len(resp.Extensions) > 0 {
		return nil, false
	}
	members, ok := topMembers(resp.Data)
	if !ok || len(members) != len(lp.rest) {
		return nil, false
	}
	member := appendQuoted(make([]byte, 0, len(lp.root.Alias)+3+len(list)), lp.root.Alias)
	member = append(append(member, ':'), list...)
	parts := append(append(append(make([][]byte, 0, len(members)+1), members[:lp.at]...), member), members[lp.at:]...)
	out := make([]byte, 0, len(resp.Data)+len(member)+1)
	out = append(out, '{')
	for i, m := range parts {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, m...)
	}
	return append(out, '}'), true
}

// topMembers splits a JSON object into its members ("key":value), as
// they are written.
func topMembers(data []byte) ([][]byte, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var out [][]byte
	for dec.More() {
		start := dec.InputOffset()
		if _, err := dec.Token(); err != nil {
			return nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		out = append(out, bytes.TrimLeft(data[start:dec.InputOffset()], ", \t\r\n"))
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, false
	}
	return out, true
}

// DataNote tells a transport about the data of the response it is sending:
// Compact when graph wrote it by hand, valid compact JSON the transport may
// send as it is instead of re-validating it (encoding/json compacts every
// json.RawMessage it marshals, a pass over every byte). Release, when set,
// is called by the transport once it has written the data (and not used
// it since): the data's buffer goes back to graph's pool.
type DataNote struct {
	Compact bool
	Release func()
}

// listBufs are the buffers of session lists written by hand for a
// transport that hands them back (DataNote.Release). A page of 1,000
// sessions with the web sidebar's fields is ~300 KB, written into a buffer
// grown as it goes; the kernel collects its garbage at half of Go's
// default target, and these buffers were half of what a walk of 10,000
// sessions allocated (BenchmarkSessionsQuery10k). None over 4 MiB is kept.
var listBufs = slicePool[byte]{max: 4 << 20}

// listSessions are the arrays the hand-written lists read their pages
// into (core.SessionFilter.Into): a page of 1,000 sessions is ~330 KB of
// core.Session, a third of what a walk of 10,000 allocated once the
// buffers above were kept. None over 1,000 sessions is kept.
var listSessions = slicePool[core.Session]{max: 1000}

// slicePool keeps arrays of up to max elements for reuse. An array goes
// back cleared whole (a page's sessions hold the rows' metadata), and its
// slice comes out empty.
type slicePool[T any] struct {
	p   sync.Pool
	max int
}

func (sp *slicePool[T]) get() []T {
	if v, ok := sp.p.Get().(*[]T); ok {
		return *v
	}
	return nil
}

func (sp *slicePool[T]) put(s []T) {
	if cap(s) == 0 || cap(s) > sp.max {
		return
	}
	clear(s[:cap(s)])
	s = s[:0]
	sp.p.Put(&s)
}

type dataNoteKey struct{}

// WithDataNote returns a context whose operation reports on its data in the
// returned note.
func WithDataNote(ctx context.Context) (context.Context, *DataNote) {
	n := new(DataNote)
	return context.WithValue(ctx, dataNoteKey{}, n), n
}

// listField is one selected field of the hand-written answer: its response
// key, what it is and, for project, worktree and usage, its own selections.
type listField struct {
	key  string
	kind listKind
	sub  []listField
}

type listKind uint8

const (
	kTypename listKind = iota
	kID
	kTitle
	kPinned
	kConnectionID
	kModel
	kReasoningEffort
	kApprovalMode
	kPhase
	kAgentMode
	kParentID
	kSource
	kCreatedAt
	kUpdatedAt
	kHeadSeq
	kProject
	kWorktree
	kUsage
	// Project
	kProjectID
	kProjectName
	kProjectPath
	kProjectCreatedAt
	// SessionWorktree
	kWorktreePath
	kWorktreeBranch
	kWorktreeBaseRef
	// Usage
	kInputTokens
	kOutputTokens
	kTotalTokens
	kCachedTokens
	kCacheWriteTokens
	kEstimated
	kCost
	kUnpricedTokens
)

// The fields SessionList writes, by object; a field not named here (or
// selected with arguments, directives or fragments) leaves the operation
// to gqlgen.
var (
	listSessionFields = map[string]listKind{
		"__typename": kTypename, "id": kID, "title": kTitle, "pinned": kPinned, "connectionId": kConnectionID,
		"model": kModel, "reasoningEffort": kReasoningEffort, "approvalMode": kApprovalMode, "phase": kPhase,
		"agentMode": kAgentMode, "parentId": kParentID, "source": kSource, "createdAt": kCreatedAt,
		"updatedAt": kUpdatedAt, "headSeq": kHeadSeq, "project": kProject, "worktree": kWorktree, "usage": kUsage,
	}
	listProjectFields = map[string]listKind{
		"__typename": kTypename, "id": kProjectID, "name": kProjectName, "path": kProjectPath, "createdAt": kProjectCreatedAt,
	}
	listWorktreeFields = map[string]listKind{
		"__typename": kTypename, "path": kWorktreePath, "branch": kWorktreeBranch, "baseRef": kWorktreeBaseRef,
	}
	listUsageFields = map[string]listKind{
		"__typename": kTypename, "inputTokens": kInputTokens, "outputTokens": kOutputTokens, "totalTokens": kTotalTokens,
		"cachedTokens": kCachedTokens, "cacheWriteTokens": kCacheWriteTokens, "estimated": kEstimated, "cost": kCost,
		"unpricedTokens": kUnpricedTokens,
	}
)

// listPlan is an operation SessionList answers: the sessions field
// (root), at position at among the root fields, what it selects (plan),
// and the other root fields (rest), which gqlgen answers.
type listPlan struct {
	root *ast.Field
	at   int
	plan []listField
	rest []graphql.CollectedField
}

// planSessionList recognises the operation SessionList answers: a query
// with one sessions field, without directives, selecting only fields of
// the tables above (through fragments too, collected as gqlgen collects
// them).
func planSessionList(oc *graphql.OperationContext) (listPlan, bool) {
	if oc == nil || oc.Operation == nil || oc.Operation.Operation != ast.Query {
		return listPlan{}, false
	}
	var lp listPlan
	found := false
	for i, f := range graphql.CollectFields(oc, oc.Operation.SelectionSet, queryImplementors) {
		if f.Name != "sessions" {
			lp.rest = append(lp.rest, f)
			continue
		}
		if found || len(f.Directives) > 0 {
			return listPlan{}, false
		}
		found, lp.root, lp.at = true, f.Field, i
		var ok bool
		if lp.plan, ok = planFields(oc, f.Selections, sessionImplementors, listSessionFields); !ok {
			return listPlan{}, false
		}
	}
	return lp, found
}

func planFields(oc *graphql.OperationContext, set ast.SelectionSet, satisfies []string, known map[string]listKind) ([]listField, bool) {
	fields := graphql.CollectFields(oc, set, satisfies)
	out := make([]listField, 0, len(fields))
	for _, f := range fields {
		if len(f.Arguments) > 0 {
			return nil, false
		}
		kind, ok := known[f.Name]
		if !ok {
			return nil, false
		}
		lf := listField{key: f.Alias, kind: kind}
		var sub map[string]listKind
		var subType []string
		switch kind {
		case kProject:
			sub, subType = listProjectFields, projectImplementors
		case kWorktree:
			sub, subType = listWorktreeFields, sessionWorktreeImplementors
		case kUsage:
			sub, subType = listUsageFields, usageImplementors
		}
		if sub != nil {
			if lf.sub, ok = planFields(oc, f.Selections, subType, sub); !ok {
				return nil, false
			}
		}
		out = append(out, lf)
	}
	return out, true
}

// listBudget mirrors ResponseCap's estimate of a response (8 bytes, the
// response key and encodedSize of the value, for every resolved field), so
// that an answer gqlgen would refuse as too large is left to it.
type listBudget struct{ left int64 }

func (b *listBudget) charge(key string, size int64) { b.left -= 8 + int64(len(key)) + size }

// The sizes encodedSize gives the values of these fields.
func strSize(s string) int64 { return int64(len(s)) + 2 }

// optSize is the size of a nullable text the session holds as a string,
// "" for null (core.SessionMeta's …OrNil methods, which gqlgen calls).
func optSize(s string) int64 {
	if s == "" {
		return 4
	}
	return strSize(s)
}

const scalarSize = 8 // bools, numbers, times and non-nil pointers to structs

func ptrSize[T any](p *T) int64 {
	if p == nil {
		return 4
	}
	return scalarSize
}

// answerSessionList writes the data of the operation when the list is
// alone in it, else the list's value, and what it charged to the response
// budget; or it reports false when gqlgen must answer the operation (an
// error, a value gqlgen would refuse, a response over the budget).
//
// buf, when not nil, is the buffer to write the list into (from listBufs).
func answerSessionList(ctx context.Context, ec *executionContext, root *ast.Field, plan []listField, maxResponse int64, alone bool, buf []byte) (data []byte, spent int64, ok bool) {
	args, err := ec.field_Query_sessions_args(ctx, root.ArgumentMap(ec.Variables))
	if err != nil {
		return nil, 0, false
	}
	read := listRead{idsOnly: true}
	for _, f := range plan {
		read.usage = read.usage || f.kind == kUsage
		read.idsOnly = read.idsOnly && (f.kind == kID || f.kind == kTypename)
	}
	if !read.idsOnly {
		read.into = listSessions.get()
		defer func() { listSessions.put(read.into) }()
	}
	list, err := ec.Resolvers.Query().Sessions(context.WithValue(ctx, listReadKey{}, read), args["includeChildren"].(*bool), args["first"].(*int64), args["after"].(*string))
	if err != nil || ctx.Err() != nil {
		return nil, 0, false
	}
	if cap(list) > cap(read.into) && cap(list) <= listSessions.max {
		read.into = list // (the store made a larger one: keep that)
	}
	objs := make([]*core.Session, len(list))
	for i := range list {
		objs[i] = &list[i]
	}
	var projects []*core.Project
	var usage []*core.Usage
	for _, f := range plan {
		switch f.kind {
		case kProject:
			if projects == nil && len(objs) > 0 {
				if projects, err = ec.Resolvers.Session().Project(ctx, objs); err != nil || len(projects) != len(objs) {
					return nil, 0, false
				}
			}
		case kUsage:
			if usage == nil && len(objs) > 0 {
				if usage, err = ec.Resolvers.Session().Usage(ctx, objs); err != nil || len(usage) != len(objs) {
					return nil, 0, false
				}
			}
		}
	}
	if ctx.Err() != nil {
		return nil, 0, false
	}
	budget := listBudget{left: maxResponse}
	budget.charge(root.Alias, int64(len(list))+2)
	if buf == nil {
		buf = make([]byte, 0, 1024)
	}
	if alone {
		buf = append(buf, '{')
		buf = appendQuoted(buf, root.Alias)
		buf = append(buf, ':')
	}
	buf = append(buf, '[')
	for i := range list {
		if i > 0 {
			buf = append(buf, ',')
		}
		if i == 1 { // room for the rest, sized by the first (within the budget)
			buf = slices.Grow(buf, int(min(int64(len(buf)+len(buf)/8)*int64(len(list)-1), max(maxResponse, 0))))
		}
		var p *core.Project
		if projects != nil {
			p = projects[i]
		}
		var u *core.Usage
		if usage != nil {
			u = usage[i]
		}
		if buf, ok = appendSession(buf, &budget, plan, &list[i], p, u); !ok {
			return nil, 0, false
		}
	}
	buf = append(buf, ']')
	if alone {
		buf = append(buf, '}')
	}
	if budget.left < 0 {
		return nil, 0, false
	}
	return buf, maxResponse - budget.left, true
}

func appendSession(buf []byte, b *listBudget, plan []listField, s *core.Session, p *core.Project, u *core.Usage) ([]byte, bool) {
	buf = append(buf, '{')
	for i, f := range plan {
		buf = appendKey(buf, i, f.key)
		var ok bool
		switch f.kind {
		case kTypename:
			buf = append(buf, `"Session"`...)
			continue
		case kID:
			b.charge(f.key, strSize(s.ID))
			buf = appendQuoted(buf, s.ID)
		case kTitle, kConnectionID, kModel, kReasoningEffort, kParentID, kSource:
			v := sessionText(s, f.kind)
			b.charge(f.key, optSize(v))
			buf = appendOptional(buf, v)
		case kPinned:
			b.charge(f.key, scalarSize)
			buf = strconv.AppendBool(buf, s.Pinned)
		case kApprovalMode:
			b.charge(f.key, strSize(string(s.ApprovalMode)))
			if buf, ok = appendEnum(buf, marshalNApprovalMode2githubᚗcomᚋfoyaᚑdevᚋfoyaᚋcoreᚐApprovalMode, s.ApprovalMode); !ok {
				return nil, false
			}
		case kPhase:
			b.charge(f.key, strSize(string(s.Phase)))
			if buf, ok = appendEnum(buf, marshalNPhase2githubᚗcomᚋfoyaᚑdevᚋfoyaᚋcoreᚐPhase, s.Phase); !ok {
				return nil, false
			}
		case kAgentMode:
			b.charge(f.key, strSize(string(s.AgentMode)))
			if buf, ok = appendEnum(buf, marshalNAgentMode2githubᚗcomᚋfoyaᚑdevᚋfoyaᚋcoreᚐAgentMode, s.AgentMode); !ok {
				return nil, false
			}
		case kCreatedAt:
			b.charge(f.key, scalarSize)
			if buf, ok = appendTime(buf, s.CreatedAt); !ok {
				return nil, false
			}
		case kUpdatedAt:
			b.charge(f.key, scalarSize)
			if buf, ok = appendTime(buf, s.UpdatedAt); !ok {
				return nil, false
			}
		case kHeadSeq:
			b.charge(f.key, scalarSize)
			buf = strconv.AppendInt(buf, s.HeadSeq, 10)
		case kProject:
			b.charge(f.key, ptrSize(p))
			if p == nil {
				buf = append(buf, "null"...)
				continue
			}
			if buf, ok = appendProject(buf, b, f.sub, p); !ok {
				return nil, false
			}
		case kWorktree:
			b.charge(f.key, ptrSize(s.Worktree))
			if s.Worktree == nil {
				buf = append(buf, "null"...)
				continue
			}
			buf = appendWorktree(buf, b, f.sub, s.Worktree)
		case kUsage:
			if u == nil { // Usage! : gqlgen's error to report
				return nil, false
			}
			b.charge(f.key, scalarSize)
			if buf, ok = appendUsage(buf, b, f.sub, u); !ok {
				return nil, false
			}
		default:
			return nil, false
		}
	}
	return append(buf, '}'), true
}

// sessionText is a nullable text field of s, "" for null.
func sessionText(s *core.Session, kind listKind) string {
	switch kind {
	case kTitle:
		return s.Title
	case kConnectionID:
		return s.ConnectionID
	case kModel:
		return s.Model
	case kReasoningEffort:
		return s.ReasoningEffort
	case kParentID:
		return s.ParentID
	case kSource:
		return s.Source
	}
	return ""
}

func appendProject(buf []byte, b *listBudget, plan []listField, p *core.Project) ([]byte, bool) {
	buf = append(buf, '{')
	for i, f := range plan {
		buf = appendKey(buf, i, f.key)
		switch f.kind {
		case kTypename:
			buf = append(buf, `"Project"`...)
		case kProjectID:
			b.charge(f.key, strSize(p.ID))
			buf = appendQuoted(buf, p.ID)
		case kProjectName:
			b.charge(f.key, strSize(p.Name))
			buf = appendQuoted(buf, p.Name)
		case kProjectPath:
			b.charge(f.key, strSize(p.Path))
			buf = appendQuoted(buf, p.Path)
		case kProjectCreatedAt:
			b.charge(f.key, scalarSize)
			var ok bool
			if buf, ok = appendTime(buf, p.CreatedAt); !ok {
				return nil, false
			}
		default:
			return nil, false
		}
	}
	return append(buf, '}'), true
}

func appendWorktree(buf []byte, b *listBudget, plan []listField, w *core.Worktree) []byte {
	buf = append(buf, '{')
	for i, f := range plan {
		buf = appendKey(buf, i, f.key)
		var v string
		switch f.kind {
		case kTypename:
			buf = append(buf, `"SessionWorktree"`...)
			continue
		case kWorktreePath:
			v = w.Path
		case kWorktreeBranch:
			v = w.Branch
		case kWorktreeBaseRef:
			v = w.BaseRef
		}
		b.charge(f.key, strSize(v))
		buf = appendQuoted(buf, v)
	}
	return append(buf, '}')
}

func appendUsage(buf []byte, b *listBudget, plan []listField, u *core.Usage) ([]byte, bool) {
	buf = append(buf, '{')
	for i, f := range plan {
		buf = appendKey(buf, i, f.key)
		var n int64
		switch f.kind {
		case kTypename:
			buf = append(buf, `"Usage"`...)
			continue
		case kEstimated:
			b.charge(f.key, scalarSize)
			buf = strconv.AppendBool(buf, u.Estimated)
			continue
		case kCost:
			b.charge(f.key, ptrSize(u.Cost))
			if u.Cost == nil {
				buf = append(buf, "null"...)
				continue
			}
			if math.IsInf(*u.Cost, 0) || math.IsNaN(*u.Cost) { // gqlgen's error
				return nil, false
			}
			buf = fmt.Appendf(buf, "%g", *u.Cost) // graphql.MarshalFloatContext's format
			continue
		case kInputTokens:
			n = u.InputTokens
		case kOutputTokens:
			n = u.OutputTokens
		case kTotalTokens:
			n = u.TotalTokens
		case kCachedTokens:
			n = u.CachedTokens
		case kCacheWriteTokens:
			n = u.CacheWriteTokens
		case kUnpricedTokens:
			n = u.UnpricedTokens
		default:
			return nil, false
		}
		b.charge(f.key, scalarSize)
		buf = strconv.AppendInt(buf, n, 10)
	}
	return append(buf, '}'), true
}

// appendKey writes the i-th member's key of an object (the comma before
// it, the colon after).
func appendKey(buf []byte, i int, key string) []byte {
	if i > 0 {
		buf = append(buf, ',')
	}
	return append(appendQuoted(buf, key), ':')
}

// appendEnum writes an enum value by gqlgen's own table of names; a value
// outside it is gqlgen's to report.
func appendEnum[T comparable](buf []byte, names map[T]string, v T) ([]byte, bool) {
	name, ok := names[v]
	if !ok {
		return nil, false
	}
	return appendQuoted(buf, name), true
}

// appendTime writes a Time! as graphql.MarshalTime does; the zero time is
// null there, an error for a non-null field, so gqlgen's to report.
func appendTime(buf []byte, t time.Time) ([]byte, bool) {
	if t.IsZero() {
		return nil, false
	}
	buf = append(buf, '"')
	buf = t.AppendFormat(buf, time.RFC3339Nano)
	return append(buf, '"'), true
}

// appendOptional writes a nullable text held as a string, "" for null.
func appendOptional(buf []byte, s string) []byte {
	if s == "" {
		return append(buf, "null"...)
	}
	return appendQuoted(buf, s)
}

const hexDigits = "0123456789ABCDEF"

// appendQuoted writes s as a JSON string the way it reaches a client from
// gqlgen: graphql.MarshalString escapes quotes, backslashes and control
// characters (\u00XX in upper case), and encoding/json, which marshals the
// response's data, escapes <, >, & and U+2028, U+2029; everything else
// (invalid UTF-8 included) goes as it is.
func appendQuoted(buf []byte, s string) []byte {
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !quoteStops[c] {
			continue
		}
		if c == 0xE2 { // U+2028 and U+2029 are E2 80 A8 and E2 80 A9
			if i+2 >= len(s) || s[i+1] != 0x80 || s[i+2]&^1 != 0xA8 {
				continue
			}
			buf = append(buf, s[start:i]...)
			buf = append(buf, '\\', 'u', '2', '0', '2', hexDigits[s[i+2]&1+8])
			i += 2
			start = i + 1
			continue
		}
		buf = append(buf, s[start:i]...)
		switch c {
		case '\t':
			buf = append(buf, `\t`...)
		case '\r':
			buf = append(buf, `\r`...)
		case '\n':
			buf = append(buf, `\n`...)
		case '\\':
			buf = append(buf, `\\`...)
		case '"':
			buf = append(buf, `\"`...)
		case '<': // encoding/json's escapes, in lower case
			buf = append(buf, `\u003c`...)
		case '>':
			buf = append(buf, `\u003e`...)
		case '&':
			buf = append(buf, `\u0026`...)
		default: // control characters, gqlgen's escapes in upper case
			buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}

// quoteStops are the bytes appendQuoted looks at twice: the ones it
// escapes and 0xE2, the first byte of U+2028 and U+2029.
var quoteStops = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	for _, c := range []byte{'\\', '"', '<', '>', '&', 0xE2} {
		t[c] = true
	}
	return t
}()
