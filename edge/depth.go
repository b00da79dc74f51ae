package edge

import (
	"context"
	"fmt"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/foya-dev/foya/core"
)

// depthLimit rejects operations nested deeper than max fields (introspection
// fields are not counted, so GraphiQL's schema query always works).
type depthLimit struct{ max int }

var (
	_ graphql.HandlerExtension        = depthLimit{}
	_ graphql.OperationContextMutator = depthLimit{}
)

func (d depthLimit) ExtensionName() string                          { return "DepthLimit" }
func (d depthLimit) Validate(schema graphql.ExecutableSchema) error { return nil }

func (d depthLimit) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil {
		return nil
	}
	if depth := selectionDepth(oc.Operation.SelectionSet, 0, map[string]bool{}); depth > d.max {
		return &gqlerror.Error{
			Message:    fmt.Sprintf("operation is nested %d fields deep; the limit is %d", depth, d.max),
			Extensions: map[string]any{"code": string(core.CodeBadInput)},
		}
	}
	return nil
}

func selectionDepth(set ast.SelectionSet, depth int, visiting map[string]bool) int {
	deepest := depth
	for _, sel := range set {
		var d int
		switch s := sel.(type) {
		case *ast.Field:
			if len(s.Name) > 1 && s.Name[:2] == "__" {
				continue
			}
			d = selectionDepth(s.SelectionSet, depth+1, visiting)
		case *ast.InlineFragment:
			d = selectionDepth(s.SelectionSet, depth, visiting)
		case *ast.FragmentSpread:
			if s.Definition == nil || visiting[s.Name] {
				continue
			}
			visiting[s.Name] = true
			d = selectionDepth(s.Definition.SelectionSet, depth, visiting)
			delete(visiting, s.Name)
		}
		deepest = max(deepest, d)
	}
	return deepest
}
