package edge

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/engine"
)

// The cost model, checked before an operation runs. A field costs 1 plus
// the cost of its selections; a list field multiplies the cost of its
// selections by its expected length: the limit argument when it has one
// (events: 500 by default), else the page size first or last when given,
// else listSizes, else defaultListSize. Aliases
// are separate fields, so repeating a field under many aliases multiplies
// its cost. A mutation field (it writes) costs mutationCost more.
// Introspection has fixed costs: __schema 10,000 (the whole schema, a few
// thousand values), __type 100. Every element of a list in a field's
// arguments, from variables or literals and however deeply nested, costs 1
// more: a field handed 100,000 ids costs at least that.
const (
	defaultListSize     = 10
	mutationCost        = 100
	schemaIntrospection = 10_000
	typeIntrospection   = 100
)

// listSizes are the expected lengths of list fields without a limit
// argument, chosen for sessions that are long but ordinary.
var listSizes = map[string]int64{
	"Session.messages":             200,
	"Query.sessions":               100,
	"Query.connections":            20,
	"Query.projects":               50,
	"Connection.models":            50,
	"Session.queue":                engine.MaxQueueItems,
	"SessionEvent.queue":           engine.MaxQueueItems,
	"Message.toolCalls":            defaultListSize,
	"Message.fileChanges":          defaultListSize,
	"Session.children":             defaultListSize,
	"Message.segments":             defaultListSize,
	"Mutation.reorderConnections":  20,
	"Mutation.editQueuedMessage":   engine.MaxQueueItems,
	"Mutation.moveQueuedMessage":   engine.MaxQueueItems,
	"Mutation.deleteQueuedMessage": engine.MaxQueueItems,
}

// costLimit refuses operations whose estimated cost is over max.
type costLimit struct{ max int64 }

var (
	_ graphql.HandlerExtension        = costLimit{}
	_ graphql.OperationContextMutator = costLimit{}
)

func (c costLimit) ExtensionName() string                          { return "CostLimit" }
func (c costLimit) Validate(schema graphql.ExecutableSchema) error { return nil }

func (c costLimit) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil {
		return nil
	}
	if cost := operationCost(oc.Operation.SelectionSet, oc.Variables); cost > c.max {
		return &gqlerror.Error{
			Message: fmt.Sprintf("operation cost %s is over the limit of %d (a field costs 1, a list multiplies its selections by its limit argument or its expected length; aliases count separately): "+
				"select fewer fields or aliases, lower limits, or split it", costString(cost), c.max),
			Extensions: map[string]any{"code": string(core.CodeBadInput)},
		}
	}
	return nil
}

func costString(c int64) string {
	if c >= 1e18 {
		return "(over 10^18)"
	}
	return fmt.Sprint(c)
}

// operationCost estimates the cost of a selection set (saturating).
func operationCost(set ast.SelectionSet, vars map[string]any) int64 {
	var total int64
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			total = satAdd(total, fieldCost(s, vars))
		case *ast.InlineFragment:
			total = satAdd(total, operationCost(s.SelectionSet, vars))
		case *ast.FragmentSpread:
			if s.Definition != nil {
				total = satAdd(total, operationCost(s.Definition.SelectionSet, vars))
			}
		}
	}
	return total
}

func fieldCost(f *ast.Field, vars map[string]any) int64 {
	switch f.Name {
	case "__typename":
		return 1
	case "__schema":
		return schemaIntrospection
	case "__type":
		return typeIntrospection
	}
	children := operationCost(f.SelectionSet, vars)
	if f.Definition != nil && f.Definition.Type != nil && f.Definition.Type.Elem != nil {
		children = satMul(children, listSize(f, vars))
	}
	if f.ObjectDefinition != nil && f.ObjectDefinition.Name == "Mutation" {
		children = satAdd(children, mutationCost)
	}
	if len(f.Arguments) > 0 {
		for _, v := range f.ArgumentMap(vars) {
			children = satAdd(children, listElements(reflect.ValueOf(v)))
		}
	}
	return satAdd(1, children)
}

// listSize is the expected length of list field f.
func listSize(f *ast.Field, vars map[string]any) int64 {
	if arg := f.Definition.Arguments.ForName("limit"); arg != nil {
		v := f.ArgumentMap(vars)["limit"]
		if v == nil && arg.DefaultValue != nil {
			v, _ = arg.DefaultValue.Value(nil)
		}
		switch v := v.(type) {
		case int64:
			return max(v, 1)
		case int:
			return max(int64(v), 1)
		case float64:
			return max(int64(min(v, math.MaxInt64/2)), 1)
		case json.Number:
			if n, err := v.Int64(); err == nil {
				return max(n, 1)
			}
			return math.MaxInt64
		}
	}
	// A page size (first or last, as on Session.messages and Query.sessions)
	// is the length when given.
	for _, name := range []string{"first", "last"} {
		if f.Definition.Arguments.ForName(name) == nil {
			continue
		}
		switch v := f.ArgumentMap(vars)[name].(type) {
		case int64:
			return max(v, 1)
		case int:
			return max(int64(v), 1)
		case json.Number:
			if n, err := v.Int64(); err == nil {
				return max(n, 1)
			}
		}
	}
	if f.ObjectDefinition != nil {
		if n, ok := listSizes[f.ObjectDefinition.Name+"."+f.Name]; ok {
			return n
		}
	}
	return defaultListSize
}

// listElements counts the elements of the lists in an argument's value.
func listElements(v reflect.Value) int64 {
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return 0
		}
		return listElements(v.Elem())
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return 0 // bytes, not a list
		}
		n := int64(v.Len())
		for i := range v.Len() {
			n = satAdd(n, listElements(v.Index(i)))
		}
		return n
	case reflect.Map:
		var n int64
		it := v.MapRange()
		for it.Next() {
			n = satAdd(n, listElements(it.Value()))
		}
		return n
	}
	return 0
}

func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func satMul(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}
