package storage

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"reflect"

	"modernc.org/libc"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// openSQLite is a pool of connections to the SQLite database dsn names,
// each in SQLite's multi-thread mode: without a mutex of its own.
//
// The SQLite driver opens every connection serialized
// (SQLITE_OPEN_FULLMUTEX), so that SQLite enters and leaves the
// connection's recursive mutex in every call made to it: each step, and
// each column read (three calls a column: its type, its value, its length).
// In a CPU profile of the session list's walk that was a tenth of the
// samples (the driver's mutex is a compare-and-swap and a sync.Mutex,
// entered through a function pointer); without it the walk takes about 4 %
// less CPU (BENCHMARKS.md, "twentieth session"). database/sql never uses a
// connection from two goroutines at once, which is what multi-thread mode
// asks; the driver's one call from another goroutine, sqlite3_interrupt on
// a cancelled context, takes no mutex in SQLite. So each connection drops
// its mutex as it opens (dropConnMutex), which is what SQLITE_OPEN_NOMUTEX
// would have done: SQLite's own mutexes (the page cache's, the allocator's,
// the VFS's) stay.
func openSQLite(dsn string) *sql.DB { return sql.OpenDB(sqliteConnector{dsn: dsn}) }

// sqliteDriver is the SQLite driver of every connection to foya.db.
var sqliteDriver = &sqlite.Driver{}

type sqliteConnector struct{ dsn string }

func (c sqliteConnector) Connect(context.Context) (driver.Conn, error) {
	conn, err := sqliteDriver.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	dropConnMutex(conn)
	return conn, nil
}

func (sqliteConnector) Driver() driver.Driver { return sqliteDriver }

// dropConnMutex frees the mutex of conn, a connection the SQLite driver
// has just opened and nothing uses yet, and leaves it without one, as
// SQLITE_OPEN_NOMUTEX opens it. It reports whether conn is without a
// mutex now: false if the driver's connection is not the structure this
// was written against (see connHandle), which leaves it serialized.
func dropConnMutex(conn driver.Conn) bool {
	h, t, ok := connHandle(conn)
	if !ok {
		return false
	}
	if m := sqlite3.Xsqlite3_db_mutex(t, h); m != 0 {
		(*sqlite3.Tsqlite3)(cmem(h)).Fmutex = 0
		sqlite3.Xsqlite3_mutex_free(t, m)
	}
	return true
}

// connHandle is the sqlite3 handle of conn, a connection of the SQLite
// driver, with the driver's thread-local state it calls SQLite with (its
// unexported fields db and tls); ok is false if conn has no such fields.
func connHandle(conn any) (h uintptr, t *libc.TLS, ok bool) {
	v := reflect.ValueOf(conn)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return 0, nil, false
	}
	db, tls := v.Elem().FieldByName("db"), v.Elem().FieldByName("tls")
	if db.Kind() != reflect.Uintptr || db.Uint() == 0 || !tls.IsValid() || tls.Type() != reflect.TypeFor[*libc.TLS]() || tls.IsNil() {
		return 0, nil, false
	}
	return uintptr(db.Uint()), (*libc.TLS)(tls.UnsafePointer()), true
}
