package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/pubsub"
	"github.com/foya-dev/foya/core/telemetry"
)

// Config wires the session service.
type Config struct {
	Store  core.Store
	Broker *pubsub.Broker
	Logger *slog.Logger
	// Models resolves and checks the model a session binds (PRV-1, PRV-2).
	// Nil accepts whatever the client names.
	Models SessionModels
	// MaxCatchUp is how many persisted events a lagging subscriber may re-read
	// from the store before it is told to resubscribe (default 10000).
	MaxCatchUp int
	// Ownership decides which kernel runs a session when several share the
	// database; nil: this kernel owns every session.
	Ownership core.Ownership
	// Changes, when set, is the catalog the service watches: after each
	// change it broadcasts catalog_updated and unbinds the sessions left
	// without a usable model (ApplyCatalogChange).
	Changes CatalogChanges
}

// CatalogChanges reports the catalog's committed changes (catalog.Catalog).
type CatalogChanges interface {
	Watch(fn func(ctx context.Context, change core.CatalogChange))
}

// SessionModels is the part of the model catalog that sessions need.
type SessionModels interface {
	// ResolveSessionModel picks the connection and model for a session:
	// the explicit choice when given (validated), else the defaults.
	ResolveSessionModel(ctx context.Context, connectionID, model string) (core.ModelRef, error)
}

// Service owns sessions and projects: every state change is appended to the
// session's log (one transaction with its projections) and then published.
type Service struct {
	store  core.Store
	broker *pubsub.Broker
	log    *slog.Logger
	models SessionModels

	maxCatchUp int
	locks      sync.Map // session id → *sync.Mutex
	own        core.Ownership
	acquiring  sync.Map // session id → *sync.Mutex (see acquireLock)
	history    *HistoryCache
}

// New builds the session service.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil || cfg.Broker == nil {
		return nil, fmt.Errorf("session service: store and broker are required")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	catchUp := cfg.MaxCatchUp
	if catchUp <= 0 {
		catchUp = defaultMaxCatchUp
	}
	s := &Service{store: cfg.Store, broker: cfg.Broker, log: log, models: cfg.Models, maxCatchUp: catchUp, own: cfg.Ownership, history: newHistoryCache(DefaultHistoryCacheBytes)}
	if cfg.Changes != nil {
		cfg.Changes.Watch(s.ApplyCatalogChange)
	}
	return s, nil
}

// Broker returns the service's broker.
func (s *Service) Broker() *pubsub.Broker { return s.broker }

// Store returns the service's store.
func (s *Service) Store() core.Store { return s.store }

// Lock serialises writers of one session, so that events are published in
// seq order. It returns the unlock function.
func (s *Service) Lock(sessionID string) func() {
	m, _ := s.locks.LoadOrStore(sessionID, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// Commit appends events to a session and publishes them. The caller holds
// Lock(sessionID).
func (s *Service) Commit(ctx context.Context, sessionID string, expectedHead int64, events ...core.Event) ([]core.Event, error) {
	if err := s.fence(ctx, sessionID); err != nil {
		return nil, err
	}
	appendStart := time.Now()
	out, err := s.store.Append(ctx, sessionID, expectedHead, events)
	telemetry.Since(telemetry.EventAppend, appendStart)
	if err != nil {
		s.history.drop(sessionID)
		return nil, err
	}
	s.history.appended(sessionID, out)
	for _, ev := range out {
		s.broker.Publish(ev)
		if ev.Type == core.EventPhaseChanged {
			// Sidebars show which sessions are running.
			s.broker.PublishKernel(core.KernelEvent{Type: core.KernelSessionUpdated, SessionID: sessionID, At: ev.At})
		}
	}
	return out, nil
}

// Append locks the session, appends events and publishes them.
func (s *Service) Append(ctx context.Context, sessionID string, events ...core.Event) ([]core.Event, error) {
	defer s.Lock(sessionID)()
	return s.Commit(ctx, sessionID, core.AnyHead, events...)
}

// Emit publishes a live-only event (a delta or a snapshot); it is never stored.
func (s *Service) Emit(sessionID string, t core.EventType, payload any) {
	ev, err := core.NewEvent(sessionID, t, payload)
	if err != nil {
		s.log.Error("build live event", "session_id", sessionID, "type", t, "err", err)
		return
	}
	s.broker.Publish(ev)
}

// CreateSession creates a top-level (or, for the kernel, child) session.
func (s *Service) CreateSession(ctx context.Context, in core.CreateSessionInput) (core.Session, error) {
	meta, err := newSessionMeta(in)
	if err != nil {
		return core.Session{}, err
	}
	if in.ProjectID != "" {
		if _, err := s.store.Project(ctx, in.ProjectID); err != nil {
			return core.Session{}, fmt.Errorf("create session: %w", err)
		}
		meta.ProjectID = in.ProjectID
	}
	if in.ParentID != "" {
		if _, err := s.store.Session(ctx, in.ParentID); err != nil {
			return core.Session{}, fmt.Errorf("create child session: %w", err)
		}
	}
	if err := bindSessionModel(ctx, s.models, &meta, in); err != nil {
		return core.Session{}, err
	}
	ev, err := core.NewEvent(meta.ID, core.EventSessionCreated, core.SessionPayload{Session: meta})
	if err != nil {
		return core.Session{}, err
	}
	// The node that creates a session owns it.
	if err := s.ClaimNew(ctx, meta.ID); err != nil {
		return core.Session{}, err
	}
	unlock := s.Lock(meta.ID)
	_, err = s.Commit(ctx, meta.ID, 0, ev)
	unlock()
	if err != nil {
		return core.Session{}, fmt.Errorf("create session: %w", err)
	}
	s.broker.PublishKernel(core.KernelEvent{Type: core.KernelSessionCreated, SessionID: meta.ID, At: ev.At})
	s.log.Info("session created", "session_id", meta.ID, "project_id", meta.ProjectID)
	return s.store.Session(ctx, meta.ID)
}

// newSessionMeta is a new session's metadata from in, with the default
// approval and agent modes, once its modes, effort and title are valid.
func newSessionMeta(in core.CreateSessionInput) (core.SessionMeta, error) {
	meta := core.SessionMeta{
		ID: core.NewID("ses"), ParentID: in.ParentID, Source: in.Source, Title: in.Title,
		ReasoningEffort: in.ReasoningEffort, ApprovalMode: in.ApprovalMode, AgentMode: in.AgentMode,
		Agent: in.Agent, CreatedAt: time.Now().UTC(), Worktree: in.Worktree,
	}
	if in.ID != "" {
		meta.ID = in.ID
	}
	if meta.ApprovalMode == "" {
		meta.ApprovalMode = core.ApprovalAsk
	}
	if !meta.ApprovalMode.Valid() {
		return core.SessionMeta{}, core.Errorf(core.CodeBadInput, "approvalMode %q: use explore, ask, guarded or bypass", in.ApprovalMode)
	}
	if meta.AgentMode == "" {
		meta.AgentMode = core.AgentExecute
	}
	if !meta.AgentMode.Valid() {
		return core.SessionMeta{}, core.Errorf(core.CodeBadInput, "agentMode %q: use execute, plan or awaiting_confirmation", in.AgentMode)
	}
	if meta.AgentMode == core.AgentAwaitingConfirmation {
		meta.AgentMode = core.AgentPlan // only a completed PLAN turn awaits confirmation
	}
	if err := core.ValidReasoningEffort(in.ReasoningEffort); err != nil {
		return core.SessionMeta{}, err
	}
	if err := core.ValidTitle(in.Title); err != nil {
		return core.SessionMeta{}, err
	}
	return meta, nil
}

// bindSessionModel sets meta's model (resolved by models, when there
// are any), its fallback models, and checks its reasoning effort against
// the model (a sub-agent's falls back to the model's default).
func bindSessionModel(ctx context.Context, models SessionModels, meta *core.SessionMeta, in core.CreateSessionInput) error {
	meta.ConnectionID, meta.Model = in.ConnectionID, in.Model
	if models != nil {
		ref, err := models.ResolveSessionModel(ctx, in.ConnectionID, in.Model)
		switch {
		case err == nil:
			meta.ConnectionID, meta.Model = ref.ConnectionID, ref.Model
		case in.ConnectionID == "" && in.Model == "" && errors.Is(err, core.ErrUnavailable):
			// No language connection yet: the session starts unbound and
			// turns fail with UNAVAILABLE until one is chosen.
			meta.ConnectionID, meta.Model = "", ""
		default:
			return fmt.Errorf("create session: %w", err)
		}
	}
	fallbacks, err := fallbackModels(ctx, models, in.FallbackModels)
	if err != nil {
		return err
	}
	meta.FallbackModels = fallbacks
	if efforts := modelEfforts(models, meta.ConnectionID, meta.Model); !effortAllowedList(efforts, meta.ReasoningEffort) {
		if in.ParentID == "" {
			return effortError(meta.ReasoningEffort, meta.Model, efforts)
		}
		meta.ReasoningEffort = "" // a sub-agent on another model: its default effort
	}
	return nil
}

// UpdateSession changes settings. A change of connection, model, effort or
// approval mode applies to the next model request or tool call (SES-8); the
// event records it. Binding a project is allowed once (SES-3).
func (s *Service) UpdateSession(ctx context.Context, id string, in core.UpdateSessionInput) (core.Session, error) {
	defer s.Lock(id)()
	cur, err := s.store.Session(ctx, id)
	if err != nil {
		return core.Session{}, err
	}
	meta := cur.SessionMeta
	changed, err := applySettings(in, &meta)
	if err != nil {
		return core.Session{}, err
	}
	if in.ProjectID != nil && *in.ProjectID != meta.ProjectID {
		if meta.ProjectID != "" {
			return core.Session{}, core.Errorf(core.CodeConflict, "session %s is bound to project %s; a bound session can never be re-bound or unbound (create a new session to work elsewhere)", id, meta.ProjectID)
		}
		if _, err := s.store.Project(ctx, *in.ProjectID); err != nil {
			return core.Session{}, err
		}
		meta.ProjectID = *in.ProjectID
		changed = append(changed, "projectId")
	}
	fallbacks, err := bindFallbacks(ctx, s.models, in, &meta)
	if err != nil {
		return core.Session{}, err
	}
	models, err := bindModel(ctx, s.models, in, &meta)
	if err != nil {
		return core.Session{}, err
	}
	changed = append(append(changed, fallbacks...), models...)
	if efforts := modelEfforts(s.models, meta.ConnectionID, meta.Model); !effortAllowedList(efforts, meta.ReasoningEffort) {
		if in.ReasoningEffort != nil {
			return core.Session{}, effortError(meta.ReasoningEffort, meta.Model, efforts)
		}
		// The model changed to one that does not offer the effort: back to
		// the model's default rather than a request it would reject.
		meta.ReasoningEffort = ""
		if !slices.Contains(changed, "reasoningEffort") {
			changed = append(changed, "reasoningEffort")
		}
	}
	if len(changed) == 0 {
		return cur, nil
	}
	if err := s.CommitMeta(ctx, meta, changed); err != nil {
		return core.Session{}, err
	}
	return s.store.Session(ctx, id)
}

// CommitMeta appends a session_updated event; the caller holds the lock.
func (s *Service) CommitMeta(ctx context.Context, meta core.SessionMeta, changed []string) error {
	ev, err := core.NewEvent(meta.ID, core.EventSessionUpdated, core.SessionPayload{Session: meta, Changed: changed})
	if err != nil {
		return err
	}
	if _, err := s.Commit(ctx, meta.ID, core.AnyHead, ev); err != nil {
		return fmt.Errorf("update session %s: %w", meta.ID, err)
	}
	s.broker.PublishKernel(core.KernelEvent{Type: core.KernelSessionUpdated, SessionID: meta.ID, At: ev.At})
	return nil
}

// SetPhase records a phase change; only the kernel calls it.
func (s *Service) SetPhase(ctx context.Context, id string, phase core.Phase, reason string) error {
	ev, err := core.NewEvent(id, core.EventPhaseChanged, core.PhasePayload{Phase: phase, Reason: reason})
	if err != nil {
		return err
	}
	if _, err := s.Append(ctx, id, ev); err != nil {
		return fmt.Errorf("set phase of %s: %w", id, err)
	}
	return nil
}

// ResetPhases sets every persisted session that is not idle back to idle
// (SES-4): goroutines of an earlier process cannot continue across a restart.
// A turn the log shows as started but not finished gets its turn_finished
// (cancelled) in the same transaction, so every turn in the log has an end.
// With other kernels on the database, only sessions without a live owner
// are reset (this node takes them); the others keep running where they are.
func (s *Service) ResetPhases(ctx context.Context) (int, error) {
	busy, err := s.store.Sessions(ctx, core.SessionFilter{IncludeChildren: true, NotIdle: true})
	if err != nil {
		return 0, fmt.Errorf("reset phases: %w", err)
	}
	n := 0
	for _, sess := range busy {
		if s.own != nil {
			o, err := s.AcquireSession(ctx, sess.ID)
			if err != nil {
				return n, err
			}
			if o.Local {
				n++
			}
			continue
		}
		if err := s.recoverSession(ctx, sess.ID, "kernel restarted"); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// unfinishedTurn returns the id of the session's last turn when the log has
// its turn_started but no turn_finished after it.
func (s *Service) unfinishedTurn(ctx context.Context, sessionID string) string {
	h, ok := s.store.(core.HistoryStore)
	if !ok {
		return ""
	}
	started, err := h.LatestEvent(ctx, sessionID, core.EventTurnStarted)
	if err != nil {
		return ""
	}
	if finished, err := h.LatestEvent(ctx, sessionID, core.EventTurnFinished); err == nil && finished.Seq > started.Seq {
		return ""
	}
	var p core.TurnPayload
	if started.Decode(&p) != nil {
		return ""
	}
	return p.TurnID
}

// Session returns one session.
func (s *Service) Session(ctx context.Context, id string) (core.Session, error) {
	return s.store.Session(ctx, id)
}

// Sessions lists sessions, newest first.
func (s *Service) Sessions(ctx context.Context, f core.SessionFilter) ([]core.Session, error) {
	return s.store.Sessions(ctx, f)
}

// Messages returns a session's history projection.
func (s *Service) Messages(ctx context.Context, id string, includeInactive bool) ([]core.Message, error) {
	if _, err := s.store.Session(ctx, id); err != nil {
		return nil, err
	}
	return s.store.Messages(ctx, id, includeInactive)
}

// MaxEventPage bounds one page of the events query.
const MaxEventPage = 5000

// Events returns a page of a session's persisted log.
func (s *Service) Events(ctx context.Context, id string, afterSeq int64, limit int) ([]core.Event, error) {
	if afterSeq < 0 {
		return nil, core.Errorf(core.CodeBadInput, "afterSeq must be 0 or more")
	}
	if limit < 1 || limit > MaxEventPage {
		return nil, core.Errorf(core.CodeBadInput, "limit must be between 1 and %d", MaxEventPage)
	}
	if _, err := s.store.Session(ctx, id); err != nil {
		return nil, err
	}
	return s.store.Events(ctx, id, afterSeq, limit)
}

// DeleteSession removes a session and its descendants irreversibly and
// broadcasts session_deleted for each (SES-13). It returns the artifact
// hashes nothing refers to any more.
func (s *Service) DeleteSession(ctx context.Context, id string) ([]string, error) {
	unlock := s.Lock(id)
	del, err := s.store.DeleteSession(ctx, id)
	unlock()
	if err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	for _, sid := range del.IDs {
		s.Emit(sid, core.EventSessionDeleted, struct{}{})
		s.broker.PublishKernel(core.KernelEvent{Type: core.KernelSessionDeleted, SessionID: sid, At: now})
		s.locks.Delete(sid)
		s.history.drop(sid)
		if s.own != nil {
			s.own.Release(ctx, sid)
			s.acquiring.Delete(sid)
		}
		s.log.Info("session deleted", "session_id", sid)
	}
	return del.OrphanBlobs, nil
}

// ApplyCatalogChange is what the service does after a catalog change (it
// watches Config.Changes): it broadcasts
// catalog_updated and unbinds the sessions that the change left without a
// usable model (PRV-13): sessions of a deleted connection lose connection
// and model; sessions whose model was removed lose the model. Their history
// stays; turns fail with UNAVAILABLE until a valid choice is made.
func (s *Service) ApplyCatalogChange(ctx context.Context, ch core.CatalogChange) {
	ctx = unfenced(ctx) // the sessions may be owned by other kernels
	s.broker.PublishKernel(core.KernelEvent{Type: core.KernelCatalogUpdated, ConnectionID: ch.ConnectionID, At: time.Now().UTC()})
	if err := s.unbindAfter(ctx, ch); err != nil {
		s.log.Error("unbind sessions after a catalog change", "kind", ch.Kind, "connection_id", ch.ConnectionID, "err", err)
	}
}

func (s *Service) unbindAfter(ctx context.Context, ch core.CatalogChange) error {
	unbind := func(connID, model string) error {
		sessions, err := s.store.Sessions(ctx, core.SessionFilter{ConnectionID: connID, IncludeChildren: true})
		if err != nil {
			return fmt.Errorf("find sessions of connection %s: %w", connID, err)
		}
		for _, sess := range sessions {
			if model != "" && sess.Model != model {
				continue
			}
			if err := s.unbindSession(ctx, sess.ID, connID, model); err != nil {
				return err
			}
		}
		return nil
	}
	var errs []error
	for _, id := range ch.DeletedConnectionIDs {
		errs = append(errs, unbind(id, ""))
	}
	for _, ref := range ch.RemovedModels {
		errs = append(errs, unbind(ref.ConnectionID, ref.Model))
	}
	return errors.Join(errs...)
}

func (s *Service) unbindSession(ctx context.Context, id, connID, model string) error {
	defer s.Lock(id)()
	cur, err := s.store.Session(ctx, id)
	if errors.Is(err, core.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	meta := cur.SessionMeta
	if meta.ConnectionID != connID || (model != "" && meta.Model != model) {
		return nil // changed meanwhile
	}
	changed := []string{"model"}
	meta.Model = ""
	if model == "" {
		meta.ConnectionID = ""
		changed = append(changed, "connectionId")
	}
	if err := s.CommitMeta(ctx, meta, changed); err != nil {
		return err
	}
	s.log.Info("session unbound from its model", "session_id", id, "connection_id", connID, "model", model)
	return nil
}

// SetTasks replaces the session's task list (the tasks tool) and records it
// as session_updated.
func (s *Service) SetTasks(ctx context.Context, id string, tasks []core.Task) error {
	defer s.Lock(id)()
	cur, err := s.store.Session(ctx, id)
	if err != nil {
		return err
	}
	meta := cur.SessionMeta
	meta.Tasks = tasks
	return s.CommitMeta(ctx, meta, []string{"tasks"})
}

// SwapAgentMode sets a session's agent mode to to when it is one of from,
// atomically; ok is false (and nothing is written) otherwise.
func (s *Service) SwapAgentMode(ctx context.Context, id string, from []core.AgentMode, to core.AgentMode) (cur core.AgentMode, ok bool, err error) {
	defer s.Lock(id)()
	sess, err := s.store.Session(ctx, id)
	if err != nil {
		return "", false, err
	}
	if !slices.Contains(from, sess.AgentMode) {
		return sess.AgentMode, false, nil
	}
	meta := sess.SessionMeta
	meta.AgentMode = to
	if err := s.CommitMeta(ctx, meta, []string{"agentMode"}); err != nil {
		return sess.AgentMode, false, err
	}
	return to, true, nil
}
