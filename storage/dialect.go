package storage

import (
	"strings"

	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"
)

// nulSafeDialect is bun's SQLite dialect with one change: a NUL character
// in a string literal becomes U+FFFD. bun refuses a string with a NUL by
// writing an invalid query (a NUL would cut SQLite's literal short), so an
// id or text with a NUL from a client ended as an internal error; now a
// lookup finds nothing (NOT_FOUND) and stored text carries the usual
// replacement character. Found by FuzzGraphQLOperation.
type nulSafeDialect struct{ *sqlitedialect.Dialect }

func newDialect() nulSafeDialect { return nulSafeDialect{sqlitedialect.New()} }

func (d nulSafeDialect) AppendString(b []byte, s string) []byte {
	return d.Dialect.AppendString(b, noNUL(s))
}

// nulSafePGDialect is bun's PostgreSQL dialect with the same change
// (PostgreSQL text cannot hold a NUL at all). Invalid UTF-8, which
// PostgreSQL also refuses, already becomes U+FFFD in bun's quoting.
type nulSafePGDialect struct{ *pgdialect.Dialect }

func newPGDialect() nulSafePGDialect { return nulSafePGDialect{pgdialect.New()} }

func (d nulSafePGDialect) AppendString(b []byte, s string) []byte {
	return d.Dialect.AppendString(b, noNUL(s))
}

func noNUL(s string) string {
	if strings.IndexByte(s, 0) >= 0 {
		return strings.ReplaceAll(s, "\x00", "\uFFFD")
	}
	return s
}
