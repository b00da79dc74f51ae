package edge

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/vektah/gqlparser/v2/ast"
)

// MaxCachedQueryBytes is the longest query text the kernel keeps parsed
// (1,000 queries) or as a persisted query (100 hashes): longer ones are
// parsed each time. Without it, a client sending distinct 8 MiB documents
// would make the caches hold gigabytes.
const MaxCachedQueryBytes = 16 << 10

// useQueryBounds bounds what parsing a query may cost: at most
// MaxQueryTokens tokens per document, and caches holding only short
// queries.
func useQueryBounds(srv *handler.Server) {
	srv.SetParserTokenLimit(MaxQueryTokens)
	srv.SetQueryCache(shortQueries[*ast.QueryDocument]{lru.New[*ast.QueryDocument](1000), func(q string, _ *ast.QueryDocument) bool { return len(q) <= MaxCachedQueryBytes }})
	srv.Use(extension.AutomaticPersistedQuery{Cache: shortQueries[string]{lru.New[string](100), func(_ string, q string) bool { return len(q) <= MaxCachedQueryBytes }}})
}

// shortQueries is a cache that adds only what keep accepts.
type shortQueries[T any] struct {
	graphql.Cache[T]
	keep func(key string, v T) bool
}

func (c shortQueries[T]) Get(ctx context.Context, key string) (T, bool) { return c.Cache.Get(ctx, key) }

func (c shortQueries[T]) Add(ctx context.Context, key string, v T) {
	if c.keep(key, v) {
		c.Cache.Add(ctx, key, v)
	}
}
