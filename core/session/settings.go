package session

import (
	"context"
	"slices"
	"strings"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/catalog"
)

// The settings of a session that UpdateSession changes: each helper
// applies part of an UpdateSessionInput to the session's metadata and
// names the fields that changed.

// effortLister is the optional part of SessionModels that knows the
// reasoning efforts a model declares.
type effortLister interface {
	ReasoningEfforts(connectionID, model string) []string
}

// modelEfforts lists the reasoning efforts model declares, when models knows.
func modelEfforts(models SessionModels, connectionID, model string) []string {
	if l, ok := models.(effortLister); ok && model != "" {
		return l.ReasoningEfforts(connectionID, model)
	}
	return nil
}

func effortAllowedList(efforts []string, effort string) bool {
	return catalog.EffortAllowed(core.Capabilities{ReasoningEfforts: efforts}, effort)
}

func effortError(effort, model string, efforts []string) error {
	return core.Errorf(core.CodeBadInput, "reasoningEffort %q: model %s declares %s; choose one of them or clear it", effort, model, strings.Join(efforts, ", "))
}

// applySettings applies in's title, pin, reasoning effort, approval mode
// and agent mode to meta and names the fields that changed.
func applySettings(in core.UpdateSessionInput, meta *core.SessionMeta) ([]string, error) {
	var changed []string
	if in.Title != nil && *in.Title != meta.Title {
		if err := core.ValidTitle(*in.Title); err != nil {
			return nil, err
		}
		meta.Title = *in.Title
		changed = append(changed, "title")
	}
	if in.Pinned != nil && *in.Pinned != meta.Pinned {
		meta.Pinned = *in.Pinned
		changed = append(changed, "pinned")
	}
	if in.ReasoningEffort != nil && *in.ReasoningEffort != meta.ReasoningEffort {
		if err := core.ValidReasoningEffort(*in.ReasoningEffort); err != nil {
			return nil, err
		}
		meta.ReasoningEffort = *in.ReasoningEffort
		changed = append(changed, "reasoningEffort")
	}
	if in.ApprovalMode != nil && *in.ApprovalMode != meta.ApprovalMode {
		if !in.ApprovalMode.Valid() {
			return nil, core.Errorf(core.CodeBadInput, "approvalMode %q: use explore, ask, guarded or bypass", *in.ApprovalMode)
		}
		meta.ApprovalMode = *in.ApprovalMode
		changed = append(changed, "approvalMode")
	}
	if in.AgentMode != nil && *in.AgentMode != meta.AgentMode {
		if !in.AgentMode.Valid() {
			return nil, core.Errorf(core.CodeBadInput, "agentMode %q: use execute, plan or awaiting_confirmation", *in.AgentMode)
		}
		if *in.AgentMode == core.AgentAwaitingConfirmation {
			return nil, core.Errorf(core.CodeBadInput, "agentMode AWAITING_CONFIRMATION is set by the kernel when a PLAN turn completes; set PLAN or EXECUTE")
		}
		meta.AgentMode = *in.AgentMode
		changed = append(changed, "agentMode")
	}
	return changed, nil
}

// bindModel applies in's connection and model to meta, resolved through
// models (nil accepts whatever the client names), and names the fields
// that changed.
func bindModel(ctx context.Context, models SessionModels, in core.UpdateSessionInput, meta *core.SessionMeta) ([]string, error) {
	if in.ConnectionID == nil && in.Model == nil {
		return nil, nil
	}
	var changed []string
	conn, model := meta.ConnectionID, meta.Model
	if in.ConnectionID != nil {
		conn = *in.ConnectionID
		if in.Model == nil && conn != meta.ConnectionID {
			model = "" // a new connection without a model: its default
		}
	}
	if in.Model != nil {
		model = *in.Model
	}
	if models != nil && (conn != "" || model != "") {
		ref, err := models.ResolveSessionModel(ctx, conn, model)
		if err != nil {
			return nil, err
		}
		conn, model = ref.ConnectionID, ref.Model
	}
	if conn != meta.ConnectionID {
		meta.ConnectionID = conn
		changed = append(changed, "connectionId")
	}
	if model != meta.Model {
		meta.Model = model
		changed = append(changed, "model")
	}
	return changed, nil
}

// bindFallbacks applies in's fallback chain to meta, each entry resolved
// through models, and names the field when it changed.
func bindFallbacks(ctx context.Context, models SessionModels, in core.UpdateSessionInput, meta *core.SessionMeta) ([]string, error) {
	if in.FallbackModels == nil {
		return nil, nil
	}
	refs, err := fallbackModels(ctx, models, *in.FallbackModels)
	if err != nil {
		return nil, err
	}
	if slices.Equal(refs, meta.FallbackModels) {
		return nil, nil
	}
	meta.FallbackModels = refs
	return []string{"fallbackModels"}, nil
}
