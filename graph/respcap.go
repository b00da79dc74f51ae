package graph

import (
	"context"
	"errors"
	"reflect"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/foya-dev/foya/core"
)

// ResponseCap bounds one response while it is built: every resolved field
// adds its approximate encoded size (name, punctuation, string and JSON
// bytes) to a budget; once the budget is spent, no further resolver runs
// and the response becomes a single BAD_INPUT error, so an oversized
// response is never assembled. Each subscription event is a response of
// its own.
type ResponseCap struct{ Max int64 }

var (
	_ graphql.HandlerExtension    = ResponseCap{}
	_ graphql.ResponseInterceptor = ResponseCap{}
	_ graphql.FieldInterceptor    = ResponseCap{}
)

// errResponseTooLarge is what fields return once the budget is spent; the
// presenter maps every occurrence to one shared error (no allocation per
// field) and InterceptResponse replaces them all.
var errResponseTooLarge = errors.New("response too large")

// responseTooLarge is the shared presented form of errResponseTooLarge.
var responseTooLarge = &gqlerror.Error{
	Message:    "response too large",
	Extensions: map[string]any{"code": string(core.CodeBadInput)},
}

type responseBudget struct {
	// max is the response size limit; left is what is left of it.
	max  int64
	left atomic.Int64
	over atomic.Bool
	// resolvers admits resolverSlots resolver calls at a time, so that the
	// data resolvers load is charged (by their selections) before more of
	// it is loaded: memory stays near the budget even when many aliases
	// would otherwise load in parallel.
	resolvers chan struct{}
}

// refuse marks the response as over its budget (InterceptResponse then
// answers with the one refusal) and returns what the field returns.
func (b *responseBudget) refuse() error {
	b.over.Store(true)
	return errResponseTooLarge
}

// resolverSlots is how many resolvers of one response run at once.
const resolverSlots = 4

type budgetKey struct{}

// preChargedKey holds what a response's other part already charged to its
// budget (SessionList's list, beside the fields gqlgen answers).
type preChargedKey struct{}

func (c ResponseCap) ExtensionName() string                          { return "ResponseCap" }
func (c ResponseCap) Validate(schema graphql.ExecutableSchema) error { return nil }

func (c ResponseCap) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	b := &responseBudget{max: c.Max, resolvers: make(chan struct{}, resolverSlots)}
	b.left.Store(c.Max)
	if spent, ok := ctx.Value(preChargedKey{}).(int64); ok {
		b.left.Add(-spent) // the part of the response SessionList wrote
	}
	resp := next(context.WithValue(ctx, budgetKey{}, b))
	if resp == nil || !b.over.Load() {
		return resp
	}
	msg := "the response would be larger than " + ByteSize(c.Max) + " (the response size limit) and was not built: " +
		"select fewer fields, lower limits (sessions: page with first/after; events: page with afterSeq; Session.messages: page with first/afterSeq or last/beforeSeq; Message.text: offset/limit) or split the operation"
	if oc := graphql.GetOperationContext(ctx); oc != nil && oc.Operation != nil && oc.Operation.Operation == ast.Mutation {
		msg += "; the mutation itself ran"
	}
	return &graphql.Response{Errors: gqlerror.List{{
		Message:    msg,
		Extensions: map[string]any{"code": string(core.CodeBadInput)},
	}}}
}

func (c ResponseCap) InterceptField(ctx context.Context, next graphql.Resolver) (any, error) {
	b, _ := ctx.Value(budgetKey{}).(*responseBudget)
	if b == nil {
		return next(ctx)
	}
	fc := graphql.GetFieldContext(ctx)
	if fc != nil && fc.IsResolver {
		select {
		case b.resolvers <- struct{}{}:
			defer func() { <-b.resolvers }()
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if b.over.Load() {
		return nil, errResponseTooLarge
	}
	res, err := next(ctx)
	n := int64(8) + encodedSize(res)
	if fc != nil {
		n += int64(len(fc.Field.Alias))
	}
	if b.left.Add(-n) < 0 {
		return nil, b.refuse()
	}
	return res, err
}

// encodedSize approximates the bytes a resolved value adds itself (its
// selections count on their own): strings and raw JSON by length, lists
// by their punctuation, everything else a few bytes.
func encodedSize(v any) int64 {
	switch t := v.(type) {
	case nil:
		return 4
	case string:
		return int64(len(t)) + 2
	case *string:
		if t == nil {
			return 4
		}
		return int64(len(*t)) + 2
	case []byte:
		return int64(len(t))
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return 4
		}
		rv = rv.Elem()
	}
	switch rv.Kind() {
	case reflect.String:
		return int64(rv.Len()) + 2
	case reflect.Slice:
		if rv.Type().Elem().Kind() == reflect.Uint8 {
			return int64(rv.Len())
		}
		return int64(rv.Len()) + 2
	}
	return 8
}
