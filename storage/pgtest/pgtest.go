// Package pgtest gives tests a fresh PostgreSQL database each: it creates
// foya_test_<random> on the server named by FOYA_TEST_DATABASE (default the
// project's test server, postgres://postgres@127.0.0.1:5432/test) and drops
// it when the test ends.
//
// When no server answers, tests skip with a visible message; they fail
// instead when FOYA_TEST_DATABASE is set, or under CI=true when PostgreSQL
// is installed on the machine (the CI script starts it).
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
)

// DefaultURL is the project's test server (trust authentication).
const DefaultURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// EnvVar names the server (any database on it) tests create their
// databases on; setting it also makes the GraphQL suite run on PostgreSQL.
const EnvVar = "FOYA_TEST_DATABASE"

// ServerURL is the URL of the server tests use.
func ServerURL() string {
	if v := os.Getenv(EnvVar); v != "" {
		return v
	}
	return DefaultURL
}

// Selected reports whether FOYA_TEST_DATABASE names a PostgreSQL server,
// i.e. suites that run on SQLite by default should run on PostgreSQL.
func Selected() bool { return os.Getenv(EnvVar) != "" }

var (
	pingOnce sync.Once
	pingErr  error
)

// Available reports whether the server answers (checked once per process).
func Available() error {
	pingOnce.Do(func() {
		db, err := sql.Open("pgx", ServerURL())
		if err != nil {
			pingErr = err
			return
		}
		defer db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		pingErr = db.PingContext(ctx)
	})
	return pingErr
}

// installed reports whether a PostgreSQL server is installed here.
func installed() bool {
	if _, err := os.Stat("/etc/postgresql"); err == nil {
		return true
	}
	_, err := exec.LookPath("pg_ctlcluster")
	return err == nil
}

// Require skips t (fails it under CI=true with PostgreSQL installed) when
// the server does not answer.
func Require(t testing.TB) {
	t.Helper()
	if err := Available(); err != nil {
		msg := fmt.Sprintf("PostgreSQL at %s does not answer (%v); start it with: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start", redact(ServerURL()), err)
		if Selected() || os.Getenv("CI") == "true" && installed() {
			t.Fatal(msg)
		}
		t.Skip("SKIP: " + msg)
	}
}

// NewDatabase creates a fresh database for t and returns its URL; it is
// dropped (with any connections left) when t ends.
func NewDatabase(t testing.TB) string {
	t.Helper()
	return NewDatabaseFrom(t, "")
}

// NewDatabaseFrom is NewDatabase with a copy of the database template (made
// by NewTemplate) instead of an empty one; "" is NewDatabase.
func NewDatabaseFrom(t testing.TB, template string) string {
	t.Helper()
	Require(t)
	name, err := randomName("foya_test_")
	if err != nil {
		t.Fatal(err)
	}
	admin, err := sql.Open("pgx", ServerURL())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	create := "CREATE DATABASE " + name
	if template != "" {
		create += " TEMPLATE " + template
	}
	if _, err := admin.ExecContext(ctx, create); err != nil {
		admin.Close()
		t.Fatalf("create test database %s: %v", name, err)
	}
	t.Cleanup(func() {
		defer admin.Close()
		if err := dropDatabase(admin, name); err != nil {
			t.Errorf("drop test database %s: %v", name, err)
		}
	})
	return WithDatabase(ServerURL(), name)
}

// NewTemplate creates a database that prepare fills (given its URL; it
// must close its connections), for NewDatabaseFrom to copy: a suite whose
// every test starts from the same schema migrates it once. drop removes
// it; call it when the suite ends (TestMain).
func NewTemplate(prepare func(url string) error) (name string, drop func() error, err error) {
	if err := Available(); err != nil {
		return "", nil, err
	}
	if name, err = randomName("foya_template_"); err != nil {
		return "", nil, err
	}
	admin, err := sql.Open("pgx", ServerURL())
	if err != nil {
		return "", nil, err
	}
	drop = func() error {
		defer admin.Close()
		return dropDatabase(admin, name)
	}
	if _, err := admin.ExecContext(context.Background(), "CREATE DATABASE "+name); err != nil {
		admin.Close()
		return "", nil, fmt.Errorf("create template database %s: %w", name, err)
	}
	if err := prepare(WithDatabase(ServerURL(), name)); err != nil {
		return "", nil, errors.Join(fmt.Errorf("prepare template database %s: %w", name, err), drop())
	}
	return name, drop, nil
}

// dropDatabase drops the database name, with any connections left to it.
func dropDatabase(admin *sql.DB, name string) error {
	_, err := admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	return err
}

// randomName is prefix and 12 random hexadecimal digits.
func randomName(prefix string) (string, error) {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return prefix + hex.EncodeToString(b[:]), nil
}

// WithDatabase returns the URL u with its database replaced by name.
func WithDatabase(u, name string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	p.Path = "/" + name
	return p.String()
}

func redact(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(unparsable URL)"
	}
	return p.Redacted()
}
