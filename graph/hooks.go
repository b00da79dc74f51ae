package graph

import (
	"context"
	"encoding/json"

	"github.com/foya-dev/foya/core/hooks"
	"github.com/foya-dev/foya/core/session"
	"github.com/foya-dev/foya/graph/scalar"
)

// The resolvers of hooks: the kernel's hooks document and each project's.

// projectHooks serves projectHooks and trustProject: op (the hooks'
// ProjectState or Trust) on the project's directory.
func projectHooks(ctx context.Context, svc *session.Service, projectID string, op func(ctx context.Context, root string) (hooks.ProjectHooks, error)) (*hooks.ProjectHooks, error) {
	p, err := svc.Project(ctx, projectID)
	if err != nil {
		return nil, err
	}
	return ptr(op(ctx, p.Path))
}

// hooksDocument is a hooks document as JSON, or the error.
func hooksDocument(doc json.RawMessage, err error) (scalar.JSON, error) {
	if err != nil {
		return nil, err
	}
	return scalar.JSON(doc), nil
}

// validJSON maps a document that is not JSON to null.
func validJSON(doc json.RawMessage) scalar.JSON {
	if !json.Valid(doc) {
		return nil
	}
	return scalar.JSON(doc)
}
