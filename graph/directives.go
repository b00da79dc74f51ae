package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/foya-dev/foya/core"
)

// ConditionsAreBooleans (an operation middleware) refuses, with BAD_INPUT, an operation whose @skip
// or @include condition is not a Boolean once its variables are applied.
// Validation lets a nullable variable with a default stand in for the
// condition's Boolean!, and an explicit null then reaches gqlgen's field
// collection, which panics (found by FuzzGraphQLOperation).
func ConditionsAreBooleans(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	if oc == nil || oc.Operation == nil || oc.Doc == nil {
		return next(ctx)
	}
	var bad *gqlerror.Error
	check := func(ds ast.DirectiveList) {
		for _, name := range []string{"skip", "include"} {
			d := ds.ForName(name)
			if d == nil || bad != nil {
				continue
			}
			var v any
			var err error
			if arg := d.Arguments.ForName("if"); arg != nil && arg.Value != nil {
				v, err = arg.Value.Value(oc.Variables)
			}
			if _, ok := v.(bool); !ok || err != nil {
				bad = gqlerror.Errorf("@%s(if:) needs a Boolean, not null: give its variable a value", name)
				if d.Position != nil {
					bad.Locations = []gqlerror.Location{{Line: d.Position.Line, Column: d.Position.Column}}
				}
				bad.Extensions = map[string]any{"code": string(core.CodeBadInput)}
			}
		}
	}
	var walk func(ast.SelectionSet)
	walk = func(ss ast.SelectionSet) {
		for _, s := range ss {
			switch s := s.(type) {
			case *ast.Field:
				check(s.Directives)
				walk(s.SelectionSet)
			case *ast.InlineFragment:
				check(s.Directives)
				walk(s.SelectionSet)
			case *ast.FragmentSpread:
				check(s.Directives)
			}
		}
	}
	walk(oc.Operation.SelectionSet)
	for _, f := range oc.Doc.Fragments {
		walk(f.SelectionSet)
	}
	if bad != nil {
		return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{bad}})
	}
	return next(ctx)
}
